import { copyFile, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../fakes/cli.js';
import { tempWorkspace } from '../fakes/fixtures.js';

// Issue 9 item 4: a kill -9 between the artifact write and the run's last checkpoint. The checkpoint
// a kill leaves there is made by hand: the run as it ended, minus what its last save would have added.
let ws: Awaited<ReturnType<typeof tempWorkspace>>;
const maestro = (...args: string[]) => runCli(args, { cwd: ws.dir });
beforeEach(async () => {
  ws = await tempWorkspace();
});
afterEach(() => ws.cleanup());

const stateFile = (id: string) => path.join(ws.dir, '.maestro', 'runs', id, 'state.json');
const events = async (id: string) =>
  (await readFile(path.join(ws.dir, '.maestro', 'audit', `${id}.jsonl`), 'utf8'))
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l).event as string);

async function killedBeforeLastSave(id: string): Promise<void> {
  const {
    status: _s,
    decision: _d,
    finished_at: _f,
    summary: _m,
    artifact: _a,
    ...rest
  } = JSON.parse(await readFile(stateFile(id), 'utf8'));
  // The last save also appended the final decision to the trail.
  await writeFile(stateFile(id), JSON.stringify({ ...rest, trail: rest.trail.slice(0, -1), status: 'running' }));
}

describe('exactly once, to the last step', () => {
  it('a completed run killed after writing its artifact resumes into the same ending: same bytes, no model call', async () => {
    const r = await maestro('run', 'examples/review-migration.json', '--json');
    const { run_id: id, artifact } = JSON.parse(r.stdout);
    const bytes = await readFile(artifact, 'utf8');
    const memory = await readFile(path.join(ws.dir, 'session_states', 'auditor_session.json'), 'utf8');
    await killedBeforeLastSave(id);

    const again = await maestro('run', '--resume', id, '--json');
    expect(again.code).toBe(0);
    expect(await readFile(artifact, 'utf8')).toBe(bytes);
    expect(JSON.parse(await readFile(path.join(ws.dir, 'session_states', 'auditor_session.json'), 'utf8')).runs).toEqual(
      JSON.parse(memory).runs,
    );
    const all = await events(id);
    expect(all.filter((e) => e === 'MODEL_CALL')).toHaveLength(13);
    expect(all.filter((e) => e === 'GATE')).toHaveLength(7);
    // What the log already said happened is not said again.
    expect(all.filter((e) => e === 'ARTIFACT_WRITTEN')).toHaveLength(1);
    expect(all.filter((e) => e === 'RUN_FINISHED')).toHaveLength(1);
    expect(all.filter((e) => e === 'SESSIONS_SAVED')).toHaveLength(1);
    expect(JSON.parse(await readFile(stateFile(id), 'utf8')).status).toBe('completed');
  });

  it('a sealed stop killed in its ending stays a stop: nothing is deliberated', async () => {
    await writeFile(
      path.join(ws.dir, 'pii.json'),
      JSON.stringify({ task_description: 'Email the plan to jane.doe@example.com', config: { max_rounds: 1 } }),
    );
    const { run_id: id } = JSON.parse((await maestro('run', 'pii.json', '--json')).stdout);
    await killedBeforeLastSave(id);
    const again = await maestro('run', '--resume', id, '--json');
    expect(JSON.parse(again.stdout)).toMatchObject({ status: 'stopped', reason_code: 'ETHICS_PII_DETECTED' });
    expect((await events(id)).filter((e) => e === 'MODEL_CALL')).toHaveLength(0);
  });
});

describe('exactly once through the watcher', () => {
  const watchOnce = async () => {
    const r = await maestro('watch', '--once', '--json');
    expect(r.code).toBe(0);
    return r.stdout
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  };

  it('a command in flight whose checkpoint says it is finishing is completed once by the next start: same bytes, no model call, nothing said twice', async () => {
    await copyFile(path.join(ws.dir, 'examples', 'review-migration.json'), path.join(ws.dir, 'commands', 'review.json'));
    const first = (await watchOnce()).find((e) => e.kind === 'finished');
    expect(first).toMatchObject({ status: 'completed', source: 'review.json' });
    const id = String(first?.run_id);
    const artifact = String(first?.artifact);
    const bytes = await readFile(artifact, 'utf8');
    const memory = await readFile(path.join(ws.dir, 'session_states', 'auditor_session.json'), 'utf8');
    const before = await events(id);
    // Killed after the artifact was written, before the last checkpoint and before the claim was released.
    await killedBeforeLastSave(id);
    expect(JSON.parse(await readFile(stateFile(id), 'utf8')).finishing).toBeDefined();
    const inflight = path.join(ws.dir, '.maestro', 'inflight');
    await copyFile(path.join(ws.dir, 'examples', 'review-migration.json'), path.join(inflight, `${id}.json`));
    await writeFile(
      path.join(inflight, `${id}.claim`),
      JSON.stringify({
        run_id: id,
        source: 'review.json',
        claimed_at: new Date().toISOString(),
        owner: { id: '999999-dead', pid: 999999 },
      }),
    );

    const again = await watchOnce();
    expect(again.find((e) => e.kind === 'started')).toMatchObject({ recovered: 1 });
    expect(again.find((e) => e.kind === 'claimed')).toMatchObject({ run_id: id, resume: 'checkpoint' });
    expect(again.find((e) => e.kind === 'finished')).toMatchObject({ run_id: id, status: 'completed', artifact });
    expect(await readFile(artifact, 'utf8')).toBe(bytes);
    expect(JSON.parse(await readFile(path.join(ws.dir, 'session_states', 'auditor_session.json'), 'utf8')).runs).toEqual(
      JSON.parse(memory).runs,
    );
    const all = await events(id);
    expect(all.filter((e) => e === 'MODEL_CALL')).toHaveLength(before.filter((e) => e === 'MODEL_CALL').length);
    for (const once of ['ARTIFACT_WRITTEN', 'SESSIONS_SAVED', 'RUN_FINISHED', 'COMMAND_RECEIVED'])
      expect(
        all.filter((e) => e === once),
        once,
      ).toHaveLength(1);
    expect(JSON.parse(await readFile(stateFile(id), 'utf8')).status).toBe('completed');
    expect(await readdir(inflight)).toEqual([]);
    expect(await readdir(path.join(ws.dir, 'commands'))).toEqual([]);
  });
});
