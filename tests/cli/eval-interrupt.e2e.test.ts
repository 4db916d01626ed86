import { spawn } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../fakes/cli.js';
import { CLI, tempWorkspace } from '../fakes/fixtures.js';

// Issue 28: a cancelled `maestro eval` goes on where it stopped.
let ws: Awaited<ReturnType<typeof tempWorkspace>>;
beforeEach(async () => {
  ws = await tempWorkspace();
});
afterEach(() => ws.cleanup());

const ARGS = ['eval', '--set', 'arithmetic', '--items', '8', '--route', 'offline', '--modes', 'parallel', '--concurrency', '1'];

describe('interrupting maestro eval', () => {
  it('keeps what finished on Ctrl-C (exit 130), and the same command finishes the rest without asking it again', async () => {
    const env = { ...process.env, MAESTRO_OFFLINE_DELAY_MS: '40', NO_COLOR: '1', MAESTRO_WORKSPACE: '' };
    const child = spawn(process.execPath, [CLI, ...ARGS], { cwd: ws.dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const end = Date.now() + 30_000;
    while (!/eval \[[#-]+\] [2-9]\/8/.test(out)) {
      if (Date.now() > end) throw new Error(`no progress:\n${out}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    expect(out).toContain('interrupted; the results so far are kept');

    const folder = path.join(ws.dir, '.maestro', 'eval', (await readdir(path.join(ws.dir, '.maestro', 'eval')))[0] as string);
    const kept = (await readFile(path.join(folder, 'results.jsonl'), 'utf8')).trim().split('\n');
    const keys = kept
      .map((l) => JSON.parse(l) as { item: string; kind: string; index?: number; mode?: string })
      .map((l) => `${l.item}/${l.kind}/${l.index ?? l.mode}`);
    expect(keys.length).toBeGreaterThan(0);
    expect(keys.length).toBeLessThan(8 * 5);

    const again = await runCli(ARGS, { cwd: ws.dir, timeoutMs: 60_000 });
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('8 of 8 items scored');
    const all = (await readFile(path.join(folder, 'results.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { item: string; kind: string; index?: number; mode?: string })
      .map((l) => `${l.item}/${l.kind}/${l.index ?? l.mode}`);
    // Nothing kept before the cancel was asked again: every result is in the file once.
    expect(new Set(all).size).toBe(all.length);
    expect(all.slice(0, keys.length)).toEqual(keys);
  }, 90_000);
});
