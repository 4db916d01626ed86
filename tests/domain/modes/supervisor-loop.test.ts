import { describe, expect, it } from 'vitest';
import {
  decisionStepId,
  evaluateLoop,
  isNoOpTurn,
  loopTurnId,
  readDecision,
  type LoopRules,
} from '../../../src/domain/modes/supervisor-loop.js';
import type { Step } from '../../../src/domain/run-state.js';

const rules = (over: Partial<LoopRules> = {}): LoopRules => ({
  supervisor: 'coordinator',
  specialists: ['strategist', 'auditor'],
  maxIterations: 4,
  unreadableApproved: false,
  ...over,
});

let index = 0;
function aStep(id: string, persona: string, reply: string, over: Partial<Step> = {}): Step {
  const round = Number(/i(\d+)/.exec(id)?.[1] ?? 0);
  return {
    id,
    index: index++,
    kind: id.startsWith('decision') ? 'decision' : 'turn',
    persona,
    round,
    prompt: '',
    prompt_sha256: '',
    reply,
    model: 'm',
    started_at: '2026-01-01T00:00:00.000Z',
    duration_ms: 1,
    calls: 1,
    knowledge: [],
    ...over,
  };
}
const decide = (n: number, decision: Record<string, unknown> | string) =>
  aStep(decisionStepId(n), 'coordinator', typeof decision === 'string' ? decision : JSON.stringify(decision));
const delegate = (n: number, target: string | null) => decide(n, { action: 'delegate', target, instruction: `do part ${n}` });
const turn = (n: number, persona: string, reply = `${persona} says something new in iteration ${n}`, over: Partial<Step> = {}) =>
  aStep(loopTurnId(n, persona), persona, reply, over);
const fileRead = {
  action: 'READ_FILE',
  argument: 'docs/plan.md',
  status: 'provided' as const,
  message: 'ok',
  reason_code: 'KNOWLEDGE_PROVIDED',
};

describe('the supervisor loop, read from the finished steps', () => {
  it('asks for the first decision, then the delegated turn, and returns to the supervisor after it', () => {
    expect(evaluateLoop(rules(), []).pending).toEqual({ kind: 'decision', n: 1 });
    expect(evaluateLoop(rules(), [delegate(1, 'strategist')]).pending).toEqual({
      kind: 'turn',
      n: 1,
      specialist: 'strategist',
      instruction: 'do part 1',
    });
    expect(evaluateLoop(rules(), [delegate(1, 'strategist'), turn(1, 'strategist')]).pending).toEqual({ kind: 'decision', n: 2 });
  });

  it('ends when the supervisor says stop or respond, counting delegations', () => {
    const done = [
      delegate(1, 'strategist'),
      turn(1, 'strategist'),
      delegate(2, 'auditor'),
      turn(2, 'auditor'),
      decide(3, { action: 'stop' }),
    ];
    const loop = evaluateLoop(rules(), done);
    expect(loop.end).toEqual({ kind: 'stopped', by: 'stop', iteration: 3 });
    expect(loop.delegations).toBe(2);
    expect(loop.iterations.map((i) => i.outcome)).toEqual(['delegated', 'delegated', 'stop']);
    expect(evaluateLoop(rules(), [decide(1, { action: 'RESPOND', instruction: 'Nothing to delegate: the answer is no.' })]).end).toEqual({
      kind: 'stopped',
      by: 'respond',
      iteration: 1,
    });
  });

  it('trips max_iterations when the supervisor delegates past the limit, and makes no turn for it', () => {
    const done = [delegate(1, 'strategist'), turn(1, 'strategist'), delegate(2, 'auditor'), turn(2, 'auditor'), delegate(3, 'strategist')];
    const loop = evaluateLoop(rules({ maxIterations: 2 }), done);
    expect(loop.end).toEqual({ kind: 'guardrail_stop', limit: 'max_iterations', threshold: 2, iteration: 3 });
    expect(loop.pending).toBeUndefined();
    expect(loop.iterations.at(-1)).toMatchObject({ outcome: 'over_limit', specialist: 'strategist' });
    expect(loop.delegations).toBe(2);
  });

  it('trips on two invalid targets in a row (unknown, missing, itself), and a valid one in between resets the count', () => {
    const two = evaluateLoop(rules(), [delegate(1, 'ghost'), delegate(2, null)]);
    expect(two.end).toEqual({ kind: 'guardrail_stop', limit: 'invalid_targets', threshold: 2, iteration: 2 });
    expect(two.iterations.map((i) => i.problem)).toEqual([
      '"ghost" is not a specialist of this council',
      'a delegation must name its target specialist',
    ]);
    expect(two.delegations).toBe(0);

    const self = evaluateLoop(rules(), [delegate(1, 'coordinator')]);
    expect(self.iterations[0]).toMatchObject({ outcome: 'invalid_target', problem: 'the supervisor cannot delegate to itself', streak: 1 });
    expect(self.pending).toEqual({ kind: 'decision', n: 2 });

    const reset = evaluateLoop(rules(), [delegate(1, 'ghost'), delegate(2, ' Strategist '), turn(2, 'strategist'), delegate(3, 'ghost')]);
    expect(reset.end).toBeUndefined();
    expect(reset.pending).toEqual({ kind: 'decision', n: 4 });
  });

  it('trips on two no-op turns in a row: empty, or a repeat of the same persona (a knowledge request is never a no-op)', () => {
    const repeat = 'I agree with the plan.';
    const done = [
      delegate(1, 'strategist'),
      turn(1, 'strategist', repeat),
      delegate(2, 'auditor'),
      turn(2, 'auditor', '   '),
      delegate(3, 'strategist'),
      turn(3, 'strategist', ` i agree with  the plan. `),
    ];
    const loop = evaluateLoop(rules({ maxIterations: 5 }), done);
    expect(loop.iterations.map((i) => i.noOp)).toEqual([false, true, true]);
    expect(loop.end).toEqual({ kind: 'guardrail_stop', limit: 'no_op_turns', threshold: 2, iteration: 3 });

    const productive = [
      delegate(1, 'strategist'),
      turn(1, 'strategist', repeat),
      delegate(2, 'strategist'),
      turn(2, 'strategist', repeat, { knowledge: [fileRead] }),
    ];
    expect(isNoOpTurn(productive[3]!, productive)).toBe(false);
    const interrupted = [
      delegate(1, 'auditor'),
      turn(1, 'auditor', ''),
      delegate(2, 'strategist'),
      turn(2, 'strategist', 'new'),
      delegate(3, 'auditor'),
      turn(3, 'auditor', ''),
    ];
    expect(evaluateLoop(rules(), interrupted).end).toBeUndefined();
    // A real model rephrases: the same point in other words, after another specialist said it, adds nothing.
    const rephrased = [
      delegate(1, 'strategist'),
      turn(
        1,
        'strategist',
        'Start with the billing reports: they have the fewest dependencies, and the cron box can keep running for two weeks.',
      ),
      delegate(2, 'auditor'),
      turn(
        2,
        'auditor',
        'I agree: the billing reports have the fewest dependencies, so start there and keep the cron box running two weeks.',
      ),
      delegate(3, 'strategist'),
      turn(
        3,
        'strategist',
        'As said, starting with the billing reports (fewest dependencies) while the cron box keeps running for two weeks.',
      ),
    ];
    const loop2 = evaluateLoop(rules(), rephrased);
    expect(loop2.iterations.map((i) => i.noOp)).toEqual([false, true, true]);
    expect(loop2.end).toMatchObject({ kind: 'guardrail_stop', limit: 'no_op_turns' });
  });

  it('holds on a decision that cannot be read (fail closed), and ends the loop there once a person continued', () => {
    const done = [delegate(1, 'strategist'), turn(1, 'strategist'), decide(2, 'I would ask the auditor next.')];
    const held = evaluateLoop(rules(), done);
    expect(held.pending).toMatchObject({ kind: 'hold', n: 2 });
    expect(held.end).toBeUndefined();
    expect(evaluateLoop(rules({ unreadableApproved: true }), done).end).toEqual({ kind: 'stopped', by: 'person', iteration: 2 });
  });

  it('reads decisions through the tolerant reader: fences, prose, case, null keys', () => {
    expect(readDecision('Here it is:\n```json\n{"Action": "Delegate", "target": "auditor", "instruction": null}\n```')).toEqual({
      ok: true,
      value: { action: 'delegate', target: 'auditor', instruction: null },
    });
    expect(readDecision('{"action": "stop"}')).toEqual({ ok: true, value: { action: 'stop' } });
    expect(readDecision('{"action": "escalate", "target": "auditor"}').ok).toBe(false);
    expect(readDecision('{"action": "delegate", "target": "a"} or {"action": "stop"}').ok).toBe(false);
  });
});
