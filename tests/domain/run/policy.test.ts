import { describe, expect, it } from 'vitest';
import { checkDecisionInvariants } from '../../../src/domain/decision.js';
import { pauseDecision, sealedStopDecision } from '../../../src/domain/decision.js';
import {
  CALLS,
  decideRun,
  decidingCondition,
  POLICY_TABLE,
  policyRowFor,
  type PolicyEvent,
  type RerouteCondition,
} from '../../../src/domain/run/policy.js';

/**
 * The run's one policy table, with no I/O: one test per row of seed 000's REROUTE table and per
 * sealing rule, on every kind of call; the pause classes come from the cause, never the layer.
 */
const SEED_000_ROWS: [
  string,
  RerouteCondition,
  { kind: 'reroute' } | { kind: 'pause'; reason: string } | { kind: 'stop'; sealed: boolean; reason: string },
][] = [
  ['undefined spec / ambiguous intent → PAUSE_FOR_HITL', 'ambiguous_intent', { kind: 'pause', reason: 'REROUTE_NOT_ALLOWED' }],
  [
    'policy-sensitive category (PII, secrets, high stakes) → no REROUTE, PAUSE_FOR_HITL',
    'policy_sensitive',
    { kind: 'pause', reason: 'REROUTE_NOT_ALLOWED' },
  ],
  [
    'candidate with higher privileges → STOPPED (sealed)',
    'privilege_escalation',
    { kind: 'stop', sealed: true, reason: 'ACC_PRIVILEGE_ESCALATION' },
  ],
  ['candidate local → remote → STOPPED (sealed)', 'local_to_remote', { kind: 'stop', sealed: true, reason: 'ACC_PRIVILEGE_ESCALATION' }],
  [
    'candidate cannot enforce same-or-stronger constraints → STOPPED',
    'weaker_constraints',
    { kind: 'stop', sealed: false, reason: 'REROUTE_WEAKER_CONSTRAINTS' },
  ],
  ['safe class, same-or-lower privileges, same-or-stronger constraints → REROUTE', 'allowed', { kind: 'reroute' }],
  ['REROUTE count exceeds limit → PAUSE_FOR_HITL', 'reroute_limit', { kind: 'pause', reason: 'REROUTE_NOT_ALLOWED' }],
];

describe('the policy table: seed 000 REROUTE rows on every call', () => {
  for (const [row, condition, expected] of SEED_000_ROWS) {
    it.each(CALLS)(`${row} — on a %s call`, (call) => {
      const ending = decideRun({ kind: 'route_failed', call, failure: 'server', condition });
      expect(checkDecisionInvariants(ending.decision)).toEqual([]);
      if (expected.kind === 'reroute') {
        expect(ending).toEqual({
          kind: 'reroute',
          decision: expect.objectContaining({ decision: 'REROUTE', reason_code: 'MODEL_SERVER_ERROR', layer: 'reroute' }),
        });
      } else if (expected.kind === 'pause') {
        // A refused REROUTE is caused by a route that did not answer: an outage, never counted by the loop
        // policy. The mediator's classification names itself: nothing was sent to the council.
        const reason = call === 'classify' ? 'MEDIATOR_CLASSIFICATION_FAILED' : expected.reason;
        expect(ending).toMatchObject({
          kind: 'pause',
          pauseClass: 'outage',
          decision: { decision: 'PAUSE_FOR_HITL', reason_code: reason, sealed: false, overrideable: true },
        });
      } else {
        expect(ending).toMatchObject({
          kind: 'stop',
          status: 'stopped',
          decision: {
            decision: 'STOPPED',
            reason_code: expected.reason,
            sealed: expected.sealed,
            overrideable: false,
            final_decider: 'SYSTEM',
          },
        });
      }
    });
  }
});

describe('sealing rules: a sealed stop ends the run whichever call met it', () => {
  const sealing: [string, PolicyEvent | ((call: (typeof CALLS)[number]) => PolicyEvent)][] = [
    ['a privilege escalation', (call) => ({ kind: 'route_failed', call, failure: 'timeout', condition: 'privilege_escalation' })],
    ['data leaving the machine', (call) => ({ kind: 'route_failed', call, failure: 'network', condition: 'local_to_remote' })],
    ['a secret in the task', { kind: 'gate', decision: sealedStopDecision('ethics', 'ETHICS_SECRET_DETECTED') }],
    ['personal data under policy.pii stop', { kind: 'gate', decision: sealedStopDecision('ethics', 'ETHICS_PII_DETECTED') }],
    ['a path escaping the workspace', { kind: 'gate', decision: sealedStopDecision('acc', 'ACC_PATH_ESCAPE') }],
    ['the terminal guard', { kind: 'gate', decision: sealedStopDecision('acc', 'ACC_STOPPED_IS_TERMINAL') }],
    ['the fourth pause of a conflict', { kind: 'loop_limit' }],
  ];
  for (const [what, event] of sealing) {
    it.each(CALLS)(`${what}, on a %s call, is a sealed STOPPED at ethics or acc`, (call) => {
      const ending = decideRun(typeof event === 'function' ? event(call) : event);
      expect(ending.kind).toBe('stop');
      expect(ending.decision).toMatchObject({ decision: 'STOPPED', sealed: true, overrideable: false, final_decider: 'SYSTEM' });
      expect(['ethics', 'acc']).toContain(ending.decision.layer);
      expect(checkDecisionInvariants(ending.decision)).toEqual([]);
    });
  }
});

describe('pause classes come from the cause', () => {
  it.each(CALLS)("a reply unreadable after its retry on a %s call is an outage, never the council's doubt", (call) => {
    const ending = decideRun({ kind: 'reply_unreadable', call });
    expect(ending).toMatchObject({ kind: 'pause', pauseClass: 'outage', decision: { decision: 'PAUSE_FOR_HITL', sealed: false } });
  });

  it('names the unreadable call: the classification, the supervisor decision, the verdicts', () => {
    expect(decideRun({ kind: 'reply_unreadable', call: 'classify' }).decision.reason_code).toBe('MEDIATOR_CLASSIFICATION_FAILED');
    expect(decideRun({ kind: 'reply_unreadable', call: 'decision' }).decision.reason_code).toBe('SUPERVISOR_DECISION_INVALID');
    for (const call of ['verdict', 'assessment', 'review'] as const)
      expect(decideRun({ kind: 'reply_unreadable', call }).decision.reason_code).toBe('ARBITRATION_VERDICTS_UNREADABLE');
    expect(decideRun({ kind: 'reply_unreadable', call: 'item' }).decision.reason_code).toBe('MODEL_REPLY_UNREADABLE');
  });

  it.each(['quota', 'auth', 'bad_request'] as const)('a %s failure is never rerouted: an outage pause at the model layer', (failure) => {
    expect(decideRun({ kind: 'route_failed', call: 'verdict', failure, condition: 'not_reroutable' })).toMatchObject({
      kind: 'pause',
      pauseClass: 'outage',
      decision: { layer: 'model' },
    });
  });

  it.each(CALLS)(
    'a failure where one client serves everyone (no REROUTE to weigh) on a %s call is an outage, MODEL_CALL_FAILED',
    (call) => {
      expect(decideRun({ kind: 'route_failed', call, failure: 'server', condition: 'not_routed' })).toMatchObject({
        kind: 'pause',
        pauseClass: 'outage',
        decision: { layer: 'model', reason_code: call === 'classify' ? 'MEDIATOR_CLASSIFICATION_FAILED' : 'MODEL_CALL_FAILED' },
      });
    },
  );

  it('a readable doubt, a judging gate and a budget are judgements; a set-up problem is not', () => {
    expect(decideRun({ kind: 'council_doubt', reason: 'ARBITRATION_ESCALATE' })).toMatchObject({
      pauseClass: 'judgement',
      decision: { layer: 'arbitration', reason_code: 'ARBITRATION_ESCALATE' },
    });
    expect(decideRun({ kind: 'gate', decision: pauseDecision('ethics', 'ETHICS_HIGH_STAKES') })).toMatchObject({
      pauseClass: 'judgement',
      decision: { layer: 'ethics' },
    });
    expect(decideRun({ kind: 'budget_exceeded' })).toMatchObject({ pauseClass: 'judgement', decision: { reason_code: 'BUDGET_EXCEEDED' } });
    for (const reason of ['MEANING_UNKNOWN_PERSONA', 'CONSISTENCY_INPUT_MISSING', 'MEANING_EMPTY_TASK'] as const) {
      const layer = reason.startsWith('CONSISTENCY') ? 'consistency' : 'meaning';
      expect(decideRun({ kind: 'gate', decision: pauseDecision(layer, reason) })).toMatchObject({
        pauseClass: 'setup',
        decision: { layer, reason_code: reason },
      });
    }
  });
});

describe('other endings', () => {
  it('a guardrail stop is a stop of its own status, never a completion', () => {
    expect(decideRun({ kind: 'guardrail', reason: 'LOOP_GUARDRAIL_MAX_ITERATIONS' })).toEqual({
      kind: 'stop',
      status: 'guardrail_stopped',
      decision: {
        decision: 'STOPPED',
        reason_code: 'LOOP_GUARDRAIL_MAX_ITERATIONS',
        sealed: false,
        overrideable: false,
        final_decider: 'SYSTEM',
        layer: 'deliberation',
      },
    });
  });

  it("a person's stop is the user's, unsealed; a completion runs", () => {
    expect(decideRun({ kind: 'person_stop' }).decision).toEqual({
      decision: 'STOPPED',
      reason_code: 'HITL_STOP',
      sealed: false,
      overrideable: false,
      final_decider: 'USER',
      layer: 'hitl',
    });
    expect(decideRun({ kind: 'completed' })).toMatchObject({
      kind: 'complete',
      decision: { decision: 'RUN', reason_code: 'RUN_COMPLETED' },
    });
  });

  it('every decision the table can make keeps the invariants I1–I5', () => {
    const conditions: RerouteCondition[] = [
      'allowed',
      'not_reroutable',
      'not_routed',
      'no_fallback_route',
      'ambiguous_intent',
      'policy_sensitive',
      'privilege_escalation',
      'local_to_remote',
      'weaker_constraints',
      'reroute_limit',
    ];
    for (const call of CALLS) {
      for (const condition of conditions)
        expect(checkDecisionInvariants(decideRun({ kind: 'route_failed', call, failure: 'timeout', condition }).decision)).toEqual([]);
      expect(checkDecisionInvariants(decideRun({ kind: 'reply_unreadable', call }).decision)).toEqual([]);
    }
  });

  it('every row is reachable and every sealed row sits on ethics or acc', () => {
    for (const row of POLICY_TABLE)
      if (row.outcome === 'sealed_stop' && !row.cause.startsWith('gate')) expect(['ethics', 'acc']).toContain(row.layer);
    expect(policyRowFor({ kind: 'reply_unreadable', call: 'turn' }).cause).toBe('reply_unreadable');
  });

  it('when several REROUTE rows refuse, the strictest decides', () => {
    expect(decidingCondition(['policy_sensitive', 'privilege_escalation'])).toBe('privilege_escalation');
    expect(decidingCondition(['reroute_limit', 'weaker_constraints'])).toBe('weaker_constraints');
    expect(decidingCondition([])).toBe('allowed');
  });
});
