import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FsSessionStore } from '../../src/adapters/fs-session-store.js';
import { makeWorkspace, removeWorkspace } from '../helpers/watch-workspace.js';

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
    const archive = (await readFile(path.join(dir, 'archive', 'auditor_history.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l));
    expect(archive.map((m) => m.content)).toEqual(turn('run-1', 'task 1').concat(turn('run-2', 'task 2'), turn('run-3', 'task 3')).map((m) => m.content));
    // A run already archived is not appended again.
    await s.appendRun('auditor', 'run-3', turn('run-3', 'task 3'));
    expect((await s.load('auditor')).state.runs).toEqual(['run-4', 'run-5']);
  });

  it('reads version 1 files (the first release) and migrates them', async () => {
    const { store: s, dir } = await store();
    const { writeFile, mkdir } = await import('node:fs/promises');
    await mkdir(dir, { recursive: true });
    await writeFile(path.join(dir, 'auditor_session.json'), await readFile(path.join(import.meta.dirname, '..', 'fixtures', 'session_states', 'v1-auditor_session.json')));
    const { state, recovered } = await s.load('auditor');
    expect(recovered).toBeUndefined();
    expect(state).toMatchObject({ schemaVersion: 2, runs: ['20261122T073818Z-faa99f'], archived: { count: 0, recent: [] } });
    expect(state.messages).toHaveLength(2);
  });
});
