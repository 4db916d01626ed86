import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { startCallClock } from '../../src/app/call-clock.js';
import type { RouteWait } from '../../src/domain/ports.js';

const wait: RouteWait = { route: 'local', limit: 'max_concurrency' };

// Time is what these tests are about: the clock's timers and Date.now are faked, and moved on by hand.
describe("a call's clock", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('does not count the time the call waits for its route against its time limit', () => {
    const clock = startCallClock({ timeoutMs: 150 });
    vi.advanceTimersByTime(100);
    clock.onWait(wait);
    vi.advanceTimersByTime(10_000);
    clock.onWait(undefined);
    vi.advanceTimersByTime(49);
    expect(clock.timedOut()).toBe(false);
    expect(clock.signal?.aborted).toBe(false);
    vi.advanceTimersByTime(1);
    expect(clock.timedOut()).toBe(true);
    expect(clock.signal?.aborted).toBe(true);
    clock.dispose();
  });

  it('ends a call that outlasts its limit without waiting, and the run’s own signal still ends it', () => {
    const clock = startCallClock({ timeoutMs: 50 });
    vi.advanceTimersByTime(49);
    expect(clock.signal?.aborted).toBe(false);
    vi.advanceTimersByTime(1);
    expect(clock.signal?.aborted).toBe(true);
    clock.dispose();
    const run = new AbortController();
    const other = startCallClock({ signal: run.signal, timeoutMs: 1_000 });
    run.abort();
    expect(other.signal?.aborted).toBe(true);
    expect(other.timedOut()).toBe(false);
    other.dispose();
  });

  it('shows a wait only once it has lasted a moment, and not one that ended sooner; hides it when it ends', () => {
    const shown: RouteWait[] = [];
    let hidden = 0;
    const clock = startCallClock({ show: (w) => shown.push(w), hide: () => hidden++ });
    clock.onWait(wait);
    vi.advanceTimersByTime(499);
    clock.onWait(undefined);
    vi.advanceTimersByTime(10_000);
    expect(shown).toEqual([]);
    expect(hidden).toBe(0);
    clock.onWait({ route: 'local', limit: 'requests_per_minute', waitMs: 9000 });
    vi.advanceTimersByTime(500);
    expect(shown).toEqual([{ route: 'local', limit: 'requests_per_minute', waitMs: 9000 }]);
    clock.onWait(undefined);
    expect(hidden).toBe(1);
    clock.dispose();
  });

  it('leaves no timer behind once disposed', () => {
    const clock = startCallClock({ timeoutMs: 50, show: () => undefined });
    clock.onWait(wait);
    clock.dispose();
    expect(vi.getTimerCount()).toBe(0);
  });
});
