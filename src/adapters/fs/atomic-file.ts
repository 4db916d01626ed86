import { randomBytes } from 'node:crypto';
import * as nodeFs from 'node:fs/promises';
import path from 'node:path';
import { StorageError } from '../../domain/errors.js';

/**
 * The few file-system calls a durable write makes (an atomic replace, and the appends of the
 * checkpoint journal and the audit log), so tests can inject short writes, ENOSPC and EIO. The
 * default is `node:fs/promises`.
 */
export interface DurableFs {
  open(file: string, flags: string, mode?: number): Promise<DurableHandle>;
  rename(from: string, to: string): Promise<void>;
  unlink(file: string): Promise<void>;
  mkdir(dir: string, options: { recursive: true; mode?: number }): Promise<unknown>;
}

export interface DurableHandle {
  write(buffer: Uint8Array, offset: number, length: number, position: number | null): Promise<{ bytesWritten: number }>;
  sync(): Promise<void>;
  /** Flushes the data (and the size), not the timestamps; `sync` where it is missing. */
  datasync?(): Promise<void>;
  truncate?(length: number): Promise<void>;
  close(): Promise<void>;
}

export const realFs: DurableFs = {
  open: (file, flags, mode) => nodeFs.open(file, flags, mode),
  rename: (from, to) => nodeFs.rename(from, to),
  unlink: (file) => nodeFs.unlink(file),
  mkdir: (dir, options) => nodeFs.mkdir(dir, options),
};

/** Flushes the handle's data (its size with it), or everything where the handle cannot flush only its data. */
export function flushData(handle: DurableHandle): Promise<void> {
  return handle.datasync ? handle.datasync() : handle.sync();
}

/**
 * Writes every byte of `data` at the handle's `position` (or its end), looping over short writes: a
 * `write` may take fewer bytes than asked (a nearly full disk does exactly that), and a write that
 * takes none is an error, never a silent truncation.
 */
export async function writeFully(handle: DurableHandle, data: Uint8Array, position: number | null = null): Promise<void> {
  let offset = 0;
  while (offset < data.length) {
    const { bytesWritten } = await handle.write(data, offset, data.length - offset, position === null ? null : position + offset);
    if (!(bytesWritten > 0))
      throw Object.assign(new Error(`short write: ${offset} of ${data.length} bytes written, then none`), { code: 'ENOSPC' });
    offset += bytesWritten;
  }
}

/**
 * The temporary file of an atomic write of `file`: hidden, in the same folder (so the rename stays on
 * one file system), named by the writer's pid and 8 random hex digits (`token`) so that writers never
 * collide. A crash can leave one behind; the workspace's `.gitignore` keeps it out of git
 * (domain/runtime-files.ts).
 */
export function atomicTempPath(file: string, pid: number, token: string): string {
  return path.join(path.dirname(file), `.${path.basename(file)}.${pid}.${token}.tmp`);
}

/**
 * Writes a file so that a crash, a short write, ENOSPC or EIO leaves either the old content or the
 * new, never a cut one: a temporary file in the same folder, every byte written and checked, fsync,
 * rename over the old one, fsync of the folder. A failure removes the temporary file, leaves the old
 * copy as it was, and throws a `StorageError` naming the path and the errno.
 *
 * Unlike write-file-atomic 7 (one unchecked `write`, and it follows a symlink at the target), this
 * replaces the path itself.
 */
export async function writeFileAtomically(file: string, content: string | Uint8Array, options: AtomicWriteOptions = {}): Promise<void> {
  const fs = options.fs ?? realFs;
  const dir = path.dirname(file);
  const temp = atomicTempPath(file, process.pid, randomBytes(4).toString('hex'));
  const data = typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
  let handle: DurableHandle | undefined;
  try {
    await fs.mkdir(dir, { recursive: true });
    handle = await fs.open(temp, 'wx', options.mode ?? 0o644);
    await writeFully(handle, data, 0);
    if (options.durable !== false) await handle.sync();
    await handle.close();
    handle = undefined;
    await fs.rename(temp, file);
  } catch (error) {
    await handle?.close().catch(() => undefined);
    await fs.unlink(temp).catch(() => undefined);
    throw storageError(`could not write ${file}`, file, error);
  }
  if (options.syncDir !== false && options.durable !== false) await syncDirectory(dir, fs);
}

export interface AtomicWriteOptions {
  readonly mode?: number;
  readonly fs?: DurableFs;
  /** false: the caller syncs the folder after more changes to it. */
  readonly syncDir?: boolean;
  /**
   * false: whole for every reader (renamed into place), but not flushed to disk — for a file that
   * matters only while this process lives (a run's holder file: after a crash it names a process
   * that is gone, so losing it loses nothing). Default true.
   */
  readonly durable?: boolean;
}

export async function writeJsonAtomically(file: string, value: unknown, options: AtomicWriteOptions = {}): Promise<void> {
  await writeFileAtomically(file, `${JSON.stringify(value, null, 2)}\n`, options);
}

/**
 * Appends `text` to a file durably: every byte written and checked, then fsync. A failure throws a
 * `StorageError`; what a failed append left behind is at most a torn last line, which readers of
 * append-only files (the audit log, the archive) detect and cut.
 */
export async function appendDurably(file: string, text: string, options: { mode?: number; fs?: DurableFs } = {}): Promise<void> {
  const fs = options.fs ?? realFs;
  let handle: DurableHandle | undefined;
  try {
    handle = await fs.open(file, 'a', options.mode ?? 0o644);
    await writeFully(handle, Buffer.from(text, 'utf8'));
    await handle.sync();
  } catch (error) {
    throw storageError(`could not append to ${file}`, file, error);
  } finally {
    await handle?.close().catch(() => undefined);
  }
}

/** Makes a rename or a new file in `dir` durable (platforms that cannot fsync a folder are let be). */
export async function syncDirectory(dir: string, fs: DurableFs = realFs): Promise<void> {
  let handle: DurableHandle | undefined;
  try {
    handle = await fs.open(dir, 'r');
    await handle.sync();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'EISDIR' && code !== 'EINVAL' && code !== 'EPERM' && code !== 'ENOTSUP')
      throw storageError(`could not sync the folder ${dir}`, dir, error);
  } finally {
    await handle?.close().catch(() => undefined);
  }
}

/** A failure of a file operation as a StorageError naming the file (and its errno); a StorageError passes through. */
export function storageError(what: string, file: string, error: unknown): StorageError {
  if (error instanceof StorageError) return error;
  const code = (error as NodeJS.ErrnoException).code;
  return new StorageError(`${what}: ${(error as Error).message}`, file, { cause: error, ...(code ? { errno: code } : {}) });
}

/** Creates the private runtime folder (`.maestro/...`) with mode 0700. */
export async function ensurePrivateDir(dir: string): Promise<void> {
  try {
    await nodeFs.mkdir(dir, { recursive: true, mode: 0o700 });
  } catch (error) {
    throw storageError(`could not create ${dir}`, dir, error);
  }
}
