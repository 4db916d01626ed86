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
    expect(out.decision).toEqual({
      decision: 'REROUTE',
      reason_code: reason,
      sealed: false,
      overrideable: false,
      final_decider: 'SYSTEM',
      layer: 'reroute',
    });
    expect(out.detail).toContain('"backup"');
  });

  type Expect = ['pause', string, string] | ['sealed'] | ['stop', string];
  const refusals: [string, Partial<RerouteInput>, string, Expect][] = [
    ['quota is never rerouted', { failure: 'quota' }, 'not_reroutable', ['pause', 'model', 'MODEL_QUOTA_EXCEEDED']],
    ['auth is never rerouted', { failure: 'auth' }, 'not_reroutable', ['pause', 'model', 'MODEL_AUTH_FAILED']],
    ['no fallback', { candidate: undefined }, 'no_fallback_route', ['pause', 'reroute', 'REROUTE_NOT_ALLOWED']],
    ['policy-sensitive task', { policySensitive: true }, 'policy_sensitive', ['pause', 'reroute', 'REROUTE_NOT_ALLOWED']],
    ['ambiguous intent', { ambiguous: true }, 'ambiguous_intent', ['pause', 'reroute', 'REROUTE_NOT_ALLOWED']],
    ['local → remote', { original: route('local', {}, 'local'), candidate: route('cloud', {}, 'remote') }, 'local_to_remote', ['sealed']],
    [
      'more privileges',
      { original: route('p', { privileges: ['READ_FILE'] }), candidate: route('c', { privileges: ['READ_FILE', 'QUERY_CORTEX'] }) },
      'privilege_escalation',
      ['sealed'],
    ],
    // Seed 000: a candidate that cannot enforce same-or-stronger constraints → STOPPED (not sealed: fix the route, run again).
    [
      'higher max tokens',
      { candidate: route('c', { max_output_tokens: 4000, temperature: 0.2, timeout_ms: 10_000 }) },
      'weaker_constraints',
      ['stop', 'REROUTE_WEAKER_CONSTRAINTS'],
    ],
    [
      'no temperature ceiling',
      { candidate: route('c', { max_output_tokens: 100, timeout_ms: 10_000 }) },
      'weaker_constraints',
      ['stop', 'REROUTE_WEAKER_CONSTRAINTS'],
    ],
    [
      'longer timeout',
      { candidate: route('c', { max_output_tokens: 100, temperature: 0.1, timeout_ms: 90_000 }) },
      'weaker_constraints',
      ['stop', 'REROUTE_WEAKER_CONSTRAINTS'],
    ],
    ['limit reached', { rerouteCount: 1 }, 'reroute_limit', ['pause', 'reroute', 'REROUTE_NOT_ALLOWED']],
    ['max_reroute 0', { maxReroute: 0 }, 'reroute_limit', ['pause', 'reroute', 'REROUTE_NOT_ALLOWED']],
    // Several rows refuse: the strictest decides (fail closed).
    [
      'sensitive and escalating',
      { policySensitive: true, original: route('local', {}, 'local'), candidate: route('cloud', {}, 'remote') },
      'local_to_remote',
      ['sealed'],
    ],
    [
      'sensitive and weaker',
      { policySensitive: true, candidate: route('c', { max_output_tokens: 4000, temperature: 0.2, timeout_ms: 10_000 }) },
      'weaker_constraints',
      ['stop', 'REROUTE_WEAKER_CONSTRAINTS'],
    ],
  ];
  it.each(refusals)('refuses: %s', (_what, overrides, condition, expected) => {
    const out = decideReroute(base(overrides));
    expect(out.condition).toBe(condition);
    if (expected[0] === 'sealed') {
      expect(out.decision).toEqual({
        decision: 'STOPPED',
        reason_code: 'ACC_PRIVILEGE_ESCALATION',
        layer: 'acc',
        sealed: true,
        overrideable: false,
        final_decider: 'SYSTEM',
      });
    } else if (expected[0] === 'stop') {
      expect(out.decision).toEqual({
        decision: 'STOPPED',
        reason_code: expected[1],
        layer: 'reroute',
        sealed: false,
        overrideable: false,
        final_decider: 'SYSTEM',
      });
    } else {
      expect(out.decision).toEqual({
        decision: 'PAUSE_FOR_HITL',
        reason_code: expected[2],
        layer: expected[1],
        sealed: false,
        overrideable: true,
        final_decider: 'SYSTEM',
      });
    }
  });

  it('records every condition that failed, the deciding one first in the detail', () => {
    const out = decideReroute(
      base({
        policySensitive: true,
        rerouteCount: 1,
        candidate: route('c', { max_output_tokens: 4000, temperature: 0.2, timeout_ms: 10_000 }),
      }),
    );
    expect(out.failed).toEqual(['policy_sensitive', 'weaker_constraints', 'reroute_limit']);
    expect(out.detail.startsWith('fallback "c" cannot enforce')).toBe(true);
  });

  it('allows remote → local (fewer privileges) and local → local', () => {
    expect(decideReroute(base({ original: route('cloud', {}, 'remote'), candidate: route('local', {}, 'local') })).decision.decision).toBe(
      'REROUTE',
    );
    expect(decideReroute(base({ original: route('a', {}, 'local'), candidate: route('b', {}, 'local') })).decision.decision).toBe(
      'REROUTE',
    );
  });
});
