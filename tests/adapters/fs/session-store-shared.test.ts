import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FsSessionStore } from '../../../src/adapters/fs/session-store.js';
import { aRunMemory } from '../../fixtures/domain-builders.js';
import { makeWorkspace, removeWorkspace } from '../../helpers/watch-workspace.js';

const clock = { now: () => new Date('2026-01-01T00:00:00Z') };
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const turn = (runId: string, text: string) => aRunMemory(runId, text, [`A ${text}`, `B ${text}`]);

/** The archive's records: each passage's text, an archived summary as `summary: <task>`. */
async function archived(file: string): Promise<string[]> {
  return (await readFile(file, 'utf8'))
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { from: string; text: string })
    .map((p) => (p.from === 'summary' ? `summary: ${/asked: (.+?) \|/.exec(p.text)?.[1]}` : p.text));
}

async function store(keepRuns?: number): Promise<{ store: FsSessionStore; dir: string }> {
  const ws = await makeWorkspace('maestro-sessions-');
  cleanups.push(() => removeWorkspace(ws));
  const dir = path.join(ws, 'session_states');
  return { store: new FsSessionStore(dir, clock, keepRuns), dir };
}

describe('FsSessionStore shared by several watchers', () => {
  it('never drops a run another watcher saved: appends re-read the file under its lock', async () => {
    const { store: s } = await store();
    await s.appendRun('auditor', 'run-0', turn('run-0', 'zero'));
    // Two watchers finish their runs at the same time.
    await Promise.all([s.appendRun('auditor', 'run-a', turn('run-a', 'from A')), s.appendRun('auditor', 'run-b', turn('run-b', 'from B'))]);
    const saved = (await s.load('auditor')).state;
    expect(saved.runs.slice(0, 1)).toEqual(['run-0']);
    expect([...saved.runs].sort()).toEqual(['run-0', 'run-a', 'run-b']);
    expect(saved.passages).toHaveLength(6);
    expect(saved.tasks).toHaveLength(3);
  });

  it('a confirmed outcome and runs saved at once by two processes: neither is lost (both go under the file lock)', async () => {
    const { store: a, dir } = await store();
    const b = new FsSessionStore(dir, clock);
    const entry = (run_id: string) => ({
      run_id,
      said: 'investigate' as const,
      final: 'proceed' as const,
      outcome: 'wrong' as const,
      right: true,
      at: '2026-01-01T00:00:00.000Z',
    });
    await Promise.all([
      a.appendRun('auditor', 'run-a', turn('run-a', 'from A')),
      b.update('auditor', (st) => ({ ...st, outcomes: [...st.outcomes, entry('run-0')] })),
      b.appendRun('auditor', 'run-b', turn('run-b', 'from B')),
      a.update('auditor', (st) => ({ ...st, outcomes: [...st.outcomes, entry('run-1')] })),
    ]);
    const saved = (await new FsSessionStore(dir, clock).load('auditor')).state;
    expect([...saved.runs].sort()).toEqual(['run-a', 'run-b']);
    expect(saved.outcomes.map((o) => o.run_id).sort()).toEqual(['run-0', 'run-1']);
  });

  it('saving the same run again changes nothing (resume after a crash)', async () => {
    const { store: s } = await store();
    await s.appendRun('auditor', 'run-a', turn('run-a', 'once'));
    await s.appendRun('auditor', 'run-a', turn('run-a', 'once'));
    expect((await s.load('auditor')).state.passages).toHaveLength(2);
  });

  it("archives the passages of the oldest runs beyond keep_runs with their tasks' summaries, losing nothing", async () => {
    const { store: s, dir } = await store(2);
    for (const n of [1, 2, 3, 4, 5]) await s.appendRun('auditor', `run-${n}`, turn(`run-${n}`, `task ${n}`));
    const { state } = await s.load('auditor');
    expect(state.runs).toEqual(['run-4', 'run-5']);
    expect(state.archived.count).toBe(3);
    // The summaries stay: what a persona carries is made of them.
    expect(state.tasks.map((t) => t.asked)).toEqual(['task 1', 'task 2', 'task 3', 'task 4', 'task 5']);
    expect(await archived(path.join(dir, 'archive', 'auditor_history.jsonl'))).toEqual(
      [1, 2, 3].flatMap((n) => [`A task ${n}`, `B task ${n}`, `summary: task ${n}`]),
    );
    // A run already archived is not appended again.
    await s.appendRun('auditor', 'run-3', turn('run-3', 'task 3'));
    expect((await s.load('auditor')).state.runs).toEqual(['run-4', 'run-5']);
  });

  it('finds archived passages that share a word with a task, newest last, and none once nothing matches', async () => {
    const { store: s } = await store(1);
    await s.appendRun('auditor', 'run-1', aRunMemory('run-1', 'Choose the cache', ['Redis fits the billing service.']));
    await s.appendRun('auditor', 'run-2', aRunMemory('run-2', 'Plan the migration', ['Move reads first.']));
    await s.appendRun('auditor', 'run-3', aRunMemory('run-3', 'Size the cache', ['Redis needs 4 GiB.']));
    const found = await s.recallArchive('auditor', ['redis'], 10);
    expect(found.map((p) => p.text)).toEqual(['Redis fits the billing service.']);
    expect((await s.recallArchive('auditor', ['cache'], 1)).map((p) => p.from)).toEqual(['summary']);
    expect(await s.recallArchive('auditor', ['kubernetes'], 10)).toEqual([]);
  });

  it('a retried save of a run whose state no longer holds it (its task done again since, its passages archived) writes nothing', async () => {
    const { store: s, dir } = await store(1);
    await s.appendRun('auditor', 'run-0', turn('run-0', 'the same task'));
    await s.appendRun('auditor', 'run-1', turn('run-1', 'the same task'));
    const archive = path.join(dir, 'archive', 'auditor_history.jsonl');
    const before = await readFile(archive, 'utf8');
    expect((await s.load('auditor')).state.tasks.map((t) => [t.run_id, t.times])).toEqual([['run-1', 2]]);
    // A watcher that restarts after a crash saves run-0 again: it is in the archive already.
    await s.appendRun('auditor', 'run-0', turn('run-0', 'the same task'), { retry: true });
    expect(await readFile(archive, 'utf8')).toBe(before);
    expect((await s.load('auditor')).state.runs).toEqual(['run-1']);
    // A retry of a run never saved is saved.
    await s.appendRun('auditor', 'run-2', turn('run-2', 'task 2'), { retry: true });
    expect((await s.load('auditor')).state.runs).toEqual(['run-2']);
  });

  it('a crash between archiving runs and saving the state file never leaves a message twice in the archive', async () => {
    const { store: s, dir } = await store(2);
    for (const n of [1, 2, 3]) await s.appendRun('auditor', `run-${n}`, turn(`run-${n}`, `task ${n}`));
    const stateFile = path.join(dir, 'auditor_session.json');
    const before = await readFile(stateFile, 'utf8');
    // run-4 moves run-2 to the archive; the crash comes before the state file is saved.
    await s.appendRun('auditor', 'run-4', turn('run-4', 'task 4'));
    await writeFile(stateFile, before);
    // Restarted, the watcher saves run-4 again, and later runs go on.
    await s.appendRun('auditor', 'run-4', turn('run-4', 'task 4'));
    await s.appendRun('auditor', 'run-5', turn('run-5', 'task 5'));
    expect(await archived(s.archiveFor('auditor'))).toEqual([1, 2, 3].flatMap((n) => [`A task ${n}`, `B task ${n}`, `summary: task ${n}`]));
    expect((await s.load('auditor')).state.runs).toEqual(['run-4', 'run-5']);
  });

  it('an archive append cut short by a crash is completed, not glued to or repeated', async () => {
    const { store: s, dir } = await store(1);
    await s.appendRun('auditor', 'run-1', turn('run-1', 'task 1'));
    const stateFile = path.join(dir, 'auditor_session.json');
    const before = await readFile(stateFile, 'utf8');
    await s.appendRun('auditor', 'run-2', turn('run-2', 'task 2'));
    // The crash cut the archive in the middle of run-1's second passage, before the state file was saved.
    const whole = await readFile(s.archiveFor('auditor'), 'utf8');
    await writeFile(s.archiveFor('auditor'), whole.slice(0, whole.indexOf('\n') + 20));
    await writeFile(stateFile, before);
    await s.appendRun('auditor', 'run-2', turn('run-2', 'task 2'));
    expect(await archived(s.archiveFor('auditor'))).toEqual(['A task 1', 'B task 1', 'summary: task 1']);
  });

  it('reads version 2 files and migrates them, dropping their record of agreement with the council (not a confirmed outcome)', async () => {
    const { store: s, dir } = await store();
    const { writeFile, mkdir } = await import('node:fs/promises');
    await mkdir(dir, { recursive: true });
    await writeFile(
      path.join(dir, 'auditor_session.json'),
      await readFile(path.join(import.meta.dirname, '..', '..', 'fixtures', 'session_states', 'v2-auditor_session.json')),
    );
    const { state, recovered } = await s.load('auditor');
    expect(recovered).toBeUndefined();
    expect(state).toMatchObject({ schemaVersion: 3, runs: ['20261128T101239Z-5c1e0a'], archived: { count: 1 }, outcomes: [] });
    expect(state).not.toHaveProperty('track');
    expect(state.tasks.map((t) => [t.run_id, t.asked])).toEqual([
      ['20261127T090000Z-0a0a0a', 'Review the cache'],
      ['20261128T101239Z-5c1e0a', 'Assess the migration plan'],
    ]);
    expect(state.passages.map((p) => p.text)).toEqual(['Auditor, round 1 — looking at risks.']);
    // The next save writes version 3.
    await s.appendRun('auditor', 'run-3', turn('run-3', 'task 3'));
    expect(JSON.parse(await readFile(s.fileFor('auditor'), 'utf8'))).toMatchObject({ schemaVersion: 3, outcomes: [] });
  });
});
