import { describe, expect, it } from 'vitest';
import { callFailure } from '../../src/app/call-failure.js';
import { RerouteRefusedError } from '../../src/app/routed-llm.js';
import { BudgetExceededError, LlmError } from '../../src/domain/errors.js';
import { decideReroute } from '../../src/domain/reroute.js';
import type { ResolvedRoute } from '../../src/domain/route.js';

// What a failed call means for the run, as the policy table decides it.

const route = (id: string, over: Partial<ResolvedRoute> = {}): ResolvedRoute => ({
  provider: 'openai',
  model: id,
  timeout_ms: 60_000,
  max_retries: 0,
  privileges: ['READ_FILE'],
  json_mode: 'json_schema',
  stream: false,
  locality: 'remote',
  ...over,
  id,
});
const refused = (input: Partial<Parameters<typeof decideReroute>[0]>, failure = new LlmError('upstream 503', true, 503)) =>
  new RerouteRefusedError(
    decideReroute({
      failure: failure.kind,
      original: route('main'),
      candidate: route('backup'),
      rerouteCount: 0,
      maxReroute: 1,
      policySensitive: false,
      ...input,
    }),
    failure,
  );

describe('callFailure', () => {
  it('a crossed budget pauses the run as a judgement, naming the limit', () => {
    const failure = callFailure(
      new BudgetExceededError({ limit: 'max_calls', message: 'model calls: 3 of 2 allowed (config.budget.max_calls)' }),
      'turn',
    );
    expect(failure?.ending).toMatchObject({ kind: 'pause', pauseClass: 'judgement', decision: { reason_code: 'BUDGET_EXCEEDED' } });
    expect(failure?.message).toBe('budget limit reached — model calls: 3 of 2 allowed (config.budget.max_calls)');
    expect(failure?.details).toEqual({ limit: 'max_calls' });
  });

  it("a model that failed with no REROUTE to refuse pauses as the model layer's outage, naming the step", () => {
    const failure = callFailure(new LlmError('upstream 503', true, 503), 'verdict', { id: 'verdict:auditor', persona: 'auditor' });
    expect(failure?.ending).toMatchObject({
      kind: 'pause',
      pauseClass: 'outage',
      decision: { layer: 'model', reason_code: 'MODEL_CALL_FAILED' },
    });
    expect(failure?.message).toMatch(/^a model call \(step verdict:auditor, auditor\) failed: upstream 503 — /);
    expect(failure?.details).toMatchObject({ failure: 'server', http_status: 503, step_id: 'verdict:auditor', persona: 'auditor' });
  });

  it('a quota or a credential failure is never rerouted: a person fixes the route', () => {
    for (const kind of ['quota', 'auth'] as const) {
      const failure = callFailure(new LlmError(`${kind} failure`, false, kind === 'auth' ? 401 : 429, { kind }), 'turn');
      expect(failure?.ending).toMatchObject({ kind: 'pause', pauseClass: 'outage', decision: { layer: 'model' } });
    }
  });

  it.each([
    [{ policySensitive: true }, 'pause', 'REROUTE_NOT_ALLOWED', 'policy_sensitive'],
    [
      { candidate: route('backup', { privileges: ['READ_FILE', 'QUERY_CORTEX'] }) },
      'stop',
      'ACC_PRIVILEGE_ESCALATION',
      'privilege_escalation',
    ],
    [
      { original: route('main', { max_output_tokens: 100 }), candidate: route('backup') },
      'stop',
      'REROUTE_WEAKER_CONSTRAINTS',
      'weaker_constraints',
    ],
    [{ rerouteCount: 1 }, 'pause', 'REROUTE_NOT_ALLOWED', 'reroute_limit'],
  ] as const)('a refused REROUTE (%j) ends as the table says: %s, %s', (input, kind, reason, condition) => {
    const failure = callFailure(refused(input), 'turn', { id: 'turn:r1:auditor', persona: 'auditor' });
    expect(failure?.ending).toMatchObject({ kind, decision: { reason_code: reason } });
    expect(failure?.details).toMatchObject({ condition, failure: 'server', step_id: 'turn:r1:auditor' });
    expect(failure?.message).toContain(`REROUTE was refused (${condition})`);
  });

  it("a refused REROUTE on the mediator's classification pauses as MEDIATOR_CLASSIFICATION_FAILED", () => {
    expect(callFailure(refused({ policySensitive: true }), 'classify')?.ending.decision.reason_code).toBe('MEDIATOR_CLASSIFICATION_FAILED');
  });

  it('anything else is not a call failure: a bug goes on to the caller', () => {
    expect(callFailure(new TypeError('cannot read properties of undefined'), 'turn')).toBeUndefined();
  });
});
