import { describe, expect, it } from 'vitest';
import { dropCommand, task, useWatchScope, waitFor, watch } from '../helpers/watch-workspace.js';

// End-to-end, the built CLI as a process: at --concurrency 1 `maestro watch` is one state machine,
// AWAITING_COMMAND → EXECUTING_TASK → PRODUCING_ARTIFACT → AWAITING_COMMAND, one run at a time: the next
// command is claimed only after the last run's `finished` (its artifact, memory and last commit done).

const { workspace, started } = useWatchScope();

const TRANSITIONS = ['claimed', 'producing_artifact', 'finished'];

describe('maestro watch --concurrency 1 (end to end)', () => {
  it('takes queued commands one at a time, each through the whole state machine before the next is claimed', async () => {
    const ws = await workspace();
    const commands = 5;
    for (let i = 0; i < commands; i++) await dropCommand(ws, `c-${i}.json`, task(`Review rollout step ${i} and list the risks`));
    const watcher = started(watch(ws, ['--concurrency', '1']));
    await watcher.waitForEvent('the watcher to start', (e) => e.kind === 'started');
    // One more arrives while the watcher works through the queue.
    await dropCommand(ws, 'late.json', task('Review the late rollout step and list the risks'));
    const runs = commands + 1;
    await waitFor(`${runs} runs to finish`, () => watcher.events.filter((e) => e.kind === 'finished').length === runs, 90_000);
    watcher.kill('SIGTERM');
    expect(await watcher.exited).toEqual({ code: 0, signal: null });

    const events = watcher.events;
    expect(events.filter((e) => e.kind === 'notice' && String(e.message).includes('unexpected transition'))).toEqual([]);
    const moves = events.filter((e) => TRANSITIONS.includes(String(e.kind)));
    expect(moves.filter((e) => e.kind === 'finished').every((e) => e.status === 'completed')).toBe(true);
    // Claimed, producing its artifact, finished: one run after the other, never two in flight.
    expect(moves.map((e) => `${e.kind}: ${e.from} → ${e.state}`)).toEqual(
      Array.from({ length: runs }, () => [
        'claimed: AWAITING_COMMAND → EXECUTING_TASK',
        'producing_artifact: EXECUTING_TASK → PRODUCING_ARTIFACT',
        'finished: PRODUCING_ARTIFACT → AWAITING_COMMAND',
      ]).flat(),
    );
    for (let r = 0; r < runs; r++) {
      const [claimed, producing, finished] = moves.slice(r * 3, r * 3 + 3);
      expect([producing?.run_id, finished?.run_id]).toEqual([claimed?.run_id, claimed?.run_id]);
    }
    expect(new Set(moves.map((e) => e.run_id)).size).toBe(runs);
  }, 120_000);
});
