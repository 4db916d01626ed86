import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FsSessionStore } from '../../src/adapters/fs-session-store.js';
import { appendRun } from '../../src/domain/session-state.js';
import { makeWorkspace, removeWorkspace } from '../helpers/watch-workspace.js';

const clock = { now: () => new Date('2026-01-01T00:00:00Z') };
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const turn = (runId: string, text: string) => [
  { role: 'user' as const, content: `Q ${text}`, run_id: runId, ts: '2026-01-01T00:00:00.000Z' },
  { role: 'assistant' as const, content: `A ${text}`, run_id: runId, ts: '2026-01-01T00:00:00.000Z' },
];

describe('FsSessionStore with two watchers', () => {
  it('keeps the runs another watcher saved after this one loaded the history', async () => {
    const ws = await makeWorkspace('maestro-sessions-');
    cleanups.push(() => removeWorkspace(ws));
    const store = new FsSessionStore(path.join(ws, 'session_states'), clock);
    await store.save(appendRun((await store.load('auditor')).state, 'run-0', turn('run-0', 'zero'), 't0'));

    // Both watchers load the same history, then finish their runs one after the other.
    const a = (await store.load('auditor')).state;
    const b = (await store.load('auditor')).state;
    await store.save(appendRun(a, 'run-a', turn('run-a', 'from A'), 't1'));
    await store.save(appendRun(b, 'run-b', turn('run-b', 'from B'), 't2'));

    const saved = (await store.load('auditor')).state;
    expect(saved.runs).toEqual(['run-0', 'run-a', 'run-b']);
    expect(saved.messages.map((m) => m.content)).toEqual(['Q zero', 'A zero', 'Q from A', 'A from A', 'Q from B', 'A from B']);
  });

  it('saving the same run again changes nothing (resume after a crash)', async () => {
    const ws = await makeWorkspace('maestro-sessions-');
    cleanups.push(() => removeWorkspace(ws));
    const store = new FsSessionStore(path.join(ws, 'session_states'), clock);
    const state = appendRun((await store.load('auditor')).state, 'run-a', turn('run-a', 'once'), 't1');
    await store.save(state);
    await store.save(state);
    expect((await store.load('auditor')).state.messages).toHaveLength(2);
  });
});
