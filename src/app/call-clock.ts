import type { RouteWait } from '../domain/ports.js';

/** How long a call must have waited for its route before the wait is shown (shorter ones are not worth a line). */
export const SHOW_WAIT_AFTER_MS = 500;

/** One call's time limit, stopped while the call waits for its route's limits, and the wait made visible. */
export interface CallClock {
  /** The call's signal: the run's, and the time limit's when there is one. */
  readonly signal: AbortSignal | undefined;
  /** Give to the call (`CallContext.onWait`). */
  readonly onWait: (wait: RouteWait | undefined) => void;
  /** Whether the time limit (not the run) ended the call. */
  timedOut(): boolean;
  /** The call is over: no timer is left behind. */
  dispose(): void;
}

/**
 * Starts a call's clock: `timeoutMs` of the call's own time (none: no limit), paused while its route
 * holds it back, since waiting one's turn is not the endpoint being slow. A wait still going after
 * `SHOW_WAIT_AFTER_MS` is passed to `show`, once per limit waited for.
 */
export function startCallClock(options: {
  signal?: AbortSignal | undefined;
  timeoutMs?: number | undefined;
  show?: (wait: RouteWait) => void;
  /** A wait that was shown is over. */
  hide?: () => void;
}): CallClock {
  const { timeoutMs, show, hide } = options;
  const limit = new AbortController();
  let remaining = timeoutMs ?? Number.POSITIVE_INFINITY;
  let runningSince = Date.now();
  let timer: NodeJS.Timeout | undefined;
  let shown: NodeJS.Timeout | undefined;
  let waiting = false;
  let visible = false;
  const run = (): void => {
    runningSince = Date.now();
    if (Number.isFinite(remaining)) timer = setTimeout(() => limit.abort(new Error('call time limit')), Math.max(0, remaining));
  };
  run();
  const onWait = (wait: RouteWait | undefined): void => {
    clearTimeout(shown);
    if (wait && show) {
      shown = setTimeout(() => {
        visible = true;
        show(wait);
      }, SHOW_WAIT_AFTER_MS);
    }
    if (!wait && visible) {
      visible = false;
      hide?.();
    }
    if (wait && !waiting) {
      waiting = true;
      clearTimeout(timer);
      remaining -= Date.now() - runningSince;
    } else if (!wait && waiting) {
      waiting = false;
      run();
    }
  };
  const signals = [options.signal, timeoutMs === undefined ? undefined : limit.signal].filter((s): s is AbortSignal => s !== undefined);
  return {
    signal: signals.length > 1 ? AbortSignal.any(signals) : signals[0],
    onWait,
    timedOut: () => limit.signal.aborted,
    dispose: () => {
      clearTimeout(timer);
      clearTimeout(shown);
      if (visible) hide?.();
      visible = false;
    },
  };
}

/** A wait as a person reads it. */
export function waitMessage(persona: string, wait: RouteWait): string {
  const why: Record<RouteWait['limit'], string> = {
    max_concurrency: 'its max_concurrency (calls in flight) is reached',
    requests_per_minute: 'its requests_per_minute is reached',
    tokens_per_minute: 'its tokens_per_minute is reached',
    retry_after: 'the endpoint asked for a pause (429 retry-after)',
  };
  const about = wait.waitMs !== undefined ? ` for about ${Math.max(1, Math.round(wait.waitMs / 1000))} s` : '';
  return `${persona}'s call waits${about} for route "${wait.route}": ${why[wait.limit]}; the wait does not count against the call's time limit`;
}
