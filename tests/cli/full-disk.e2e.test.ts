import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, open, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../fakes/cli.js';
import { collectAuditLogs, REPO_ROOT } from '../fakes/fixtures.js';

const exec = promisify(execFile);

// Issue 9 item 2 on a real full file system: a small tmpfs, which only root can mount. Elsewhere the
// injected-fault tests (tests/adapters/atomic-file.test.ts) cover the same promise.
let mount: string | undefined;
let skipReason = '';
let base: string;

beforeAll(async () => {
  base = await mkdtemp(path.join(os.tmpdir(), 'maestro-full-disk-'));
  if (process.getuid?.() !== 0) {
    skipReason = 'not running as root, so no tmpfs can be mounted';
    return;
  }
  const dir = path.join(base, 'mnt');
  await mkdir(dir);
  try {
    await exec('mount', ['-t', 'tmpfs', '-o', 'size=3m', 'tmpfs', dir]);
    mount = dir;
  } catch (error) {
    skipReason = `mount -t tmpfs failed (${(error as Error).message.split('\n')[0]})`;
  }
});

afterAll(async () => {
  if (mount) {
    await collectAuditLogs(path.join(mount, 'ws')).catch(() => undefined);
    await exec('umount', ['-l', mount]).catch(() => undefined);
  }
  await rm(base, { recursive: true, force: true });
});

/** Fills the file system until a write fails, then frees `leave` bytes. */
async function fillDisk(dir: string, leave: number): Promise<string> {
  const filler = path.join(dir, 'filler.bin');
  const handle = await open(filler, 'w');
  const chunk = Buffer.alloc(16 * 1024, 1);
  let size = 0;
  try {
    for (;;) {
      const { bytesWritten } = await handle.write(chunk, 0, chunk.length, size);
      size += bytesWritten;
      if (bytesWritten < chunk.length) break;
    }
  } catch {
    // ENOSPC: full.
  } finally {
    await handle.truncate(Math.max(0, size - leave));
    await handle.close();
  }
  return filler;
}

const snapshot = async (dir: string): Promise<Record<string, string>> => {
  const out: Record<string, string> = {};
  for (const name of await readdir(dir)) if (name.endsWith('.json')) out[name] = await readFile(path.join(dir, name), 'utf8');
  return out;
};

describe('a full disk never truncates what is kept', () => {
  it("ends the run loudly (STORAGE_WRITE_FAILED, ENOSPC, exit 1, one JSON object) and keeps the council's memory whole", async (ctx) => {
    if (!mount) {
      console.log(`full-disk test skipped: ${skipReason}`);
      ctx.skip();
      return;
    }
    const ws = path.join(mount, 'ws');
    await mkdir(ws);
    await cp(path.join(REPO_ROOT, 'personas'), path.join(ws, 'personas'), { recursive: true });
    await cp(path.join(REPO_ROOT, 'examples'), path.join(ws, 'examples'), { recursive: true });
    const first = await runCli(['run', 'examples/review-migration.json', '--json'], { cwd: ws });
    expect(first.code).toBe(0);
    const memory = await snapshot(path.join(ws, 'session_states'));
    expect(Object.keys(memory).length).toBe(3);
    const artifact = await readFile(path.join(ws, 'outputs', 'migration-review.md'), 'utf8');

    // Room for a few small writes, not for a checkpoint or a session state.
    const filler = await fillDisk(mount, 6 * 1024);
    const second = await runCli(['run', 'examples/review-migration.json', '--json'], { cwd: ws });
    expect(second.code).toBe(1);
    const lines = second.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    const outcome = JSON.parse(lines[0] as string);
    expect(outcome).toMatchObject({ status: 'error', reason_code: 'STORAGE_WRITE_FAILED' });
    expect(second.stderr).toContain('ENOSPC');

    // What was kept is whole: the same bytes, still valid JSON; no temporary files left behind.
    expect(await snapshot(path.join(ws, 'session_states'))).toEqual(memory);
    for (const text of Object.values(memory)) expect(() => JSON.parse(text)).not.toThrow();
    expect(await readFile(path.join(ws, 'outputs', 'migration-review.md'), 'utf8')).toBe(artifact);
    expect((await readdir(path.join(ws, 'session_states'))).filter((n) => n.endsWith('.tmp') || n.includes('corrupt'))).toEqual([]);

    // Once there is room again, the council remembers the first run.
    await rm(filler);
    const third = await runCli(['run', 'examples/review-migration.json', '--json'], { cwd: ws });
    expect(third.code).toBe(0);
    const auditor = JSON.parse(await readFile(path.join(ws, 'session_states', 'auditor_session.json'), 'utf8'));
    expect(JSON.stringify(auditor)).toContain(JSON.parse(first.stdout).run_id);
  }, 60_000);
});
