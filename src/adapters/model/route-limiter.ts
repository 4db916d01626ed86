import { admit, hasLimits, inWindow, type RouteLimitName, type RouteLimits, type SentRequest } from '../../domain/route-limits.js';
import type { RouteWait } from '../../domain/ports.js';

/** A request larger than the route's whole `tokens_per_minute`: it could never be sent within the limit. */
export class RouteLimitTooSmallError extends Error {}

/** The right to send one request: give it back when the reply is in, with the tokens it really used. */
export interface RoutePermit {
  release(usedTokens?: number): void;
}

interface Waiter {
  readonly tokens: number;
  readonly onWait: ((wait: RouteWait | undefined) => void) | undefined;
  announced: RouteLimitName | undefined;
  readonly resolve: (permit: RoutePermit) => void;
  readonly reject: (error: unknown) => void;
}

const NO_LIMIT: RoutePermit = { release: () => undefined };

/**
 * One route's limits, shared by every call of every run in the process: at most `max_concurrency`
 * requests in flight, at most `requests_per_minute` requests and `tokens_per_minute` tokens in any
 * 60-second window (a sliding window, `domain/route-limits.ts`), and none while the endpoint asked
 * for a pause (a 429's `retry-after`). Calls wait their turn first come, first served; a waiting
 * call is told (`onWait`) so the run can show it and stop its time limit's clock.
 *
 * Written here rather than taken from a library: p-limit counts only calls in flight, and bottleneck's
 * reservoir refills per fixed interval, so neither keeps "never more than N in any 60 seconds" exactly,
 * nor weighs a request by its tokens without it also counting against the calls in flight.
 */
export class RouteLimiter {
  readonly #route: string;
  readonly #limits: RouteLimits;
  readonly #now: () => number;
  readonly #queue: Waiter[] = [];
  #inFlight = 0;
  #sent: SentRequest[] = [];
  #pausedUntil = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(route: string, limits: RouteLimits, now: () => number = Date.now) {
    this.#route = route;
    this.#limits = limits;
    this.#now = now;
  }

  /**
   * Resolves when a request counted for `tokens` may be sent. Rejects with the signal's reason when
   * it aborts while waiting, and with RouteLimitTooSmallError when the request could never fit.
   */
  acquire(tokens: number, options: { signal?: AbortSignal; onWait?: (wait: RouteWait | undefined) => void } = {}): Promise<RoutePermit> {
    // A route with no limit is never held back, only by a `retry-after`.
    if (!hasLimits(this.#limits) && this.#pausedUntil <= this.#now()) return Promise.resolve(NO_LIMIT);
    options.signal?.throwIfAborted();
    return new Promise<RoutePermit>((resolve, reject) => {
      const signal = options.signal;
      const waiter: Waiter = {
        tokens,
        onWait: options.onWait,
        announced: undefined,
        resolve: (permit) => {
          signal?.removeEventListener('abort', abort);
          resolve(permit);
        },
        reject: (error) => {
          signal?.removeEventListener('abort', abort);
          reject(error);
        },
      };
      const abort = (): void => {
        const at = this.#queue.indexOf(waiter);
        if (at < 0) return;
        this.#queue.splice(at, 1);
        reject(signal?.reason);
        this.#pump();
      };
      signal?.addEventListener('abort', abort, { once: true });
      this.#queue.push(waiter);
      this.#pump();
    });
  }

  /** The endpoint asked for a wait (a 429's `retry-after`): no call on this route is sent before it is over. */
  pause(ms: number): void {
    if (!(ms > 0)) return;
    this.#pausedUntil = Math.max(this.#pausedUntil, this.#now() + ms);
    this.#pump();
  }

  /** Lets through, oldest first, every waiting call that may go now; arms a timer for the first that may not. */
  #pump(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    while (this.#queue.length > 0) {
      const head = this.#queue[0] as Waiter;
      const now = this.#now();
      this.#sent = inWindow(this.#sent, now, this.#limits.windowMs);
      const admission = admit(
        { inFlight: this.#inFlight, sent: this.#sent, pausedUntil: this.#pausedUntil },
        this.#limits,
        now,
        head.tokens,
      );
      if (admission.go) {
        this.#queue.shift();
        if (head.announced) head.onWait?.(undefined);
        head.resolve(this.#grant(head.tokens));
        continue;
      }
      if ('never' in admission) {
        this.#queue.shift();
        const tpm = this.#limits.tokensPerMinute;
        head.reject(new RouteLimitTooSmallError(`about ${head.tokens} tokens, more than the route's tokens_per_minute (${tpm})`));
        continue;
      }
      for (const waiter of this.#queue) this.#announce(waiter, admission.limit, admission.waitMs);
      if (admission.waitMs !== undefined) this.#timer = setTimeout(() => this.#pump(), Math.max(1, Math.ceil(admission.waitMs)));
      return;
    }
  }

  #announce(waiter: Waiter, limit: RouteLimitName, waitMs: number | undefined): void {
    if (waiter.announced === limit) return;
    waiter.announced = limit;
    waiter.onWait?.({ route: this.#route, limit, ...(waitMs !== undefined ? { waitMs } : {}) });
  }

  #grant(tokens: number): RoutePermit {
    this.#inFlight += 1;
    const entry: SentRequest = { at: Number.POSITIVE_INFINITY, tokens };
    this.#sent.push(entry);
    let released = false;
    return {
      release: (usedTokens) => {
        if (released) return;
        released = true;
        this.#inFlight -= 1;
        entry.at = this.#now();
        // Counted from then on for what it really used (the reservation was an estimate).
        if (usedTokens !== undefined) entry.tokens = usedTokens;
        this.#pump();
      },
    };
  }
}
