import { describe, expect, it } from 'vitest';
import { decideAll } from '../../src/app/hitl-all.js';
import { decidePause, HitlRefusedError } from '../../src/app/hitl.js';
import { conflictFingerprint } from '../../src/app/loop-policy.js';
import { isConflictStopped, pausesFor, resetLoopPolicy } from '../../src/domain/loop-policy/workspace-loop.js';
import { aCommand, execute, memoryApp, startRun, type MemoryApp } from '../fakes/memory-app.js';
import { politeCouncil, ScriptedLlmClient } from '../fakes/scripted-llm-client.js';

// A conflict line the loop policy stopped (sealed, at its fourth pause) stays stopped until a new session:
// later commands on it end stopped at once without pausing, and its runs still paused are offered only `stop`.

/** Tasks the floor pauses on at different gates (high stakes, an act on a system, a boundary ask), all on one conflict line. */
const TASKS = [
  'Fire Bob.',
  'Publish the release notes to the public site.',
  'Decide for me which offer I should accept.',
  'Dismiss Carol from the team today.',
  'Fire Bob.',
  'Deploy the new build to production.',
];
const onLine = (task: string) => aCommand({ task_description: task, config: { max_rounds: 1, conflict_key: 'staffing' } });

async function runAll(app: MemoryApp) {
  const outcomes = [];
  for (const task of TASKS) outcomes.push(await execute(await startRun(app, onLine(task)), app.deps));
  return outcomes;
}

const pauses = (app: MemoryApp) => pausesFor(app.loopPolicy.data, 'staffing');

describe('a stopped conflict line', () => {
  it('stops every later command on it at once, whatever its task, without counting a pause or calling a model', async () => {
    const llm = new ScriptedLlmClient(politeCouncil);
    const app = memoryApp({ llm });
    const outcomes = await runAll(app);
    expect(outcomes.map((o) => [o.status, o.reason_code])).toEqual([
      ['paused', expect.any(String)],
      ['paused', expect.any(String)],
      ['paused', expect.any(String)],
      ['stopped', 'ACC_END_SESSION_AFTER_4_HITL'],
      ['stopped', 'ACC_STOPPED_IS_TERMINAL'],
      ['stopped', 'ACC_STOPPED_IS_TERMINAL'],
    ]);
    // The later commands were stopped at the gates: no pause requested, none counted, nothing sent to a model.
    for (const o of outcomes.slice(4))
      expect(app.ledger.records(o.run_id).at(-1)).toMatchObject({ decision: 'STOPPED', sealed: true, layer: 'acc' });
    for (const o of outcomes.slice(4)) expect(app.ledger.events(o.run_id)).not.toContain('HITL_REQUESTED');
    expect(pauses(app)).toBe(4);
    expect(llm.calls.filter((c) => c.purpose !== 'plan')).toHaveLength(0);
    // Another line is not touched.
    const other = await execute(await startRun(app, aCommand({ task_description: 'Fire Bob.' })), app.deps);
    expect(other).toMatchObject({ status: 'paused', reason_code: 'ETHICS_HIGH_STAKES' });
  });

  it('stops a run under way when another run stopped its line, if it then pauses (not counted)', async () => {
    const stopper = memoryApp({ llm: new ScriptedLlmClient(politeCouncil) });
    await runAll(stopper);
    // The council doubts, so the run pauses after its deliberation; meanwhile another process stopped the line.
    const doubtful = new ScriptedLlmClient((r) => {
      app.loopPolicy.data = stopper.loopPolicy.data;
      return r.purpose === 'verdict' ? '{"action":"investigate","confidence":0.9,"rationale":"facts missing"}' : politeCouncil(r);
    });
    const app = memoryApp({ llm: doubtful });
    const outcome = await execute(await startRun(app, onLine('Review the staffing plan')), app.deps);
    expect(outcome).toMatchObject({ status: 'stopped', reason_code: 'ACC_STOPPED_IS_TERMINAL' });
    expect(doubtful.calls.length).toBeGreaterThan(0);
    expect(pauses(app)).toBe(4);
    expect(app.ledger.records(outcome.run_id).at(-1)).toMatchObject({ decision: 'STOPPED', sealed: true, layer: 'acc' });
    expect(outcome.message).toContain('maestro session reset --keep-memory');
  });

  it('refuses a continue on its runs still paused (changing nothing), lets them be stopped, and lets them continue after a reset', async () => {
    const app = memoryApp({ llm: new ScriptedLlmClient(politeCouncil) });
    const [first, second, third] = await runAll(app);
    const before = await app.ledger.load(first!.run_id);
    const refused = decidePause({ runId: first!.run_id, decision: 'continue' }, app.deps);
    await expect(refused).rejects.toBeInstanceOf(HitlRefusedError);
    await expect(refused).rejects.toThrow(/only stop is offered.*maestro hitl decide \S+ stop.*maestro session reset.*nothing changed$/);
    expect(await app.ledger.load(first!.run_id)).toEqual(before);
    expect(await app.decisions.pending()).toEqual([]);

    // --all: each such run is reported refused, and the others paused for the same reason are still decided.
    const elsewhere = await execute(await startRun(app, aCommand({ task_description: 'Fire Dave.' })), app.deps);
    expect(elsewhere).toMatchObject({ status: 'paused', reason_code: 'ETHICS_HIGH_STAKES' });
    const all = await decideAll({ decision: 'continue', reason: 'ETHICS_HIGH_STAKES' }, { runs: app.ledger, depsFor: () => app.deps });
    expect(all.runs.map((r) => [r.run_id, 'refused' in r ? 'refused' : r.result.decision])).toEqual([
      [first!.run_id, 'refused'],
      [elsewhere.run_id, 'continue'],
    ]);
    expect(all.runs[0]).toMatchObject({ refused: expect.stringContaining('only stop is offered') });
    expect(await app.decisions.pending()).toEqual([elsewhere.run_id]);

    const stopped = await decidePause({ runId: second!.run_id, decision: 'stop' }, app.deps);
    expect(stopped).toMatchObject({ decision: 'stop', outcome: { status: 'stopped', reason_code: 'HITL_STOP' } });

    // A new council session (maestro session reset): the line is open again, and the run may go on.
    await app.deps.loopPolicy.update((d) => ({ data: resetLoopPolicy(d, 'S-new', 'now'), result: null }));
    const line = conflictFingerprint((await app.ledger.load(third!.run_id))!, app.deps.sha256);
    expect(isConflictStopped(app.loopPolicy.data, line)).toBe(false);
    expect(await decidePause({ runId: third!.run_id, decision: 'continue' }, app.deps)).toMatchObject({ decision: 'continue' });
  });
});
