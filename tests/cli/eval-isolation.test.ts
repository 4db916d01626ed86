import { readdir } from 'node:fs/promises';
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
});
