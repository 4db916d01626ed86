import { link, readFile, unlink, writeFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { StorageError } from '../domain/errors.js';
import { ignoreMissing, probeProcess, type ProcessProbe } from './fs-watcher-registry.js';

export interface PidFileLockOptions {
  /** Give up (StorageError) when a live process holds the lock this long. */
  readonly timeoutMs?: number;
  readonly probe?: ProcessProbe;
  readonly pid?: number;
}

/**
 * Runs `fn` while holding `<lockFile>` (created complete with link(), so it always names its
 * holder). Meant for short read-modify-write sections shared by several processes. A lock whose
 * holder is gone (a crash inside the section) is removed and taken.
 */
export async function withPidFileLock<T>(lockFile: string, fn: () => Promise<T>, options: PidFileLockOptions = {}): Promise<T> {
  const pid = options.pid ?? process.pid;
  const probe = options.probe ?? probeProcess;
  const deadline = Date.now() + (options.timeoutMs ?? 10_000);
  const temp = `${lockFile}.${pid}.tmp`;
  await writeFile(temp, `${pid}\n`, { mode: 0o600 });
  try {
    for (let wait = 2; ; wait = Math.min(wait * 2, 50)) {
      try {
        await link(temp, lockFile);
        break;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      const holder = Number.parseInt(await readFile(lockFile, 'utf8').catch(() => ''), 10);
      if (Number.isInteger(holder) && holder !== pid && !probe(holder)) {
        await unlink(lockFile).catch(ignoreMissing);
        continue;
      }
      if (Date.now() > deadline) throw new StorageError(`${lockFile} is held by process ${holder}; gave up waiting`, lockFile);
      await sleep(wait);
    }
  } finally {
    await unlink(temp).catch(ignoreMissing);
  }
  try {
    return await fn();
  } finally {
    await unlink(lockFile).catch(ignoreMissing);
  }
}
