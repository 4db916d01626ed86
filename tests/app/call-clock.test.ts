import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { startCallClock } from '../../src/app/call-clock.js';
import type { RouteWait } from '../../src/domain/ports.js';

const wait: RouteWait = { route: 'local', limit: 'max_concurrency' };

describe("a call's clock", () => {
  it('does not count the time the call waits for its route against its time limit', async () => {
    const clock = startCallClock({ timeoutMs: 150 });
    clock.onWait(wait);
    await sleep(300);
    clock.onWait(undefined);
    await sleep(80);
    expect(clock.timedOut()).toBe(false);
    expect(clock.signal?.aborted).toBe(false);
    await sleep(150);
    expect(clock.timedOut()).toBe(true);
    clock.dispose();
  });

  it('ends a call that outlasts its limit without waiting', async () => {
    const clock = startCallClock({ timeoutMs: 50 });
    await sleep(120);
    expect(clock.signal?.aborted).toBe(true);
    clock.dispose();
  });

  it('shows a wait only once it has lasted a moment, and not one that ended sooner', async () => {
    const shown: RouteWait[] = [];
    const clock = startCallClock({ show: (w) => shown.push(w) });
    clock.onWait(wait);
    await sleep(100);
    clock.onWait(undefined);
    await sleep(600);
    expect(shown).toEqual([]);
    clock.onWait({ route: 'local', limit: 'requests_per_minute', waitMs: 9000 });
    await sleep(650);
    expect(shown).toEqual([{ route: 'local', limit: 'requests_per_minute', waitMs: 9000 }]);
    clock.dispose();
  });
});
