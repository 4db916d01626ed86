import { describe, expect, it } from 'vitest';
import type { LlmErrorKind } from '../../src/domain/errors.js';
import {
  backoffMs,
  decideRetry,
  type FailedAttempt,
  isRetryableKind,
  MAX_BACKOFF_MS,
  MAX_SERVER_WAIT_MS,
  parseRetryAfter,
} from '../../src/domain/retry-policy.js';

const NOW = Date.parse('2026-01-01T00:00:00.000Z');

function anAttempt(overrides: Partial<FailedAttempt> = {}): FailedAttempt {
  return { kind: 'server', retriesMade: 0, maxRetries: 2, random: 0.5, ...overrides };
}

describe('which failures are asked again', () => {
  it.each<LlmErrorKind>(['rate_limit', 'server', 'timeout', 'network', 'invalid_output'])('%s: retried while the budget lasts', (kind) => {
    expect(isRetryableKind(kind)).toBe(true);
    expect(decideRetry(anAttempt({ kind, retriesMade: 0, maxRetries: 2 }))).toMatchObject({ retry: true });
    expect(decideRetry(anAttempt({ kind, retriesMade: 1, maxRetries: 2 }))).toMatchObject({ retry: true });
    expect(decideRetry(anAttempt({ kind, retriesMade: 2, maxRetries: 2 }))).toEqual({ retry: false, why: 'budget_spent' });
  });

  it.each<LlmErrorKind>(['quota', 'auth', 'bad_request', 'cassette'])(
    '%s: never retried, whatever the budget or the wait asked',
    (kind) => {
      expect(isRetryableKind(kind)).toBe(false);
      expect(decideRetry(anAttempt({ kind, maxRetries: 10 }))).toEqual({ retry: false, why: 'not_retryable' });
      expect(decideRetry(anAttempt({ kind, maxRetries: 10, serverWaitMs: 1 }))).toEqual({ retry: false, why: 'not_retryable' });
    },
  );

  it('max_retries 0 means the first failure is the last', () => {
    expect(decideRetry(anAttempt({ kind: 'server', maxRetries: 0 }))).toEqual({ retry: false, why: 'budget_spent' });
    expect(decideRetry(anAttempt({ kind: 'rate_limit', maxRetries: 0, serverWaitMs: 10 }))).toEqual({ retry: false, why: 'budget_spent' });
  });

  it('an endpoint that says not to retry (x-should-retry: false) is not asked again', () => {
    expect(decideRetry(anAttempt({ kind: 'server', serverRefuses: true }))).toEqual({ retry: false, why: 'not_retryable' });
  });
});

describe('how long to wait', () => {
  it('doubles from the kind’s first wait, drawn between half and all of it', () => {
    // server: 500 ms first.
    expect(decideRetry(anAttempt({ kind: 'server', retriesMade: 0, random: 0 }))).toEqual({ retry: true, delayMs: 250 });
    expect(decideRetry(anAttempt({ kind: 'server', retriesMade: 0, random: 0.999999 }))).toEqual({ retry: true, delayMs: 500 });
    expect(decideRetry(anAttempt({ kind: 'server', retriesMade: 1, maxRetries: 3, random: 0 }))).toEqual({ retry: true, delayMs: 500 });
    expect(decideRetry(anAttempt({ kind: 'server', retriesMade: 2, maxRetries: 3, random: 0 }))).toEqual({ retry: true, delayMs: 1_000 });
  });

  it('waits longer on a rate limit than after a broken reply', () => {
    const rateLimit = decideRetry(anAttempt({ kind: 'rate_limit', random: 0 }));
    const broken = decideRetry(anAttempt({ kind: 'invalid_output', random: 0 }));
    expect(rateLimit).toEqual({ retry: true, delayMs: 500 });
    expect(broken).toEqual({ retry: true, delayMs: 50 });
  });

  it('never waits more than the cap, however many retries', () => {
    for (let n = 0; n < 10; n++) {
      const decision = decideRetry(anAttempt({ kind: 'rate_limit', retriesMade: n, maxRetries: 10, random: 0.999 }));
      expect(decision.retry && decision.delayMs).toBeLessThanOrEqual(MAX_BACKOFF_MS);
    }
    expect(backoffMs(500, 9, 1)).toBe(MAX_BACKOFF_MS);
    expect(backoffMs(500, 9, 0)).toBe(MAX_BACKOFF_MS / 2);
  });

  it('spreads callers that failed together (different draws, different waits)', () => {
    const waits = [0, 0.25, 0.5, 0.75].map((random) => backoffMs(1_000, 1, random));
    expect(new Set(waits).size).toBe(4);
    expect(Math.min(...waits)).toBeGreaterThanOrEqual(1_000);
    expect(Math.max(...waits)).toBeLessThanOrEqual(2_000);
  });

  it('honours the wait an endpoint asks for, instead of its own', () => {
    expect(decideRetry(anAttempt({ kind: 'rate_limit', serverWaitMs: 1_000, random: 0 }))).toEqual({ retry: true, delayMs: 1_000 });
    expect(decideRetry(anAttempt({ kind: 'server', serverWaitMs: 1, random: 0.9 }))).toEqual({ retry: true, delayMs: 1 });
    expect(decideRetry(anAttempt({ kind: 'rate_limit', serverWaitMs: 0 }))).toEqual({ retry: true, delayMs: 0 });
  });

  it('gives up at once when the endpoint asks for a wait longer than a call should take', () => {
    const longest = decideRetry(anAttempt({ kind: 'rate_limit', serverWaitMs: MAX_SERVER_WAIT_MS }));
    expect(longest).toEqual({ retry: true, delayMs: MAX_SERVER_WAIT_MS });
    const longer = decideRetry(anAttempt({ kind: 'rate_limit', serverWaitMs: MAX_SERVER_WAIT_MS + 1 }));
    expect(longer).toEqual({ retry: false, why: 'wait_too_long' });
  });
});

describe('reading retry-after', () => {
  it('takes retry-after-ms first, then retry-after in seconds', () => {
    expect(parseRetryAfter({ retryAfterMs: '250', retryAfter: '7' }, NOW)).toBe(250);
    expect(parseRetryAfter({ retryAfterMs: '1.5' }, NOW)).toBe(1.5);
    expect(parseRetryAfter({ retryAfter: '1' }, NOW)).toBe(1_000);
    expect(parseRetryAfter({ retryAfter: ' 20 ' }, NOW)).toBe(20_000);
  });

  it('reads an HTTP date against the clock it is given', () => {
    expect(parseRetryAfter({ retryAfter: 'Thu, 01 Jan 2026 00:00:30 GMT' }, NOW)).toBe(30_000);
    expect(parseRetryAfter({ retryAfter: 'Wed, 31 Dec 2025 23:59:00 GMT' }, NOW)).toBe(0);
  });

  it('ignores what it cannot read, and an absent header', () => {
    for (const value of [null, undefined, '', 'soon', '-5', '1e9', '0x10']) {
      expect(parseRetryAfter({ retryAfter: value, retryAfterMs: value }, NOW)).toBeUndefined();
    }
    expect(parseRetryAfter({ retryAfterMs: 'soon', retryAfter: '2' }, NOW)).toBe(2_000);
  });
});
