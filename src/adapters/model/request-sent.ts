import { subscribe, unsubscribe } from 'node:diagnostics_channel';

/**
 * Resolves when the next model request of this process has been written to its socket (undici's
 * `undici:request:bodySent` diagnostics channel: every request the openai provider makes goes through
 * undici), or after `timeoutMs` when none is (the offline model makes none). A run's first request is
 * built and handed over a few steps after the run says its first call is starting; work that must not
 * delay it (HeadsFirst) waits for this.
 */
export function nextRequestSent(timeoutMs = 20): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      unsubscribe(CHANNEL, done);
      resolve();
    };
    const timer = setTimeout(done, timeoutMs);
    timer.unref?.();
    subscribe(CHANNEL, done);
  });
}

const CHANNEL = 'undici:request:bodySent';
