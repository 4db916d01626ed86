import { describe, expect, it, vi } from 'vitest';
import { RouteBreaker, type RouteBreakerOptions } from '../../src/app/route-breaker.js';
import type { RunReader } from '../../src/domain/ports.js';
import type { RouteHealthFile } from '../../src/domain/route-breaker.js';
import type { RunState } from '../../src/domain/run-state.js';

// The breaker in process: which pauses open it, what it lets through, what it resumes.
type Paused = {
  status: string;
  pause?: { pause_id: string; message: string; outage?: { route: string; failure: string } };
  reroutes?: { persona: string; from: string; to: string; reason_code: string; at_step: number }[];
};

function ledger(runs: Record<string, Paused>): RunReader {
  return {
    list: async () => Object.keys(runs).sort(),
    load: async (id) => (runs[id] ? ({ run_id: id, ...runs[id] } as unknown as RunState) : undefined),
    readFile: async () => undefined,
  };
}
const outagePause = (route: string, failure = 'network'): Paused => ({
  status: 'paused',
  pause: { pause_id: 'p1', message: `route "${route}" could not connect`, outage: { route, failure } },
});
/** Waits for something the breaker does on its own timers (its probes back off from 10 ms here). */
const waitUntil = (what: () => boolean): Promise<void> => vi.waitFor(() => expect(what()).toBe(true), { timeout: 5_000, interval: 5 });

function breaker(runs: Record<string, Paused>, options: Partial<RouteBreakerOptions> & { answers?: () => boolean } = {}) {
  const resumed: string[] = [];
  const saved: RouteHealthFile[] = [];
  const notices: string[] = [];
  let probes = 0;
  const b = new RouteBreaker({
    ledger: ledger(runs),
    routesOf: async (file) => (file.name.startsWith('other') ? ['other'] : ['local']),
    probe: async () => {
      probes += 1;
      return options.answers?.() ? undefined : 'still refused';
    },
    resume: async (runId) => void resumed.push(runId),
    resumeAfterOutage: true,
    clock: { now: () => new Date() },
    save: async (h) => void saved.push(h),
    pid: 7,
    onNotice: (_run, message) => void notices.push(message),
    backoff: { firstMs: 10, maxMs: 40 },
    ...options,
  });
  return { b, resumed, saved, notices, probes: () => probes };
}
const file = (name: string) => ({ name, mtimeMs: 0 });

describe('RouteBreaker', () => {
  it('opens on an outage pause only, holds back only the commands that need the route, and resumes only the runs its outage paused', async () => {
    let up = false;
    const runs: Record<string, Paused> = {
      r1: { status: 'paused', pause: { pause_id: 'p1', message: 'the key is refused', outage: { route: 'local', failure: 'auth' } } },
      r2: { status: 'paused', pause: { pause_id: 'p1', message: 'the council doubts' } },
    };
    const { b, resumed, saved } = breaker(runs, { answers: () => up });
    let woken = 0;
    await b.start(() => void (woken += 1));
    await b.afterRun('r1');
    await b.afterRun('r2');
    expect(await b.mayClaim(file('c1.json'))).toBe(true);

    runs.r3 = outagePause('local');
    await b.afterRun('r3');
    expect(Object.keys(b.down)).toEqual(['local']);
    expect(saved.at(-1)?.down.local).toMatchObject({ failure: 'network' });
    expect(await b.mayClaim(file('c1.json'))).toBe(false);
    expect(await b.mayClaim(file('other.json'))).toBe(true);
    expect(await b.mayClaim()).toBe(false);

    await waitUntil(() => (b.down.local?.probes ?? 0) > 1);
    expect(resumed).toEqual([]);
    up = true;
    await waitUntil(() => woken > 0);
    expect(b.down).toEqual({});
    expect(resumed).toEqual(['r3']);
    expect(await b.mayClaim(file('c1.json'))).toBe(true);
    b.stop();
  });

  it('with resume_after_outage false, the route opens and closes but the paused runs wait for a person', async () => {
    const runs: Record<string, Paused> = { r1: outagePause('local', 'server') };
    const { b, resumed, notices } = breaker(runs, { answers: () => true, resumeAfterOutage: false });
    await b.start(() => undefined);
    expect(b.down).toEqual({});
    expect(resumed).toEqual([]);
    expect(notices.join('\n')).toContain('wait for a person (resume_after_outage is false)');
    b.stop();
  });

  it('at start, probes the routes of runs an outage paused: resumes them when it answers, holds the route down when not', async () => {
    const up = breaker({ r1: outagePause('local') }, { answers: () => true });
    await up.b.start(() => undefined);
    expect(up.resumed).toEqual(['r1']);
    expect(up.b.down).toEqual({});
    const down = breaker({ r1: outagePause('local') }, { answers: () => false });
    await down.b.start(() => undefined);
    expect(down.resumed).toEqual([]);
    expect(Object.keys(down.b.down)).toEqual(['local']);
    down.b.stop();
  });

  it('an outage on a fallback route holds back the commands that need the route it fell back from (both were down)', async () => {
    let localUp = false;
    const fellBack = { persona: 'coordinator', from: 'local', to: 'backup', reason_code: 'MODEL_UNREACHABLE', at_step: 0 };
    const runs: Record<string, Paused> = { r1: { ...outagePause('backup'), reroutes: [fellBack] } };
    const { b, resumed } = breaker(runs, {
      answers: () => localUp,
      probe: async (route) => (route === 'local' && localUp ? undefined : 'refused'),
    });
    let woken = 0;
    await b.start(() => void (woken += 1));
    expect(Object.keys(b.down).sort()).toEqual(['backup', 'local']);
    expect(await b.mayClaim(file('c1.json'))).toBe(false);

    // The primary answers again: queued commands go on; the run waits for the route its outage paused it on.
    localUp = true;
    await waitUntil(() => woken > 0);
    expect(Object.keys(b.down)).toEqual(['backup']);
    expect(await b.mayClaim(file('c1.json'))).toBe(true);
    expect(resumed).toEqual([]);
    b.stop();
  });

  it('a run that fell back for another reason than an outage (a refused key) does not hold back its first route', async () => {
    const refused = { persona: 'coordinator', from: 'local', to: 'backup', reason_code: 'MODEL_AUTH_FAILED', at_step: 0 };
    const runs: Record<string, Paused> = { r1: { status: 'running' } };
    const { b } = breaker(runs);
    await b.start(() => undefined);
    runs.r1 = { ...outagePause('backup'), reroutes: [refused] };
    await b.afterRun('r1');
    expect(Object.keys(b.down)).toEqual(['backup']);
    expect(await b.mayClaim(file('c1.json'))).toBe(true);
    b.stop();
  });

  it('after a run, an outage on a fallback route also opens the routes it fell back from', async () => {
    const fellBack = { persona: 'auditor', from: 'local', to: 'backup', reason_code: 'MODEL_TIMEOUT', at_step: 3 };
    const runs: Record<string, Paused> = { r1: { status: 'running' } };
    const { b } = breaker(runs);
    await b.start(() => undefined);
    runs.r1 = { ...outagePause('backup'), reroutes: [fellBack] };
    await b.afterRun('r1');
    expect(Object.keys(b.down).sort()).toEqual(['backup', 'local']);
    expect(await b.mayClaim(file('c1.json'))).toBe(false);
    b.stop();
  });

  it('holds a decided run back while a route it needs is down, and lets it go once the route answers', async () => {
    let up = false;
    const runs: Record<string, Paused> = { r1: outagePause('local') };
    const { b } = breaker(runs, { answers: () => up, routesOfRun: async (id) => (id === 'r2' ? ['other'] : ['local']) });
    await b.start(() => undefined);
    expect(await b.mayResume('r9')).toBe(false);
    expect(await b.mayResume('r2')).toBe(true);
    up = true;
    await waitUntil(() => Object.keys(b.down).length === 0);
    expect(await b.mayResume('r9')).toBe(true);
    b.stop();
  });
});
