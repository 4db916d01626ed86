import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FsSessionStore } from '../../../src/adapters/fs/session-store.js';
import type { HistoryMessage } from '../../../src/domain/session-state.js';
import { FakeClock } from '../../fakes/fake-clock.js';
import { tempWorkspace } from '../../fakes/fixtures.js';

// Saves of runs that end faster than their saves land queue for the persona's file: those ready when
// it is free land together, in the order the runs ended; one whose run did not end well is refused
// alone, and holds nothing else back.

let ws: Awaited<ReturnType<typeof tempWorkspace>>;
beforeEach(async () => {
  ws = await tempWorkspace();
});
afterEach(() => ws.cleanup());

const said = (runId: string): HistoryMessage[] => [
  { role: 'user', content: `briefing for ${runId}`, run_id: runId, ts: 't' },
  { role: 'assistant', content: `reply of ${runId}`, run_id: runId, ts: 't' },
];

function gate(): { promise: Promise<void>; open: () => void; fail: (error: Error) => void } {
  let open: () => void = () => undefined;
  let fail: (error: Error) => void = () => undefined;
  const promise = new Promise<void>((resolve, reject) => {
    open = resolve;
    fail = reject;
  });
  return { promise, open, fail };
}

describe('persona memory: saves queued together', () => {
  it('land in the order their runs ended, whatever order they become ready in; a run that did not end well is left out', async () => {
    const store = new FsSessionStore(path.join(ws.dir, 'session_states'), new FakeClock('2026-03-04T05:06:07.000Z'));
    const gates = [gate(), gate(), gate(), gate()];
    const saves = ['r1', 'r2', 'r3', 'r4'].map((id, i) => store.appendRun('auditor', id, said(id), { landAfter: gates[i]?.promise }));
    const outcomes = saves.map((s) =>
      s.then(
        () => 'saved',
        (e: Error) => `refused: ${e.message}`,
      ),
    );
    // The later runs are ready first; the first one's pictures fail last.
    gates[3]?.open();
    gates[2]?.open();
    gates[1]?.fail(new Error('the heat map could not be written'));
    await new Promise((r) => setTimeout(r, 20));
    // Nothing lands before r1, which ended first.
    expect(
      (await new FsSessionStore(path.join(ws.dir, 'session_states'), new FakeClock('2026-03-04T05:06:07.000Z')).load('auditor')).state.runs,
    ).toEqual([]);
    gates[0]?.open();
    expect(await Promise.all(outcomes)).toEqual(['saved', 'refused: the heat map could not be written', 'saved', 'saved']);
    const fresh = new FsSessionStore(path.join(ws.dir, 'session_states'), new FakeClock('2026-03-04T05:06:07.000Z'));
    const { state } = await fresh.load('auditor');
    expect(state.runs).toEqual(['r1', 'r3', 'r4']);
    expect(state.messages.map((m) => m.run_id)).toEqual(['r1', 'r1', 'r3', 'r3', 'r4', 'r4']);
    // The store that saved shows no save in flight any more, and the same memory.
    expect((await store.load('auditor')).state.runs).toEqual(['r1', 'r3', 'r4']);
  });
});
