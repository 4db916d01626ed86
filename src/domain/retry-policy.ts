import type { LlmErrorKind } from './errors.js';

/**
 * The one retry policy for a model call on its route: which failures are asked again, how many
 * times (the route's `max_retries`), and how long to wait before each retry. Pure: the caller
 * passes the jitter's random draw and the time now. Nothing under it (the SDK, the HTTP layer)
 * retries on its own, so no request is sent more often than this says.
 */

/** Per failure kind: whether another attempt on the same route may help, and the first wait before it. */
interface RetryRule {
  readonly retry: boolean;
  /** Milliseconds before the first retry; each later one waits twice as long (up to `MAX_BACKOFF_MS`). */
  readonly firstDelayMs: number;
}

/** Quota, auth and a bad request are never retried: no wait or second try changes the answer. */
export const RETRY_RULES: Readonly<Record<LlmErrorKind, RetryRule>> = {
  // Rate windows are counted in seconds: a retry sooner than that is refused again.
  rate_limit: { retry: true, firstDelayMs: 1_000 },
  server: { retry: true, firstDelayMs: 500 },
  timeout: { retry: true, firstDelayMs: 500 },
  network: { retry: true, firstDelayMs: 500 },
  // A reply that arrived broken (not JSON, no choices, a cut stream) is not a busy endpoint: ask again soon.
  invalid_output: { retry: true, firstDelayMs: 100 },
  quota: { retry: false, firstDelayMs: 0 },
  auth: { retry: false, firstDelayMs: 0 },
  bad_request: { retry: false, firstDelayMs: 0 },
  cassette: { retry: false, firstDelayMs: 0 },
};

/** The longest computed wait between two attempts, in milliseconds. */
export const MAX_BACKOFF_MS = 8_000;

/** The longest wait an endpoint may ask for (`retry-after`) that is waited out; a longer one fails the call now. */
export const MAX_SERVER_WAIT_MS = 60_000;

/** Whether a failure of this kind is worth another attempt (on this route or, for REROUTE, another). */
export function isRetryableKind(kind: LlmErrorKind): boolean {
  return RETRY_RULES[kind].retry;
}

/** One failed attempt of a call, and what is known around it. */
export interface FailedAttempt {
  readonly kind: LlmErrorKind;
  /** Retries already made for this call (0 after the first attempt). */
  readonly retriesMade: number;
  /** The route's `max_retries`. */
  readonly maxRetries: number;
  /** The wait the endpoint asked for, in milliseconds (see `parseRetryAfter`), when it asked. */
  readonly serverWaitMs?: number | undefined;
  /** The endpoint said this request should not be retried (`x-should-retry: false`). */
  readonly serverRefuses?: boolean;
  /** A draw in [0, 1) for the jitter. */
  readonly random: number;
}

/** Retry after `delayMs`, or give up, saying why. */
export type RetryDecision =
  | { readonly retry: true; readonly delayMs: number }
  | { readonly retry: false; readonly why: 'not_retryable' | 'budget_spent' | 'wait_too_long' };

/** What to do after a failed attempt. A wait the endpoint asked for is honoured as it is; otherwise the backoff decides. */
export function decideRetry(attempt: FailedAttempt): RetryDecision {
  const rule = RETRY_RULES[attempt.kind];
  if (!rule.retry || attempt.serverRefuses === true) return { retry: false, why: 'not_retryable' };
  if (attempt.retriesMade >= attempt.maxRetries) return { retry: false, why: 'budget_spent' };
  const asked = attempt.serverWaitMs;
  if (asked !== undefined) {
    return asked > MAX_SERVER_WAIT_MS ? { retry: false, why: 'wait_too_long' } : { retry: true, delayMs: Math.max(0, Math.ceil(asked)) };
  }
  return { retry: true, delayMs: backoffMs(rule.firstDelayMs, attempt.retriesMade, attempt.random) };
}

/**
 * Exponential backoff with jitter: the wait before retry n+1 is drawn from [½, 1] × first × 2ⁿ,
 * capped at `MAX_BACKOFF_MS`, so that callers failing together do not come back together.
 */
export function backoffMs(firstDelayMs: number, retriesMade: number, random: number): number {
  const ceiling = Math.min(firstDelayMs * 2 ** retriesMade, MAX_BACKOFF_MS);
  return Math.round(ceiling * (0.5 + 0.5 * Math.min(Math.max(random, 0), 1)));
}

/** The headers in which an endpoint asks for a wait, as received (null or undefined when absent). */
export interface RetryAfterHeaders {
  /** `retry-after-ms`: milliseconds (OpenAI and Azure send it). */
  readonly retryAfterMs?: string | null | undefined;
  /** `retry-after`: seconds, or an HTTP date. */
  readonly retryAfter?: string | null | undefined;
}

/** The wait an endpoint asks for, in milliseconds (0 for a date already past); undefined when it asks none or says nothing readable. */
export function parseRetryAfter(headers: RetryAfterHeaders, nowMs: number): number | undefined {
  const ms = readNumber(headers.retryAfterMs);
  if (ms !== undefined) return Math.max(0, ms);
  const value = headers.retryAfter?.trim();
  if (!value) return undefined;
  const seconds = readNumber(value);
  if (seconds !== undefined) return Math.max(0, seconds * 1_000);
  // An HTTP date starts with the day's name ("Thu, 01 Jan 2026 00:00:30 GMT"); Date.parse alone would take "-5" for a year.
  const date = /^[A-Za-z]{3}/.test(value) ? Date.parse(value) : Number.NaN;
  return Number.isNaN(date) ? undefined : Math.max(0, date - nowMs);
}

function readNumber(text: string | null | undefined): number | undefined {
  if (!text || !/^\s*\d+(\.\d+)?\s*$/.test(text)) return undefined;
  return Number(text);
}
