import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { LiveRuns, progressSince, seenOf, type LiveEvent } from '../../src/app/live-runs.js';
import { parseRunState } from '../../src/domain/checkpoint.js';
import type { RunReader } from '../../src/domain/ports.js';
import type { RunState } from '../../src/domain/run-state.js';
import { systemStopDecision } from '../../src/domain/decision.js';
import { REPO_ROOT } from '../fakes/fixtures.js';

// Issue 29: the console's live view is told what a run did since it last looked, as `run --follow` is.
async function paused(): Promise<RunState> {
  const json = JSON.parse(await readFile(path.join(REPO_ROOT, 'tests/fixtures/run-state/v2-paused-pii.json'), 'utf8'));
  const parsed = parseRunState(json);
  if (!parsed.ok) throw new Error(parsed.issues.join('\n'));
  return parsed.value;
}

/** The same run earlier: running, with only its first `steps` steps done. */
function earlier(state: RunState, steps: number): RunState {
  const { pause: _pause, ...rest } = state;
  return { ...rest, status: 'running', steps: state.steps.slice(0, steps) };
}

const kinds = (events: readonly LiveEvent[]) => events.map((e) => (e.kind === 'progress' ? e.event.kind : `status:${e.status}`));

describe('progressSince', () => {
  it('tells a run seen for the first time from its start: the plan, every step so far, its status', async () => {
    const state = earlier(await paused(), 2);
    expect(kinds(progressSince(undefined, state))).toEqual(['run_started', 'step_finished', 'step_finished', 'status:running']);
  });

  it('tells only the steps finished since, and the pause when the run stops for a person', async () => {
    const end = await paused();
    const events = progressSince(seenOf(earlier(end, 2)), end);
    const finished = events.flatMap((e) => (e.kind === 'progress' && e.event.kind === 'step_finished' ? [e.event.step_id] : []));
    expect(finished).toEqual(end.steps.slice(2).map((s) => s.id));
    expect(events.at(-1)).toMatchObject({ kind: 'status', status: 'paused', reason_code: end.pause?.reason_code });
    expect(progressSince(seenOf(end), end)).toEqual([]);
  });
});

describe('LiveRuns', () => {
  it('tells a listener that joins what a run still going has done, then what it does next; never reads an ended run again', async () => {
    const end = await paused();
    let current = earlier(end, 1);
    const loads: string[] = [];
    const ledger: RunReader = {
      list: async () => [current.run_id],
      load: async (id) => {
        loads.push(id);
        return current;
      },
      readFile: async () => undefined,
    };
    const live = new LiveRuns(ledger, { intervalMs: 5 });
    const got: LiveEvent[] = [];
    const stop = await live.subscribe((e) => got.push(e));
    expect(kinds(got)).toEqual(['run_started', 'step_finished', 'status:running']);
    current = end;
    await expect.poll(() => got.at(-1)).toMatchObject({ kind: 'status', status: 'paused' });
    expect(got.filter((e) => e.kind === 'progress' && e.event.kind === 'step_finished')).toHaveLength(end.steps.length);
    current = { ...end, status: 'stopped', pause: undefined } as RunState;
    await expect.poll(() => got.at(-1)).toMatchObject({ kind: 'status', status: 'stopped' });
    const count = loads.length;
    await new Promise((r) => setTimeout(r, 40));
    stop();
    expect(loads.length).toBe(count);
  });

  it('keeps reading a run a storage failure ended (it is live: `run --resume` takes it up again), and tells its revival', async () => {
    const end = await paused();
    let current: RunState = { ...earlier(end, 1), status: 'error', decision: systemStopDecision('queue', 'STORAGE_WRITE_FAILED') };
    const ledger: RunReader = { list: async () => [current.run_id], load: async () => current, readFile: async () => undefined };
    const got: LiveEvent[] = [];
    const stop = await new LiveRuns(ledger, { intervalMs: 5 }).subscribe((e) => got.push(e));
    expect(got.at(-1)).toMatchObject({ kind: 'status', status: 'error' });
    current = earlier(end, 2);
    await expect.poll(() => got.at(-1)).toMatchObject({ kind: 'status', status: 'running' });
    stop();
  });
});
