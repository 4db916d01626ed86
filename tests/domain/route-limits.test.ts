import { describe, expect, it } from 'vitest';
import { admit, RATE_WINDOW_MS, type SentRequest } from '../../src/domain/route-limits.js';

const window = (sent: SentRequest[], inFlight = 0, pausedUntil = 0) => ({ inFlight, sent, pausedUntil });
const at = (...times: number[]): SentRequest[] => times.map((t) => ({ at: t, tokens: 100 }));

describe('route limits (sliding windows)', () => {
  it('lets a request go while every limit has room', () => {
    expect(admit(window(at(0, 1000)), { maxConcurrency: 2, requestsPerMinute: 3, tokensPerMinute: 1000 }, 2000, 100)).toEqual({ go: true });
  });

  it('holds a request while max_concurrency calls are in flight, with no time known', () => {
    expect(admit(window([], 2), { maxConcurrency: 2 }, 0, 0)).toEqual({ go: false, limit: 'max_concurrency' });
  });

  it('counts requests_per_minute in any 60-second window, not per calendar minute', () => {
    // Three sent at 10 s, 50 s and 59 s: at 61 s the window (1 s, 61 s] still holds all three.
    const sent = at(10_000, 50_000, 59_000);
    expect(admit(window(sent), { requestsPerMinute: 3 }, 61_000, 0)).toEqual({ go: false, limit: 'requests_per_minute', waitMs: 9_000 });
    // Once the oldest leaves (at 70 s), one more fits.
    expect(admit(window(sent), { requestsPerMinute: 3 }, 70_000, 0)).toEqual({ go: true });
    expect(admit(window(sent), { requestsPerMinute: 2 }, 61_000, 0)).toEqual({ go: false, limit: 'requests_per_minute', waitMs: 49_000 });
  });

  it('keeps a request in flight in the window until a window after its reply', () => {
    const sent = [{ at: Number.POSITIVE_INFINITY, tokens: 0 }];
    expect(admit(window(sent, 1), { requestsPerMinute: 1 }, 10 * RATE_WINDOW_MS, 0)).toEqual({ go: false, limit: 'requests_per_minute' });
  });

  it('counts tokens_per_minute by weight, and refuses for good a request larger than the whole limit', () => {
    const sent = [
      { at: 0, tokens: 600 },
      { at: 30_000, tokens: 300 },
    ];
    expect(admit(window(sent), { tokensPerMinute: 1000 }, 40_000, 100)).toEqual({ go: true });
    expect(admit(window(sent), { tokensPerMinute: 1000 }, 40_000, 200)).toEqual({ go: false, limit: 'tokens_per_minute', waitMs: 20_000 });
    expect(admit(window(sent), { tokensPerMinute: 1000 }, 40_000, 1001)).toEqual({ go: false, limit: 'tokens_per_minute', never: true });
  });

  it("holds every request while the endpoint's retry-after runs, limits or not", () => {
    expect(admit(window([], 0, 5_000), {}, 1_000, 0)).toEqual({ go: false, limit: 'retry_after', waitMs: 4_000 });
    expect(admit(window([], 0, 5_000), {}, 5_000, 0)).toEqual({ go: true });
  });
});
