import { closeSync, fdatasync, fstatSync, fsync, mkdirSync, openSync, readSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { copyFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { ARTIFACT_HEADING } from '../../domain/artifact.js';
import { type ArtifactPlacement, artifactBase, artifactPathBeside, artifactRunId, describeOwner } from '../../domain/artifact-place.js';
import type { ArtifactWriter, OutputPathCheck } from '../../domain/ports.js';
import path from 'node:path';
import { StorageError } from '../../domain/errors.js';
import { type DurableFs, type DurableHandle, syncDirectory, writeFileAtomically } from './atomic-file.js';
import { checkOutputPath } from './knowledge-base.js';

/**
 * Writes artifacts inside the workspace only, atomically, where `place` put them: never over an
 * earlier run's artifact or any other file (artifact-place.ts). Should a file appear at a placed path
 * between the placement and the write (a person, a restart days later), it is copied aside first.
 */
export class FsArtifactWriter implements ArtifactWriter {
  constructor(
    private readonly root: string,
    private readonly now: () => Date = () => new Date(),
  ) {}

  check(relativePath: string, protect: readonly string[] = []): Promise<OutputPathCheck> {
    return checkOutputPath(this.root, relativePath, protect);
  }

  async place(relativePath: string, runId: string, suffixes: readonly string[] = []): Promise<ArtifactPlacement> {
    const checked = await this.check(relativePath);
    if (!checked.ok) return { path: relativePath };
    const requested = checked.relative;
    const owner = ownerOf(checked.absolute);
    if (owner === runId) return { path: requested };
    const base = artifactBase(requested);
    const beside = suffixes.map((s) => `${base}${s}`).find((p) => ownerOf(path.join(this.root, p)) !== FREE);
    if (owner === FREE && beside === undefined) return { path: requested };
    const taken = owner === FREE ? { path: beside as string, by: 'a file already there' } : { path: requested, by: describeOwner(owner) };
    return { path: artifactPathBeside(requested, runId), taken };
  }

  async write(relativePath: string, content: string, protect: readonly string[] = []): Promise<string> {
    return this.#write(relativePath, content, protect);
  }

  /**
   * The artifact renamed into place unflushed, and its flush (the file's data, then its folder) to
   * await later: a run's slot is freed as soon as its artifact can be read, and its two fsyncs happen
   * beside the next run's first call instead of before it. The run's `finished` commit waits for the
   * flush: a power loss before it leaves a run that completes its ending again, writing the same bytes.
   * The flush goes through the descriptor the file was written with: by then a reader (a tool taking
   * each new file out of outputs/) may have moved the file away, and that must not fail the run.
   */
  async writeUnflushed(
    relativePath: string,
    content: string,
    protect: readonly string[] = [],
  ): Promise<{ path: string; flush: () => Promise<void> }> {
    let kept: number | undefined;
    try {
      const file = await this.#write(
        relativePath,
        content,
        protect,
        keepingFs((fd) => (kept = fd)),
      );
      const fd = kept;
      return { path: file, flush: () => flushWritten(file, fd) };
    } catch (error) {
      if (kept !== undefined) closeSync(kept);
      throw error;
    }
  }

  /** `unflushed`: the calls of a write left unflushed (keepingFs); durable otherwise. */
  async #write(relativePath: string, content: string, protect: readonly string[], unflushed?: DurableFs): Promise<string> {
    // Checked again at write time: the folder may have changed since the gates ran. The file is
    // written into the folder's real path, which the check has just resolved and approved.
    const checked = await this.check(relativePath, protect);
    if (!checked.ok) throw new Error(`refusing to write the artifact at "${relativePath}": ${checked.reason}`);
    const data = Buffer.from(content, 'utf8');
    const existing = existingFile(checked.absolute, data.length);
    // Written already, byte for byte (a run completing after a crash): left as it is.
    if (existing?.equals(data)) return checked.absolute;
    if (existing && isForeign(existing)) {
      // A person's file, of any size: copied off the event loop (this happens once, by mistake).
      await copyFile(checked.absolute, `${checked.absolute}.${this.now().toISOString().replace(/[:.]/g, '-')}.bak`);
    }
    await writeFileAtomically(checked.absolute, data, unflushed ? { fs: unflushed, durable: false } : { fs: eventLoopFs });
    return checked.absolute;
  }
}

/**
 * Makes a file renamed into place unflushed durable: its data (through `kept`, the descriptor it was
 * written with, which it closes; or, for a file found already written, opened again), then its name (the folder).
 */
async function flushWritten(file: string, kept: number | undefined): Promise<void> {
  try {
    const fd = kept ?? openIfThere(file);
    if (fd !== undefined) {
      try {
        await fdatasyncFd(fd);
      } finally {
        closeSync(fd);
      }
    }
  } catch (error) {
    throw new StorageError(`could not flush ${file}: ${(error as Error).message}`, file, {
      cause: error,
      ...((error as NodeJS.ErrnoException).code ? { errno: (error as NodeJS.ErrnoException).code } : {}),
    });
  }
  await syncDirectory(path.dirname(file), eventLoopFs);
}

/** A descriptor on `file`, or none when it is gone (a reader took the artifact away: what it holds is theirs). */
function openIfThere(file: string): number | undefined {
  try {
    return openSync(file, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/**
 * What is at `file` already, read synchronously (microseconds: an artifact is a few kilobytes, and a
 * file of another size is read no further than its first line): nothing, or its bytes when it has the
 * new content's size, or its start (enough to tell a maestro artifact from a person's file).
 */
function existingFile(file: string, size: number): Buffer | undefined {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return undefined;
  }
  try {
    const length = fstatSync(fd).size === size ? size : ARTIFACT_HEADING.length;
    const buffer = Buffer.alloc(length);
    let read = 0;
    for (let n = -1; read < length && n !== 0; read += n) n = readSync(fd, buffer, read, length - read, read);
    return buffer.subarray(0, read);
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

const FREE = Symbol('free');

/** Who holds `file`: nobody (FREE), the run whose maestro artifact it is, or a file of anyone else (undefined). */
function ownerOf(file: string): typeof FREE | string | undefined {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? FREE : undefined;
  }
  try {
    // The run id is in the run table, after the task (at most 20,000 characters): 64 KiB reaches it.
    const buffer = Buffer.alloc(65_536);
    const read = readSync(fd, buffer, 0, buffer.length, 0);
    return artifactRunId(buffer.subarray(0, read).toString('utf8'));
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/** A non-empty file that does not start like a maestro artifact. */
function isForeign(start: Buffer): boolean {
  const head = start.subarray(0, ARTIFACT_HEADING.length);
  return head.length > 0 && head.toString('utf8') !== ARTIFACT_HEADING;
}

const fsyncFd = promisify(fsync);
const fdatasyncFd = promisify(fdatasync);

/** A descriptor written synchronously, flushed on the thread pool; `close` is what closing it does. */
function eventLoopHandle(fd: number, close: (fd: number) => void = closeSync): DurableHandle {
  return {
    write: async (buffer, offset, length, position) => ({ bytesWritten: writeSync(fd, buffer, offset, length, position) }),
    sync: () => fsyncFd(fd),
    datasync: () => fdatasyncFd(fd),
    close: async () => close(fd),
  };
}

/** `eventLoopFs` whose written file's descriptor is handed to `keep` instead of closed (for its flush later). */
function keepingFs(keep: (fd: number) => void): DurableFs {
  return { ...eventLoopFs, open: async (file, flags, mode) => eventLoopHandle(openSync(file, flags, mode), keep) };
}

/**
 * The atomic write's calls, on the event loop, but for the flushes (the file's, the folder's): a
 * mkdir, an open, a write of a few kilobytes, a close and a rename each take microseconds, while a
 * trip through libuv's thread pool and back, at the run's end, waits for a core (a picture may be
 * drawn meanwhile, the next run is starting): measured, ~10 trips made the artifact's write 3–5 times
 * slower. An fsync takes milliseconds on a real disk and would hold up every run in the process
 * (`--concurrency`), so it stays off the event loop. One object: the folder syncs of artifacts and
 * pictures written into one folder at once are shared (atomic-file.ts, groupSync).
 */
const eventLoopFs: DurableFs = {
  open: async (file, flags, mode) => eventLoopHandle(openSync(file, flags, mode)),
  rename: async (from, to) => renameSync(from, to),
  unlink: async (file) => unlinkSync(file),
  mkdir: async (dir, options) => mkdirSync(dir, options),
};
