import { describe, expect, it } from 'vitest';
import {
  routesOfOutage,
  dueProbes,
  isOutageFailure,
  outageOfDetails,
  probeDelayMs,
  probeFailed,
  routeRecovered,
  routesDown,
  tripRoute,
  untilNextProbe,
} from '../../src/domain/route-breaker.js';

const backoff = { firstMs: 1_000, maxMs: 8_000 };
const t0 = new Date('2026-01-01T00:00:00.000Z');
const at = (ms: number) => new Date(t0.getTime() + ms);

describe('the circuit breaker of a route', () => {
  it('opens only on an outage: a refused connection, a 5xx, a timeout; never on a key, a model name or a rate limit', () => {
    expect(['network', 'server', 'timeout'].every(isOutageFailure)).toBe(true);
    expect(['auth', 'bad_request', 'quota', 'rate_limit', 'invalid_output', 'cassette', undefined].some(isOutageFailure)).toBe(false);
    expect(outageOfDetails({ route: 'local', failure: 'network', http_status: 0 })).toEqual({ route: 'local', failure: 'network' });
    expect(outageOfDetails({ route: 'local', failure: 'auth' })).toBeUndefined();
    expect(outageOfDetails({ failure: 'server' })).toBeUndefined();
  });

  it('holds a route down from its first failure, probes it with a doubling wait up to a ceiling, and lets it go when it answers', () => {
    let b = tripRoute({}, { route: 'local', failure: 'network', message: 'refused' }, t0, backoff);
    expect(b.local).toMatchObject({ since: t0.toISOString(), probes: 0, next_probe_at: at(1_000).toISOString() });
    expect(routesDown(b, ['offline', 'local'])).toEqual(['local']);
    expect(routesDown(b, ['offline'])).toEqual([]);
    expect(dueProbes(b, at(999))).toEqual([]);
    expect(untilNextProbe(b, at(400))).toBe(600);
    expect(dueProbes(b, at(1_000))).toEqual(['local']);
    b = probeFailed(b, 'local', 'still refused', at(1_000), backoff);
    expect(b.local).toMatchObject({ probes: 1, next_probe_at: at(3_000).toISOString(), last_probe: 'still refused' });
    // A second outage while it is down keeps when it went down.
    b = tripRoute(b, { route: 'local', failure: 'server', message: 'HTTP 503' }, at(2_000), backoff);
    expect(b.local).toMatchObject({ since: t0.toISOString(), failure: 'server', message: 'HTTP 503' });
    expect([0, 1, 2, 3, 4, 10].map((n) => probeDelayMs(n, backoff))).toEqual([1_000, 2_000, 4_000, 8_000, 8_000, 8_000]);
    b = routeRecovered(b, 'local');
    expect(b).toEqual({});
    expect(untilNextProbe(b, t0)).toBeUndefined();
  });

  it('an outage on a fallback shows down the routes fallen back from on an outage, along the chain, not those left for a refusal', () => {
    const hop = (from: string, to: string, reason_code = 'MODEL_UNREACHABLE') => ({ from, to, reason_code });
    expect(routesOfOutage('c', [hop('a', 'b', 'MODEL_SERVER_ERROR'), hop('b', 'c', 'MODEL_TIMEOUT')])).toEqual(['c', 'b', 'a']);
    expect(routesOfOutage('b', [hop('a', 'b', 'MODEL_AUTH_FAILED')])).toEqual(['b']);
    expect(routesOfOutage('b', [hop('x', 'y')])).toEqual(['b']);
    expect(routesOfOutage('b')).toEqual(['b']);
  });
});
