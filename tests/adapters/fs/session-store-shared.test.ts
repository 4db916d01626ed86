import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FsSessionStore } from '../../../src/adapters/fs/session-store.js';
import { makeWorkspace, removeWorkspace } from '../../helpers/watch-workspace.js';

const clock = { now: () => new Date('2026-01-01T00:00:00Z') };
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const turn = (runId: string, text: string) => [
  { role: 'user' as const, content: `=== TASK BRIEFING ===\n\nTASK: ${text}`, run_id: runId, ts: '2026-01-01T00:00:00.000Z' },
  { role: 'assistant' as const, content: `A ${text}`, run_id: runId, ts: '2026-01-01T00:00:00.000Z' },
];

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
    expect(saved.messages).toHaveLength(6);
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
    expect((await s.load('auditor')).state.messages).toHaveLength(2);
  });

  it('archives the oldest runs beyond keep_runs, losing nothing, and remembers them as summaries', async () => {
    const { store: s, dir } = await store(2);
    for (const n of [1, 2, 3, 4, 5]) await s.appendRun('auditor', `run-${n}`, turn(`run-${n}`, `task ${n}`));
    const { state } = await s.load('auditor');
    expect(state.runs).toEqual(['run-4', 'run-5']);
    expect(state.archived.count).toBe(3);
    expect(state.archived.recent.map((r) => `${r.run_id}: ${r.task}`)).toEqual(['run-1: task 1', 'run-2: task 2', 'run-3: task 3']);
    const archive = (await readFile(path.join(dir, 'archive', 'auditor_history.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(archive.map((m) => m.content)).toEqual(
      turn('run-1', 'task 1')
        .concat(turn('run-2', 'task 2'), turn('run-3', 'task 3'))
        .map((m) => m.content),
    );
    // A run already archived is not appended again.
    await s.appendRun('auditor', 'run-3', turn('run-3', 'task 3'));
    expect((await s.load('auditor')).state.runs).toEqual(['run-4', 'run-5']);
  });

  it('a retried save of a run archived long ago (past the recent summaries) writes nothing; a new run is saved', async () => {
    const { store: s, dir } = await store(1);
    // 60 runs: run-0 leaves the state file at once and falls out of the 50 recent summaries.
    for (let n = 0; n < 60; n++) await s.appendRun('auditor', `run-${n}`, turn(`run-${n}`, `task ${n}`));
    const archive = path.join(dir, 'archive', 'auditor_history.jsonl');
    const before = await readFile(archive, 'utf8');
    expect((await s.load('auditor')).state.archived.recent.some((r) => r.run_id === 'run-0')).toBe(false);
    // A watcher that restarts after a crash saves run-0 again: it is in the archive already.
    await s.appendRun('auditor', 'run-0', turn('run-0', 'task 0'), { retry: true });
    expect(await readFile(archive, 'utf8')).toBe(before);
    expect((await s.load('auditor')).state.runs).toEqual(['run-59']);
    // A retry of a run never saved is saved.
    await s.appendRun('auditor', 'run-60', turn('run-60', 'task 60'), { retry: true });
    expect((await s.load('auditor')).state.runs).toEqual(['run-60']);
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
    const archive = (await readFile(s.archiveFor('auditor'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).content as string);
    expect(archive).toEqual(['run-1', 'run-2', 'run-3'].flatMap((r, i) => turn(r, `task ${i + 1}`)).map((m) => m.content));
    expect((await s.load('auditor')).state.runs).toEqual(['run-4', 'run-5']);
  });

  it('an archive append cut short by a crash is completed, not glued to or repeated', async () => {
    const { store: s, dir } = await store(1);
    await s.appendRun('auditor', 'run-1', turn('run-1', 'task 1'));
    const stateFile = path.join(dir, 'auditor_session.json');
    const before = await readFile(stateFile, 'utf8');
    await s.appendRun('auditor', 'run-2', turn('run-2', 'task 2'));
    // The crash cut the archive in the middle of run-1's second message, before the state file was saved.
    const whole = await readFile(s.archiveFor('auditor'), 'utf8');
    await writeFile(s.archiveFor('auditor'), whole.slice(0, whole.indexOf('\n') + 20));
    await writeFile(stateFile, before);
    await s.appendRun('auditor', 'run-2', turn('run-2', 'task 2'));
    const archive = (await readFile(s.archiveFor('auditor'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).content as string);
    expect(archive).toEqual(turn('run-1', 'task 1').map((m) => m.content));
  });

  it('reads version 1 files (the first release) and migrates them', async () => {
    const { store: s, dir } = await store();
    const { writeFile, mkdir } = await import('node:fs/promises');
    await mkdir(dir, { recursive: true });
    await writeFile(
      path.join(dir, 'auditor_session.json'),
      await readFile(path.join(import.meta.dirname, '..', '..', 'fixtures', 'session_states', 'v1-auditor_session.json')),
    );
    const { state, recovered } = await s.load('auditor');
    expect(recovered).toBeUndefined();
    expect(state).toMatchObject({ schemaVersion: 3, runs: ['20261122T073818Z-faa99f'], archived: { count: 0, recent: [] }, outcomes: [] });
    expect(state.messages).toHaveLength(2);
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
    expect(state.messages.map((m) => m.tokens)).toEqual([14, 11]);
    // The next save writes version 3.
    await s.appendRun('auditor', 'run-3', turn('run-3', 'task 3'));
    expect(JSON.parse(await readFile(s.fileFor('auditor'), 'utf8'))).toMatchObject({ schemaVersion: 3, outcomes: [] });
  });
});
