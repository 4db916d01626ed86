import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { decidePause, resumeDecided } from '../../src/app/hitl.js';
import { processCommand } from '../../src/app/process-command.js';
import { createApp } from '../../src/compose/app.js';
import { LlmError } from '../../src/domain/errors.js';
import { politeCouncil, ScriptedLlmClient, type ScriptedCall } from '../fakes/scripted-llm-client.js';
import { tempWorkspace } from '../fakes/fixtures.js';

let ws: Awaited<ReturnType<typeof tempWorkspace>>;
beforeEach(async () => {
  ws = await tempWorkspace({ 'docs/plan.md': '# Plan\n- move the reports\n' });
});
afterEach(() => ws.cleanup());

const app = (llm: ScriptedLlmClient) => createApp({ workspace: ws.dir, llm });
const command = (config: Record<string, unknown> = {}) =>
  JSON.stringify({ task_description: 'Review the plan', input_artifacts: ['docs/plan.md'], config: { mode: 'supervisor', ...config } });
const records = async (file: string) =>
  (await readFile(file, 'utf8'))
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { event: string; reason_code: string; layer: string; details?: Record<string, unknown> });
const stateOf = async (runId: string) => JSON.parse(await readFile(path.join(ws.dir, '.maestro', 'runs', runId, 'state.json'), 'utf8'));

const delegate = (target: string, instruction = `look at it, ${target}`) => JSON.stringify({ action: 'delegate', target, instruction });
const STOP = JSON.stringify({ action: 'stop', target: null, instruction: null });

/** A supervisor that follows a script of decisions by iteration (`decision:i<n>`); everyone else is polite. */
function supervisor(decisions: Record<string, string>, turns: (r: ScriptedCall) => string | undefined = () => undefined) {
  return (r: ScriptedCall): string => {
    if (r.purpose === 'decision') {
      const d = decisions[r.step];
      if (d === undefined) throw new Error(`no decision scripted for ${r.step}`);
      return d;
    }
    return turns(r) ?? politeCouncil(r);
  };
}

describe('the supervisor mode', () => {
  it('delegates one specialist turn at a time, returns to the supervisor after each, shows it the history, and ends with verdicts and the proposal', async () => {
    const llm = new ScriptedLlmClient(
      supervisor({ 'decision:i1': delegate('strategist'), 'decision:i2': delegate('auditor'), 'decision:i3': STOP }),
    );
    const outcome = await processCommand({ text: command(), source: 's.json' }, (await app(llm)).deps);
    expect(outcome.status).toBe('completed');
    expect(llm.calls.map((c) => c.step)).toEqual([
      'decision:i1',
      'turn:i1:strategist',
      'decision:i2',
      'turn:i2:auditor',
      'decision:i3',
      'verdict:coordinator',
      'verdict:strategist',
      'verdict:auditor',
      'synthesis',
    ]);
    const third = llm.calls[4]!;
    expect(third.responseFormat?.name).toBe('supervisor_decision');
    const prompt = third.messages.at(-1)!.content;
    expect(prompt).toContain('iteration 1: delegated to strategist — "look at it, strategist"');
    expect(prompt).toContain('iteration 2: delegated to auditor');
    expect(prompt).toContain('[auditor, iteration 2]\nauditor speaks in round 2');
    expect(prompt).toContain('Delegations used: 2 of 4.');
    // The specialist gets the supervisor's instruction and what happened since it last spoke.
    expect(llm.calls[3]!.messages.at(-1)!.content).toContain('Instruction: look at it, auditor');
    expect(llm.calls[3]!.messages.at(-1)!.content).toContain('[strategist, iteration 1]');
    expect(outcome.message).toContain('supervisor loop: stopped by the supervisor (stop) at iteration 3');
    const loop = (await records(outcome.audit_log)).filter((r) => r.event.startsWith('LOOP_'));
    expect(loop.map((r) => [r.event, r.details])).toEqual([
      ['LOOP_ITERATION_STARTED', { iteration: 1, specialist: 'strategist' }],
      ['LOOP_ITERATION_STARTED', { iteration: 2, specialist: 'auditor' }],
      ['LOOP_ITERATION_STOPPED', { iteration: 3, reason: 'stop' }],
    ]);
    const artifact = await readFile(outcome.artifact!, 'utf8');
    expect(artifact).toContain('## Supervisor loop');
    expect(artifact).toContain('### Iteration 2');
    expect(artifact).toContain("seed 002's `loop.iteration_started`");
  });

  it('is paused inside iteration 2, continued by a person, resumes at iteration 2 with nothing repeated, and stops', async () => {
    const decisions = { 'decision:i1': delegate('strategist'), 'decision:i2': delegate('auditor'), 'decision:i3': STOP };
    const first = new ScriptedLlmClient(
      supervisor(decisions, (r) => {
        if (r.step === 'turn:i2:auditor') throw new LlmError('upstream 503', true, 503);
        return undefined;
      }),
    );
    const a = await app(first);
    const paused = await processCommand({ text: command(), source: 's.json' }, a.deps);
    expect(paused).toMatchObject({ status: 'paused', reason_code: 'MODEL_CALL_FAILED' });
    expect(paused.message).toContain('turn:i2:auditor');
    expect(first.calls.map((c) => c.step)).toEqual(['decision:i1', 'turn:i1:strategist', 'decision:i2', 'turn:i2:auditor']);
    expect((await stateOf(paused.run_id)).steps.map((s: { id: string }) => s.id)).toEqual([
      'decision:i1',
      'turn:i1:strategist',
      'decision:i2',
    ]);

    expect((await decidePause({ runId: paused.run_id, decision: 'continue' }, a.deps)).decision).toBe('continue');
    const second = new ScriptedLlmClient(supervisor(decisions));
    const resumed = await resumeDecided(paused.run_id, (await app(second)).deps);
    expect(resumed).toMatchObject({ status: 'completed' });
    // Iteration 2 goes on with its turn — the same call as the failed one — and no finished call is made again.
    expect(second.calls.map((c) => c.step)).toEqual([
      'turn:i2:auditor',
      'decision:i3',
      'verdict:coordinator',
      'verdict:strategist',
      'verdict:auditor',
      'synthesis',
    ]);
    expect(second.calls[0]!.messages).toEqual(first.calls[3]!.messages);
    const loop = (await records(paused.audit_log)).filter((r) => r.event.startsWith('LOOP_'));
    expect(loop.map((r) => `${r.event}:${String(r.details?.iteration)}`)).toEqual([
      'LOOP_ITERATION_STARTED:1',
      'LOOP_ITERATION_STARTED:2',
      'LOOP_ITERATION_STOPPED:3',
    ]);
  });

  it('trips max_iterations (default 4) loudly: the outcome line, the audit log and the artifact say which limit', async () => {
    const always = Object.fromEntries(
      Array.from({ length: 6 }, (_, i) => [`decision:i${i + 1}`, delegate(i % 2 === 0 ? 'strategist' : 'auditor')]),
    );
    // Every turn says something new (a repeated one would trip the no-op guardrail first).
    const points = ['the rollback is untested', 'costs double in March', 'nobody owns the cutover', 'the vendor contract ends in June'];
    const llm = new ScriptedLlmClient(supervisor(always, (r) => (r.purpose === 'turn' ? points[r.round - 1] : undefined)));
    const outcome = await processCommand({ text: command(), source: 's.json' }, (await app(llm)).deps);
    // Seed 002: a guardrail's stop is explicit: its own status, a STOPPED decision with the limit's reason, never RUN_COMPLETED.
    expect(outcome).toMatchObject({ status: 'guardrail_stopped', decision: 'STOPPED', reason_code: 'LOOP_GUARDRAIL_MAX_ITERATIONS' });
    const finished = (await records(outcome.audit_log)).filter((r) => r.event === 'RUN_FINISHED');
    expect(finished).toEqual([
      expect.objectContaining({
        decision: 'STOPPED',
        reason_code: 'LOOP_GUARDRAIL_MAX_ITERATIONS',
        sealed: false,
        details: expect.objectContaining({ status: 'guardrail_stopped' }),
      }),
    ]);
    expect(llm.calls.filter((c) => c.purpose === 'turn')).toHaveLength(4);
    expect(llm.calls.filter((c) => c.purpose === 'decision')).toHaveLength(5);
    expect(outcome.message).toContain('guardrail_stop — max_iterations: the supervisor delegated again after 4 delegation(s)');
    const guard = (await records(outcome.audit_log)).filter((r) => r.event === 'LOOP_GUARDRAIL_STOP');
    expect(guard).toEqual([
      expect.objectContaining({
        reason_code: 'LOOP_GUARDRAIL_MAX_ITERATIONS',
        layer: 'deliberation',
        details: { iteration: 5, limit: 'max_iterations', threshold: 4 },
      }),
    ]);
    expect(await readFile(outcome.artifact!, 'utf8')).toContain('Loop status: **guardrail_stop** — max_iterations');
    // The last decision was told no delegation was left.
    expect(llm.calls.find((c) => c.step === 'decision:i5')!.messages.at(-1)!.content).toContain('No delegations are left');
  });

  it('honours config.max_iterations and config.supervisor', async () => {
    const llm = new ScriptedLlmClient(supervisor({ 'decision:i1': delegate('coordinator'), 'decision:i2': delegate('coordinator') }));
    const outcome = await processCommand(
      { text: command({ supervisor: 'auditor', max_iterations: 1 }), source: 's.json' },
      (await app(llm)).deps,
    );
    expect(llm.calls.filter((c) => c.purpose === 'decision').map((c) => c.persona)).toEqual(['auditor', 'auditor']);
    expect(llm.calls.map((c) => c.step).slice(0, 3)).toEqual(['decision:i1', 'turn:i1:coordinator', 'decision:i2']);
    expect(outcome.message).toContain('max_iterations: the supervisor delegated again after 1 delegation(s)');
  });

  it('trips on two consecutive invalid targets, telling the supervisor what was wrong in between', async () => {
    const llm = new ScriptedLlmClient(supervisor({ 'decision:i1': delegate('ghost'), 'decision:i2': delegate('coordinator') }));
    const outcome = await processCommand({ text: command(), source: 's.json' }, (await app(llm)).deps);
    expect(outcome).toMatchObject({ status: 'guardrail_stopped', reason_code: 'LOOP_GUARDRAIL_INVALID_TARGETS' });
    expect(llm.calls.filter((c) => c.purpose === 'turn')).toHaveLength(0);
    expect(llm.calls[1]!.messages.at(-1)!.content).toContain(
      'Your last decision could not be followed: "ghost" is not a specialist of this council',
    );
    expect(outcome.message).toContain('guardrail_stop — invalid targets: 2 delegations in a row named no valid specialist');
    const log = await records(outcome.audit_log);
    expect(log.filter((r) => r.event === 'LOOP_INVALID_TARGET').map((r) => r.details)).toEqual([
      { iteration: 1, consecutive: 1 },
      { iteration: 2, consecutive: 2 },
    ]);
    expect(log.find((r) => r.event === 'LOOP_GUARDRAIL_STOP')).toMatchObject({
      reason_code: 'LOOP_GUARDRAIL_INVALID_TARGETS',
      details: { limit: 'invalid_targets', threshold: 2, iteration: 2 },
    });
    // The model's text is never written to the audit log.
    expect(JSON.stringify(log)).not.toContain('ghost');
  });

  it('trips on two consecutive no-op turns', async () => {
    const llm = new ScriptedLlmClient(
      supervisor(
        { 'decision:i1': delegate('strategist'), 'decision:i2': delegate('auditor'), 'decision:i3': delegate('strategist') },
        (r) => {
          if (r.step === 'turn:i1:strategist') return 'The plan is sound.';
          if (r.step === 'turn:i2:auditor') return '';
          if (r.step === 'turn:i3:strategist') return 'As I said: the plan is sound.';
          return undefined;
        },
      ),
    );
    const outcome = await processCommand({ text: command(), source: 's.json' }, (await app(llm)).deps);
    expect(outcome).toMatchObject({ status: 'guardrail_stopped', reason_code: 'LOOP_GUARDRAIL_NO_OP_TURNS' });
    expect(llm.calls.filter((c) => c.purpose === 'decision')).toHaveLength(3);
    expect(outcome.message).toContain('guardrail_stop — no-op turns: 2 specialist turns in a row brought nothing new');
    const log = await records(outcome.audit_log);
    expect(log.filter((r) => r.event === 'LOOP_NO_OP_TURN').map((r) => r.details)).toEqual([
      { iteration: 2, specialist: 'auditor', consecutive: 1 },
      { iteration: 3, specialist: 'strategist', consecutive: 2 },
    ]);
    expect(log.find((r) => r.event === 'LOOP_GUARDRAIL_STOP')).toMatchObject({
      reason_code: 'LOOP_GUARDRAIL_NO_OP_TURNS',
      details: { limit: 'no_op_turns', threshold: 2, iteration: 3 },
    });
    expect(await readFile(outcome.artifact!, 'utf8')).toContain('**no-op**');
  });

  it('asks once more for an unreadable decision, then pauses (fail closed); continue ends the loop there without asking again', async () => {
    const llm = new ScriptedLlmClient(
      supervisor({ 'decision:i1': delegate('strategist'), 'decision:i2': 'I would ask the auditor next.' }),
    );
    const a = await app(llm);
    const paused = await processCommand({ text: command(), source: 's.json' }, a.deps);
    expect(paused).toMatchObject({ status: 'paused', decision: 'PAUSE_FOR_HITL', reason_code: 'SUPERVISOR_DECISION_INVALID' });
    const asked = llm.calls.filter((c) => c.step === 'decision:i2');
    expect(asked).toHaveLength(2);
    expect(asked[1]!.messages.at(-1)!.content).toContain('That was not a valid decision');
    expect(llm.calls.some((c) => c.purpose === 'verdict')).toBe(false);
    const hitl = JSON.parse(await readFile(path.join(ws.dir, '.maestro', 'runs', paused.run_id, 'hitl.json'), 'utf8'));
    // A model that answered unreadably after its retry is an outage of its route, never the council's doubt.
    expect(hitl).toMatchObject({ layer: 'model', reason_code: 'SUPERVISOR_DECISION_INVALID', pause_class: 'outage' });

    await decidePause({ runId: paused.run_id, decision: 'continue' }, a.deps);
    const after = new ScriptedLlmClient(supervisor({}));
    const resumed = await resumeDecided(paused.run_id, (await app(after)).deps);
    expect(resumed).toMatchObject({ status: 'completed' });
    expect(after.calls.map((c) => c.step)).toEqual(['verdict:coordinator', 'verdict:strategist', 'verdict:auditor', 'synthesis']);
    expect(resumed!.message).toContain('the decision of iteration 2 could not be read and a person chose to go on');
  });

  it('lets the reviewer gate critique the loop; its escalation pauses the run', async () => {
    const llm = new ScriptedLlmClient(
      supervisor({ 'decision:i1': delegate('strategist'), 'decision:i2': STOP }, (r) =>
        r.step === 'reviewer:auditor'
          ? JSON.stringify({
              action: 'escalate',
              confidence: 0.9,
              rationale: 'the turns contradict the plan',
              findings: ['step 2 contradicts step 1'],
            })
          : undefined,
      ),
    );
    const outcome = await processCommand({ text: command({ reviewer: 'auditor' }), source: 's.json' }, (await app(llm)).deps);
    expect(outcome).toMatchObject({ status: 'paused', decision: 'PAUSE_FOR_HITL' });
    expect(outcome.message).toContain('the reviewer gate (auditor) said escalate');
    const reviewer = llm.calls.find((c) => c.step === 'reviewer:auditor')!;
    expect(reviewer.messages.at(-1)!.content).toContain('The supervisor loop (the result to review)');
    expect(reviewer.responseFormat?.name).toBe('reviewer_verdict');
  });

  it('refuses a supervisor or reviewer that is not a persona of the council, before any model call', async () => {
    const llm = new ScriptedLlmClient(supervisor({}));
    const deps = (await app(llm)).deps;
    for (const config of [{ supervisor: 'ghost' }, { personas: ['coordinator', 'strategist'], reviewer: 'auditor' }]) {
      const outcome = await processCommand({ text: command(config), source: 's.json' }, deps);
      expect(outcome).toMatchObject({ status: 'paused', reason_code: 'MEANING_UNKNOWN_PERSONA' });
    }
    expect(llm.calls).toHaveLength(0);
  });
});
