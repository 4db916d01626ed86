import { readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../fakes/cli.js';
import { tempWorkspace } from '../fakes/fixtures.js';

// `maestro eval` measures in a scratch workspace of its own: whatever engine the environment names,
// its council runs never reach the workspace's engine (its runs, memory and loop policy).
let ws: Awaited<ReturnType<typeof tempWorkspace>>;
beforeEach(async () => {
  ws = await tempWorkspace();
});
afterEach(async () => {
  await ws.cleanup();
});

const listed = (dir: string): Promise<string[]> => readdir(dir).catch(() => []);

describe('maestro eval and the workspace engine', () => {
  it('runs offline in its scratch workspace even when MAESTRO_ENGINE_URL names an engine (never connects to it)', async () => {
    // A port nobody listens on: any connection attempt fails the eval.
    const env = { MAESTRO_ENGINE_URL: 'postgres://maestro:pw@127.0.0.1:1/maestro' };
    const args = ['eval', '--set', 'arithmetic', '--items', '2', '--modes', 'round_robin', '--rounds', '1', '--json'];
    const r = await runCli(args, { cwd: ws.dir, env, timeoutMs: 60_000 });
    expect(r.stderr).not.toContain('unreachable');
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout) as { items_scored: number; rehearsal: boolean };
    expect(report.items_scored).toBe(2);
    expect(report.rehearsal).toBe(true);
    // The council's runs stayed in the eval's scratch folder, not the workspace's.
    expect(await listed(path.join(ws.dir, '.maestro', 'runs'))).toEqual([]);
    const evals = await listed(path.join(ws.dir, '.maestro', 'eval'));
    expect(evals).toHaveLength(1);
    expect((await listed(path.join(ws.dir, '.maestro', 'eval', evals[0] ?? '', 'scratch', '.maestro', 'runs'))).length).toBeGreaterThan(0);
  });

  it('refuses a question set holding a secret or an e-mail before any call, naming the lines, never the values', async () => {
    // The single-call and voting arms send a question to the model as it is: no ethics gate screens them.
    const lines = [
      { question: 'What is 2+3?', answer: '5' },
      { question: 'What is 4+4? Use key sk-proj-ABCDEFGHIJKLMNOPQRSTUVWX1234567890', answer: '8' },
      { question: 'What is 1+1? Ask dora.q@example.org', answer: '2', id: 'three' },
      { question: 'What is 3+3? Write to erin.w@example.com', answer: '6' },
    ];
    await writeFile(path.join(ws.dir, 'set.jsonl'), `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`);
    const r = await runCli(['eval', '--set', 'set.jsonl', '--modes', 'none'], { cwd: ws.dir, timeoutMs: 60_000 });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/line 2: .*secret/);
    expect(r.stderr).toMatch(/line 3: .*personal/);
    expect(r.stderr).toMatch(/line 4: .*personal/);
    expect(r.stderr).not.toMatch(/line 1:/);
    expect(`${r.stdout}${r.stderr}`).not.toMatch(/sk-proj-ABC|dora\.q@|erin\.w@/);
    expect(await listed(path.join(ws.dir, '.maestro', 'eval'))).toEqual([]);
  });
});
