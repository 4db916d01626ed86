import { access, readFile, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../fakes/cli.js';
import { tempWorkspace } from '../fakes/fixtures.js';

// Issue 9 item 9: checkpoints of ended runs fall under the audit retention; paused runs are kept.
let ws: Awaited<ReturnType<typeof tempWorkspace>>;
const maestro = (...args: string[]) => runCli(args, { cwd: ws.dir });
beforeEach(async () => {
  ws = await tempWorkspace();
});
afterEach(() => ws.cleanup());

const exists = (p: string) =>
  access(p).then(
    () => true,
    () => false,
  );

/** Makes a run look as if it ended (or paused) `days` ago: its checkpoint's times and its audit files' mtimes. */
async function age(runId: string, days: number): Promise<void> {
  const when = new Date(Date.now() - days * 86_400_000);
  const file = path.join(ws.dir, '.maestro', 'runs', runId, 'state.json');
  const state = JSON.parse(await readFile(file, 'utf8'));
  await writeFile(
    file,
    JSON.stringify({ ...state, updated_at: when.toISOString(), ...(state.finished_at ? { finished_at: when.toISOString() } : {}) }),
  );
  for (const ext of ['jsonl', 'head']) await utimes(path.join(ws.dir, '.maestro', 'audit', `${runId}.${ext}`), when, when);
}

describe('maestro audit prune and checkpoints', () => {
  it('deletes the checkpoints of ended runs past retention, keeps paused runs (checkpoint and log) and recent ones', async () => {
    const old = JSON.parse((await maestro('run', 'examples/review-migration.json', '--json')).stdout).run_id as string;
    await writeFile(
      path.join(ws.dir, 'doubt.json'),
      JSON.stringify({ task_description: 'The requirements are unclear: decide the vendor', config: { max_rounds: 1 } }),
    );
    const paused = JSON.parse((await maestro('run', 'doubt.json', '--json')).stdout).run_id as string;
    const recent = JSON.parse((await maestro('run', 'examples/review-migration.json', '--json')).stdout).run_id as string;
    await age(old, 60);
    await age(paused, 60);

    const dry = await maestro('audit', 'prune', '--dry-run');
    expect(dry.stdout).toContain(`would delete the checkpoints (.maestro/runs/) of 1 ended run(s)`);
    expect(await exists(path.join(ws.dir, '.maestro', 'runs', old))).toBe(true);

    const r = await maestro('audit', 'prune');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(old);
    expect(await exists(path.join(ws.dir, '.maestro', 'runs', old))).toBe(false);
    expect(await exists(path.join(ws.dir, '.maestro', 'audit', `${old}.jsonl`))).toBe(false);
    expect(await exists(path.join(ws.dir, '.maestro', 'runs', paused, 'state.json'))).toBe(true);
    expect(await exists(path.join(ws.dir, '.maestro', 'audit', `${paused}.jsonl`))).toBe(true);
    expect(await exists(path.join(ws.dir, '.maestro', 'runs', recent, 'state.json'))).toBe(true);
    // The paused run can still be decided.
    expect((await maestro('hitl', 'decide', paused, 'stop')).code).toBe(4);
  });
});
