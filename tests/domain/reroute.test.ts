import { describe, expect, it } from 'vitest';
import { decideReroute, type RerouteInput } from '../../src/domain/reroute.js';
import { Route, type ResolvedRoute } from '../../src/domain/route.js';
import type { LlmErrorKind } from '../../src/domain/errors.js';

const route = (id: string, overrides: Partial<Route> = {}, locality: 'local' | 'remote' = 'remote'): ResolvedRoute => ({
  ...Route.parse({ provider: 'openai', model: 'm', ...overrides }),
  id,
  locality,
});
const base = (overrides: Partial<RerouteInput> = {}): RerouteInput => ({
  failure: 'server',
  original: route('primary', { max_output_tokens: 500, temperature: 0.5, timeout_ms: 30_000 }),
  candidate: route('backup', { max_output_tokens: 500, temperature: 0.2, timeout_ms: 10_000 }),
  rerouteCount: 0,
  maxReroute: 1,
  policySensitive: false,
  ...overrides,
});

describe('REROUTE policy', () => {
  it.each<[LlmErrorKind, string]>([
    ['timeout', 'MODEL_TIMEOUT'],
    ['rate_limit', 'MODEL_RATE_LIMITED'],
    ['server', 'MODEL_SERVER_ERROR'],
    ['network', 'MODEL_UNREACHABLE'],
    ['invalid_output', 'MODEL_INVALID_OUTPUT'],
  ])('reroutes a safe %s failure with reason %s', (failure, reason) => {
    const out = decideReroute(base({ failure }));
    expect(out.decision).toEqual({ decision: 'REROUTE', reason_code: reason, sealed: false, overrideable: false, final_decider: 'SYSTEM', layer: 'reroute' });
    expect(out.detail).toContain('"backup"');
  });

  const refusals: [string, Partial<RerouteInput>, string, string, boolean][] = [
    ['quota is never rerouted', { failure: 'quota' }, 'not_reroutable', 'REROUTE_NOT_ALLOWED', false],
    ['auth is never rerouted', { failure: 'auth' }, 'not_reroutable', 'REROUTE_NOT_ALLOWED', false],
    ['no fallback', { candidate: undefined }, 'no_fallback_route', 'REROUTE_NOT_ALLOWED', false],
    ['policy-sensitive task', { policySensitive: true }, 'policy_sensitive', 'REROUTE_NOT_ALLOWED', false],
    ['local → remote', { original: route('local', {}, 'local'), candidate: route('cloud', {}, 'remote') }, 'local_to_remote', 'ACC_PRIVILEGE_ESCALATION', true],
    [
      'more privileges',
      { original: route('p', { privileges: ['READ_FILE'] }), candidate: route('c', { privileges: ['READ_FILE', 'QUERY_CORTEX'] }) },
      'privilege_escalation',
      'ACC_PRIVILEGE_ESCALATION',
      true,
    ],
    ['higher max tokens', { candidate: route('c', { max_output_tokens: 4000, temperature: 0.2, timeout_ms: 10_000 }) }, 'weaker_constraints', 'REROUTE_NOT_ALLOWED', false],
    ['no temperature ceiling', { candidate: route('c', { max_output_tokens: 100, timeout_ms: 10_000 }) }, 'weaker_constraints', 'REROUTE_NOT_ALLOWED', false],
    ['longer timeout', { candidate: route('c', { max_output_tokens: 100, temperature: 0.1, timeout_ms: 90_000 }) }, 'weaker_constraints', 'REROUTE_NOT_ALLOWED', false],
    ['limit reached', { rerouteCount: 1 }, 'reroute_limit', 'REROUTE_NOT_ALLOWED', false],
    ['max_reroute 0', { maxReroute: 0 }, 'reroute_limit', 'REROUTE_NOT_ALLOWED', false],
  ];
  it.each(refusals)('refuses: %s', (_what, overrides, condition, reason, sealed) => {
    const out = decideReroute(base(overrides));
    expect(out.condition).toBe(condition);
    expect(out.decision.reason_code).toBe(reason);
    expect(out.decision.sealed).toBe(sealed);
    if (sealed) expect(out.decision).toMatchObject({ decision: 'STOPPED', layer: 'acc', overrideable: false, final_decider: 'SYSTEM' });
    else expect(out.decision).toMatchObject({ decision: 'PAUSE_FOR_HITL', layer: 'reroute', overrideable: true });
  });

  it('allows remote → local (fewer privileges) and local → local', () => {
    expect(decideReroute(base({ original: route('cloud', {}, 'remote'), candidate: route('local', {}, 'local') })).decision.decision).toBe('REROUTE');
    expect(decideReroute(base({ original: route('a', {}, 'local'), candidate: route('b', {}, 'local') })).decision.decision).toBe('REROUTE');
  });
});
