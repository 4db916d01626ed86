import { describe, expect, it } from 'vitest';
import { applyLoopPolicy, conflictFingerprint, planRequester } from '../../src/app/loop-policy.js';
import { ScriptedLlmClient } from '../fakes/scripted-llm-client.js';
import { aPersona } from '../fakes/fixtures.js';
import type { PauseRecord } from '../../src/domain/run-state.js';
import { pausesFor } from '../../src/domain/loop-policy/workspace-loop.js';
import { aCommand, memoryApp, startRun, type MemoryApp } from '../fakes/memory-app.js';

// The Stage 3 loop policy as a run's pause feeds it: counted per conflict, a plan at three, a sealed stop at four.

const pauseOf = (runId: string, n = 1): PauseRecord => ({
  pause_id: `${runId}-p${n}`,
  layer: 'arbitration',
  reason_code: 'ARBITRATION_INVESTIGATE',
  message: 'doubt',
  requested_at: '2026-01-01T00:00:00.000Z',
});
const conflict = aCommand({ config: { max_rounds: 1, conflict_key: 'queue-choice' } });

async function pauseOnce(app: MemoryApp, requestPlan?: () => Promise<string>) {
  const run = await startRun(app, conflict);
  const outcome = await applyLoopPolicy({
    state: run.state,
    pause: pauseOf(run.runId),
    deps: app.deps,
    run,
    ...(requestPlan ? { requestPlan } : {}),
  });
  return { run, outcome };
}

describe('applyLoopPolicy', () => {
  it('counts each pause of a conflict once, whatever replays it', async () => {
    const app = memoryApp();
    const { run, outcome } = await pauseOnce(app);
    expect(outcome).toEqual({ count: 1 });
    const again = await applyLoopPolicy({ state: run.state, pause: pauseOf(run.runId), deps: app.deps, run });
    expect(again.count).toBe(1);
    expect(pausesFor(app.loopPolicy.data, conflictFingerprint(run.state, app.deps.sha256))).toBe(1);
  });

  it('asks for a plan once at the third pause, and records the request and the plan', async () => {
    const app = memoryApp();
    let asked = 0;
    const plan = async () => `PLAN ${++asked}`;
    await pauseOnce(app, plan);
    await pauseOnce(app, plan);
    const { run, outcome } = await pauseOnce(app, plan);
    expect(outcome).toEqual({ count: 3, plan: 'PLAN 1' });
    expect(asked).toBe(1);
    expect(app.ledger.events(run.runId)).toEqual(['K_PLAN_REQUESTED', 'K_PLAN_REQ_DISPATCH', 'K_PLAN_PROPOSED', 'K_PLAN_RECEIVED']);
    expect(app.ledger.records(run.runId).find((r) => r.event === 'K_PLAN_PROPOSED')?.details).toMatchObject({
      hitl_count: 3,
      plan_chars: 'PLAN 1'.length,
    });
  });

  it('keeps going with a note when the plan cannot be asked for', async () => {
    const app = memoryApp();
    const failing = async (): Promise<string> => Promise.reject(new Error('route down'));
    await pauseOnce(app, failing);
    await pauseOnce(app, failing);
    const { outcome } = await pauseOnce(app, failing);
    expect(outcome.plan).toBe('(no plan: the synthesizer could not be asked — route down)');
  });

  it('ends the conflict line at the fourth pause with a sealed stop of the acc layer', async () => {
    const app = memoryApp();
    for (let i = 0; i < 3; i++) await pauseOnce(app, async () => 'plan');
    const { run, outcome } = await pauseOnce(app);
    expect(outcome.count).toBe(4);
    expect(outcome.stop).toMatchObject({ decision: 'STOPPED', reason_code: 'ACC_END_SESSION_AFTER_4_HITL', sealed: true, layer: 'acc' });
    const records = app.ledger.records(run.runId);
    expect(records.map((r) => r.event)).toEqual(expect.arrayContaining(['K_END_RECOMMENDED', 'K_STOPPED']));
    // Sealed records come from the acc layer only (invariant I2); the rest are the loop policy's.
    for (const r of records) expect(r.layer).toBe(r.sealed ? 'acc' : 'loop_policy');
  });

  it('answers a pause on a line already stopped with the terminal guard, without counting it', async () => {
    const app = memoryApp();
    for (let i = 0; i < 4; i++) await pauseOnce(app, async () => 'plan');
    for (let i = 0; i < 2; i++) {
      const { run, outcome } = await pauseOnce(app);
      expect(outcome).toEqual({
        count: 4,
        stop: expect.objectContaining({ reason_code: 'ACC_STOPPED_IS_TERMINAL', sealed: true, layer: 'acc' }),
      });
      expect(app.ledger.records(run.runId)).toEqual([
        expect.objectContaining({ event: 'K_STOPPED', reason_code: 'ACC_STOPPED_IS_TERMINAL', sealed: true, layer: 'acc' }),
      ]);
    }
    expect(pausesFor(app.loopPolicy.data, 'queue-choice')).toBe(4);
  });
});

describe('conflictFingerprint', () => {
  it("is the command's conflict_key when it has one, else a digest of the task that ignores case and spacing", () => {
    const app = memoryApp();
    const of = (task: string, config: Record<string, unknown> = {}) =>
      conflictFingerprint({ command: { task_description: task, input_artifacts: [], config } as never }, app.deps.sha256);
    expect(of('anything', { conflict_key: 'queue-choice' })).toBe('queue-choice');
    expect(of('Choose the  queue\n')).toBe(of('choose the queue'));
    expect(of('Choose the queue')).not.toBe(of('Choose the database'));
    expect(of('Choose the queue')).toMatch(/^task:[0-9a-f]{16}$/);
  });

  it('asks the synthesizer for the plan with the task screened, whatever the workspace does with personal data', async () => {
    const app = await memoryApp();
    const run = await startRun(app, conflict);
    const llm = new ScriptedLlmClient('1. ask the owner first');
    const synthesizer = aPersona({ id: 'coordinator' });
    const models = { llm, personas: new Map([[synthesizer.id, synthesizer]]) };
    const plan = { ...run.state.plan, synthesizer: 'coordinator', rounds: 1 } as Parameters<typeof planRequester>[0]['plan'];
    const task = 'Decide the queue for jane.doe@example.com';
    expect(await planRequester({ run, deps: app.deps, models, plan, task })()).toBe('1. ask the owner first');
    const sent = JSON.stringify(llm.calls[0]?.messages);
    expect(sent).not.toContain('jane.doe@example.com');
    expect(sent).toContain('[REDACTED');
  });
});
