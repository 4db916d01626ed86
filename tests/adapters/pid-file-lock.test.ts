import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { withPidFileLock } from '../../src/adapters/pid-file-lock.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'maestro-lock-'));
  dirs.push(dir);
  return dir;
}

describe('withPidFileLock', () => {
  it('runs overlapping sections one at a time', async () => {
    const lock = path.join(await tempDir(), 'x.lock');
    const log: string[] = [];
    // Distinct pids, as if these were different processes; all of them are "alive".
    const section = (pid: number) =>
      withPidFileLock(
        lock,
        async () => {
          log.push(`in ${pid}`);
          await new Promise((r) => setTimeout(r, 5));
          log.push(`out ${pid}`);
        },
        { pid, probe: () => true },
      );
    await Promise.all([1, 2, 3, 4].map(section));
    for (let i = 0; i < log.length; i += 2) expect(log[i + 1]).toBe(log[i]!.replace('in', 'out'));
    expect(log).toHaveLength(8);
  });

  it('takes over a lock whose holder is gone, and cleans up after itself', async () => {
    const dir = await tempDir();
    const lock = path.join(dir, 'x.lock');
    await writeFile(lock, '999999\n');
    const result = await withPidFileLock(lock, async () => 'done', { pid: 5, probe: (pid) => pid !== 999999 });
    expect(result).toBe('done');
    expect(await readdir(dir)).toEqual([]);
  });

  it('gives up with a StorageError when a live holder keeps it', async () => {
    const lock = path.join(await tempDir(), 'x.lock');
    await writeFile(lock, '4242\n');
    await expect(withPidFileLock(lock, async () => 'never', { pid: 5, probe: () => true, timeoutMs: 50 })).rejects.toMatchObject({ name: 'StorageError' });
  });
});
