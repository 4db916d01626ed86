import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, stat, writeFile, utimes } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileLockBusyError, isFileLockHeld, withFileLock } from '../../../src/adapters/fs/file-lock.js';
import { StorageError } from '../../../src/domain/errors.js';
import { stallUntilFile } from '../../helpers/stall.js';

// Issue 23, point 3b: the lock is proper-lockfile's (refreshed while held, stale by mtime). These
// tests use real processes: a lock only matters between processes.
const HOLDER = path.resolve(import.meta.dirname, '..', '..', 'helpers', 'lock-holder.mjs');
const STALE_MS = 2_000;

let dir: string;
const children: ChildProcess[] = [];
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'maestro-lock-'));
});
afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await rm(dir, { recursive: true, force: true });
});

/** Starts a lock holder; resolves once it says it holds the lock. */
async function startHolder(
  lockPath: string,
  holdMs: number,
  heldFile?: string,
): Promise<{ child: ChildProcess; output: () => string; exited: Promise<number | null> }> {
  const args = [HOLDER, lockPath, String(STALE_MS), String(holdMs), ...(heldFile ? [heldFile] : [])];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  let out = '';
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('held\n')) resolve();
    });
    child.on('close', () => reject(new Error(`the holder exited before holding the lock: ${out}`)));
  });
  return { child, output: () => out, exited };
}

describe('withFileLock (proper-lockfile) between processes', () => {
  it('a holder killed with SIGKILL while holding the lock is taken over once the lock is stale, not before', async () => {
    const lockPath = path.join(dir, 'memory.lock');
    const holder = await startHolder(lockPath, 60_000);
    holder.child.kill('SIGKILL');
    await holder.exited;
    // Its pid is gone, but the lock is not stale yet: nobody may take it at once.
    await expect(withFileLock(lockPath, async () => 'taken', { staleMs: STALE_MS, waitMs: 0 })).rejects.toThrow(FileLockBusyError);
    expect(await isFileLockHeld(lockPath, { staleMs: STALE_MS })).toBe(true);
    const started = Date.now();
    await expect(withFileLock(lockPath, async () => 'taken', { staleMs: STALE_MS, waitMs: 10_000 })).resolves.toBe('taken');
    expect(Date.now() - started).toBeLessThan(STALE_MS + 1_500);
    expect(await isFileLockHeld(lockPath, { staleMs: STALE_MS })).toBe(false);
  });

  it('a slow live holder keeps its lock far past the stale time; others wait, then get it', async () => {
    const lockPath = path.join(dir, 'memory.lock');
    // The waiter gives up a full refresh period (stale / 2) past the stale time: a lock that was not
    // refreshed would be stale by then, and taken (retries are at most 250 ms apart).
    const waitMs = STALE_MS + STALE_MS / 2;
    const holdMs = waitMs + 500;
    const holder = await startHolder(lockPath, holdMs);
    const started = Date.now();
    // Waiting longer than the stale time does not take a lock that is being refreshed.
    await expect(withFileLock(lockPath, async () => 'taken', { staleMs: STALE_MS, waitMs })).rejects.toThrow(FileLockBusyError);
    const after = await withFileLock(lockPath, async () => Date.now(), { staleMs: STALE_MS, waitMs: 3 * holdMs });
    expect(await holder.exited).toBe(0);
    expect(holder.output()).toContain('still held');
    expect(after - started).toBeGreaterThanOrEqual(holdMs - 500);
  });

  it('a holder whose lock was taken over (it stalled past the stale time) fails with a StorageError and leaves the new lock alone', async () => {
    const lockPath = path.join(dir, 'memory.lock');
    const taken = path.join(dir, 'contender-holds');
    let contender: Awaited<ReturnType<typeof startHolder>> | undefined;
    const attempt = withFileLock(
      lockPath,
      async (held) => {
        const taking = startHolder(lockPath, 60_000, taken);
        // This process stalls (a blocked event loop): it cannot refresh its lock, and the contender
        // takes it once stale. The stall lasts until then (at most 20 s on a loaded machine).
        expect(stallUntilFile(taken, STALE_MS + 18_000)).toBe(true);
        contender = await taking;
        await held.assertHeld();
        return 'wrote';
      },
      { staleMs: STALE_MS, waitMs: 0 },
    );
    await expect(attempt).rejects.toThrow(StorageError);
    await expect(attempt).rejects.toThrow(/lost the lock/);
    // The new holder's lock is still there and still its own.
    expect(await isFileLockHeld(lockPath, { staleMs: STALE_MS })).toBe(true);
    expect(contender!.output()).not.toContain('lost');
    await expect(withFileLock(lockPath, async () => 'taken', { staleMs: STALE_MS, waitMs: 0 })).rejects.toThrow(FileLockBusyError);
  });

  it('a lock file left by an earlier version (a plain file) is removed once stale instead of blocking forever', async () => {
    const lockPath = path.join(dir, 'memory.lock');
    await writeFile(lockPath, '12345');
    const old = new Date(Date.now() - 60_000);
    await utimes(lockPath, old, old);
    await expect(withFileLock(lockPath, async () => (await stat(lockPath)).isDirectory(), { staleMs: STALE_MS, waitMs: 0 })).resolves.toBe(
      true,
    );
    await expect(stat(lockPath)).rejects.toThrow(/ENOENT/);
  });
});
