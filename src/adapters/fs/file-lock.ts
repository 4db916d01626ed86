import * as nodeFs from 'node:fs';
import { lstat, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { StorageError } from '../../domain/errors.js';

/**
 * A lock not refreshed for this long is stale: its holder died and another process may take it
 * (proper-lockfile's default). A live holder refreshes it every half of this, however long it holds it.
 */
const DEFAULT_STALE_MS = 10_000;
/** proper-lockfile's floor: a shorter stale time is raised to this. */
const MIN_STALE_MS = 2_000;

export interface FileLockOptions {
  /** See DEFAULT_STALE_MS (at least 2 s). */
  readonly staleMs?: number;
  /** How long to wait while another process holds the lock (default 60 s; 0: do not wait). */
  readonly waitMs?: number;
}

/** What the holder of a lock can ask of it. */
export interface HeldLock {
  /** Aborted when the lock is lost (not refreshed in time, or taken over): stop writing. */
  readonly signal: AbortSignal;
  /** Throws a StorageError when this process no longer holds the lock: call it before each write. */
  assertHeld(): Promise<void>;
}

/** Another live process holds the lock, and did not let go within the wait. */
export class FileLockBusyError extends StorageError {
  constructor(lockPath: string, waitedMs: number) {
    const waited = waitedMs > 0 ? ` within ${Math.round(waitedMs / 1000)} s` : '';
    super(`could not lock ${lockPath}${waited}: another maestro process holds it`, lockPath, { errno: 'ELOCKED' });
  }
}

type Lockfile = typeof import('proper-lockfile');

/** Loaded on first use: most subcommands never lock, and the library hooks process signals when loaded. */
let library: Promise<Lockfile> | undefined;
function loadLibrary(): Promise<Lockfile> {
  library ??= import('proper-lockfile').then((m) => (m.default ?? m) as Lockfile);
  return library;
}

/** The modification time the library last gave a lock's folder (through its `fs` option). */
interface LockMark {
  mtimeMs: number | undefined;
}

/**
 * node's fs for the library (its `fs` option), noting the time each refresh of the lock sets on its
 * folder: while the folder still has it, the lock is this holder's.
 */
function markingFs(mark: LockMark): typeof nodeFs {
  return {
    ...nodeFs,
    utimes: ((file: nodeFs.PathLike, atime: Date, mtime: Date, done: nodeFs.NoParamCallback) =>
      nodeFs.utimes(file, atime, mtime, (error) => {
        if (!error) mark.mtimeMs = mtime.getTime();
        done(error);
      })) as typeof nodeFs.utimes,
  };
}

/**
 * Runs `fn` while holding an exclusive lock at `lockPath` (a folder made by proper-lockfile: created
 * atomically, refreshed while held, stale once its holder stops refreshing it). A holder that loses
 * its lock (its process stalled past the stale time and another took over) is told through `held`;
 * whatever `fn` returns then, this throws a StorageError, so the caller never reports a write made
 * without the lock as done.
 */
export async function withFileLock<T>(lockPath: string, fn: (held: HeldLock) => Promise<T>, options: FileLockOptions = {}): Promise<T> {
  const lockfile = await loadLibrary();
  const staleMs = Math.max(options.staleMs ?? DEFAULT_STALE_MS, MIN_STALE_MS);
  const waitMs = Math.max(options.waitMs ?? 60_000, 0);
  const controller = new AbortController();
  const key = path.resolve(lockPath);
  await removeLegacyLock(lockPath, staleMs);
  const mark: LockMark = { mtimeMs: undefined };
  let release: () => Promise<void>;
  try {
    release = await lockfile.lock(key, {
      lockfilePath: key,
      realpath: false,
      fs: markingFs(mark),
      stale: staleMs,
      retries: waitMs > 0 ? { forever: true, maxRetryTime: waitMs, minTimeout: 10, maxTimeout: 250, factor: 1.5, randomize: true } : 0,
      onCompromised: (error) => controller.abort(error),
    });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ELOCKED') throw new FileLockBusyError(lockPath, waitMs);
    throw new StorageError(`could not lock ${lockPath}: ${(error as Error).message}`, lockPath, { cause: error });
  }
  // The folder's time as the library made it (its first refresh comes half the stale time later).
  mark.mtimeMs = (await stat(key).catch(() => undefined))?.mtime.getTime();
  const held: HeldLock = { signal: controller.signal, assertHeld: () => assertHeld(key, controller.signal, mark) };
  const outcome = await fn(held).then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );
  // A lock another process took over is theirs now: removing it would let a third one in.
  const ours = await held.assertHeld().then(
    () => true,
    () => false,
  );
  if (ours) await release().catch(() => undefined);
  // Thrown even when `fn` succeeded: what it wrote may have raced with the new holder.
  if (!ours) throw lostLock(key, controller.signal.reason ?? 'another process took it over');
  if (!outcome.ok) throw outcome.error;
  return outcome.value;
}

/** Whether a live process holds the lock at `lockPath` now (it exists and was refreshed within the stale time). */
export async function isFileLockHeld(lockPath: string, options: { staleMs?: number } = {}): Promise<boolean> {
  const lockfile = await loadLibrary();
  const key = path.resolve(lockPath);
  return lockfile.check(key, { lockfilePath: key, realpath: false, stale: Math.max(options.staleMs ?? DEFAULT_STALE_MS, MIN_STALE_MS) });
}

/**
 * Whether this process still holds the lock: not reported lost by the library, and the folder on disk
 * is the one it refreshes (the time it last set). A refresh in flight can show a newer time for a
 * moment, so a mismatch is looked at once more before it counts.
 */
async function assertHeld(key: string, signal: AbortSignal, mark: LockMark): Promise<void> {
  for (let look = 0; ; look++) {
    if (signal.aborted) throw lostLock(key, signal.reason);
    const info = await stat(key).catch(() => undefined);
    if (info && info.mtime.getTime() === mark.mtimeMs) return;
    if (look > 0) throw lostLock(key, info ? 'another process took it over' : 'its folder is gone');
    await sleep(25);
  }
}

function lostLock(key: string, reason: unknown): StorageError {
  const why = reason instanceof Error ? reason.message : String(reason ?? 'unknown');
  const message = `lost the lock ${key} while holding it (${why}): nothing more was written under it`;
  return new StorageError(message, key, { errno: 'ECOMPROMISED' });
}

/**
 * Earlier versions locked with a plain file at the same path. One left by a crash would block
 * proper-lockfile (which locks with a folder) forever: once stale, it is removed.
 */
async function removeLegacyLock(lockPath: string, staleMs: number): Promise<void> {
  const info = await lstat(lockPath).catch(() => undefined);
  if (!info?.isFile()) return;
  const age = Date.now() - info.mtimeMs;
  if (age < staleMs) await sleep(staleMs - age);
  await rm(lockPath, { force: true });
}
