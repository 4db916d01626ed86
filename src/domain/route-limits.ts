/**
 * The limits a route puts on the calls every run of a process sends it (`max_concurrency`,
 * `requests_per_minute`, `tokens_per_minute` in `maestro.config.json`, and a wait an endpoint asked
 * for with a 429's `retry-after`), and the pure rule that says whether one more request may go now.
 * The windows slide: at no instant do the requests (or tokens) sent in the 60 seconds before it
 * exceed the limit, which a fixed per-minute bucket would allow twice over at the turn of a minute.
 */

/** The length of a rate window, in milliseconds. */
export const RATE_WINDOW_MS = 60_000;

/** Which limit a call waits for. */
export type RouteLimitName = 'max_concurrency' | 'requests_per_minute' | 'tokens_per_minute' | 'retry_after';

export interface RouteLimits {
  readonly maxConcurrency?: number | undefined;
  readonly requestsPerMinute?: number | undefined;
  readonly tokensPerMinute?: number | undefined;
  /** The window the per-minute limits count in (default `RATE_WINDOW_MS`; tests shorten it). */
  readonly windowMs?: number | undefined;
}

/**
 * A request counted in the window, and the tokens it is counted for (its reservation, then its real
 * usage). It counts from when it is sent until a window after its reply came back (`at`; infinite
 * while it is in flight): the server received it before that, so however long the request travelled,
 * the server never sees more than the limit in any window either.
 */
export interface SentRequest {
  at: number;
  tokens: number;
}

/** What the route's limiter knows: the calls in flight, the requests of the last window, a pause asked for. */
export interface RouteWindow {
  readonly inFlight: number;
  /** Oldest first. */
  readonly sent: readonly SentRequest[];
  /** No request before this time (ms since the epoch): an endpoint answered 429 with a wait. */
  readonly pausedUntil: number;
}

/** Go now, or wait: for a slot to free (no time known) or `waitMs` at least. */
export type Admission =
  | { readonly go: true }
  | { readonly go: false; readonly limit: RouteLimitName; readonly waitMs?: number }
  | { readonly go: false; readonly limit: 'tokens_per_minute'; readonly never: true };

/** Whether any limit is set (a route with none never waits and keeps no window). */
export function hasLimits(limits: RouteLimits): boolean {
  return limits.maxConcurrency !== undefined || limits.requestsPerMinute !== undefined || limits.tokensPerMinute !== undefined;
}

/** The requests still inside the window that ends at `now`. */
export function inWindow(sent: readonly SentRequest[], now: number, windowMs = RATE_WINDOW_MS): SentRequest[] {
  return sent.filter((s) => s.at > now - windowMs);
}

/**
 * May a request counted for `tokens` go at `now`? The first limit that holds it back says how long
 * (until the oldest request it needs gone leaves the window). A request larger than the whole
 * `tokens_per_minute` can never go: `never`, so the caller fails it rather than wait forever.
 */
export function admit(window: RouteWindow, limits: RouteLimits, now: number, tokens: number): Admission {
  if (window.pausedUntil > now) return { go: false, limit: 'retry_after', waitMs: window.pausedUntil - now };
  if (limits.maxConcurrency !== undefined && window.inFlight >= limits.maxConcurrency) return { go: false, limit: 'max_concurrency' };
  const windowMs = limits.windowMs ?? RATE_WINDOW_MS;
  const recent = inWindow(window.sent, now, windowMs).sort((a, b) => a.at - b.at);
  // When a request leaves the window; one still in flight has no known time yet (a release wakes the waiters).
  const leaves = (s: SentRequest): number | undefined => (Number.isFinite(s.at) ? s.at + windowMs - now : undefined);
  const rpm = limits.requestsPerMinute;
  if (rpm !== undefined && recent.length >= rpm) {
    // The request that must leave for this one to fit: the (n - rpm + 1)th oldest.
    const waitMs = leaves(recent[recent.length - rpm] as SentRequest);
    return { go: false, limit: 'requests_per_minute', ...(waitMs !== undefined ? { waitMs } : {}) };
  }
  const tpm = limits.tokensPerMinute;
  if (tpm !== undefined) {
    if (tokens > tpm) return { go: false, limit: 'tokens_per_minute', never: true };
    let used = recent.reduce((sum, s) => sum + s.tokens, 0);
    if (used + tokens > tpm) {
      for (const s of recent) {
        used -= s.tokens;
        const waitMs = leaves(s);
        if (used + tokens <= tpm) return { go: false, limit: 'tokens_per_minute', ...(waitMs !== undefined ? { waitMs } : {}) };
      }
    }
  }
  return { go: true };
}
