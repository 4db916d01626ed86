import { describe, expect, it, vi } from 'vitest';
import type { RouteGate } from '../../src/app/route-breaker.js';
import { WorkerLoop, type WorkClaim } from '../../src/app/worker-loop.js';
import { AppError } from '../../src/domain/errors.js';
import type { WatchEvent } from '../../src/domain/queue.js';
import { InMemoryClaimStore } from '../fakes/in-memory-inbox.js';
import { FakeSession, workClaim } from '../fakes/worker-session.js';
import { aCommand, memoryApp, type MemoryApp } from '../fakes/memory-app.js';
import { politeCouncil, ScriptedLlmClient } from '../fakes/scripted-llm-client.js';

// `maestro worker` with the engine faked: claims come from a queue in memory, runs go through the one use case.

function worker(
  app: MemoryApp,
  session: FakeSession,
  options: { once: boolean; openSession?: () => Promise<FakeSession>; routeGate?: RouteGate },
) {
  const claims = new InMemoryClaimStore();
  for (const c of session.queue)
    claims.texts.set(c.source, JSON.stringify(aCommand({ task_description: `Review the deploy plan of ${c.runId}` })));
  const events: WatchEvent[] = [];
  const loop = new WorkerLoop<WorkClaim, FakeSession>({
    openSession: options.openSession ?? (async () => session),
    depsFor: (_claim, _session, controls) => ({ run: { ...app.deps, signal: controls.signal }, claims }),
    onEvent: (e) => events.push(e),
    once: options.once,
    pid: 42,
    workspace: '/workspace',
    pollMs: 5,
    reconnectMs: 5,
    ...(options.routeGate ? { routeGate: options.routeGate } : {}),
  });
  return { loop, events, claims };
}

/** A model that answers until told to hang (then it waits for the run's abort). */
const hangingOn = (persona: string) =>
  new ScriptedLlmClient((r, _n, signal) =>
    r.persona === persona
      ? new Promise<string>((_, reject) => signal?.addEventListener('abort', () => reject(signal.reason as Error)))
      : politeCouncil(r),
  );

/** Waits until the loop has done something (it runs on its own timers and events). */
const waitFor = (what: () => boolean): Promise<void> => vi.waitFor(() => expect(what()).toBe(true), { timeout: 5_000, interval: 5 });

describe('WorkerLoop', () => {
  it('takes the queued commands one at a time through the one use case, then stops (--once)', async () => {
    const app = memoryApp({ llm: new ScriptedLlmClient(politeCouncil) });
    const session = new FakeSession([workClaim('w-1'), workClaim('w-2')]);
    const { loop, events, claims } = worker(app, session, { once: true });
    await loop.run();
    const transitions = events.filter((e) => e.kind !== 'step').map((e) => `${e.kind}${'status' in e ? `:${e.status}` : ''}`);
    expect(transitions).toEqual([
      'started',
      'claimed',
      'producing_artifact',
      'finished:completed',
      'claimed',
      'producing_artifact',
      'finished:completed',
      'stopped',
    ]);
    expect(events.filter((e) => e.kind === 'step' && e.run_id === 'w-1')).toHaveLength(7);
    expect(claims.released).toEqual(['w-1', 'w-2']);
    expect((await app.ledger.load('w-2'))?.status).toBe('completed');
    expect(loop.state).toBe('STOPPED');
  });

  it('when the engine goes away mid-run, stops the run at its checkpoint and leaves it to the engine', async () => {
    const app = memoryApp({ llm: hangingOn('auditor') });
    const session = new FakeSession([workClaim('w-1')]);
    const { loop, events } = worker(app, session, { once: true });
    const done = loop.run();
    await waitFor(() => app.progress.some((p) => p.kind === 'step_started' && p.persona === 'auditor'));
    session.lose('the connection to the engine broke');
    await waitFor(() => events.some((e) => e.kind === 'finished'));
    await loop.stop();
    await done;
    expect(events.find((e) => e.kind === 'finished')).toMatchObject({
      status: 'interrupted',
      message:
        'stopped at its last checkpoint: the connection to the engine broke; the engine gives it to the next free worker, which resumes it',
    });
    expect(session.requeued).toEqual([]);
    expect(await app.ledger.load('w-1')).toMatchObject({ status: 'running' });
    expect((await app.ledger.load('w-1'))?.steps).toHaveLength(2);
  });

  it('stop() interrupts the current run, records it, and hands the claim back to the queue', async () => {
    const app = memoryApp({ llm: hangingOn('strategist') });
    const session = new FakeSession([workClaim('w-1')]);
    const { loop, events } = worker(app, session, { once: false });
    const done = loop.run();
    await waitFor(() => app.progress.some((p) => p.kind === 'step_started' && p.persona === 'strategist'));
    await loop.stop();
    await done;
    expect(events.find((e) => e.kind === 'finished')).toMatchObject({
      status: 'interrupted',
      audit_log: 'memory:audit/w-1',
      message: 'interrupted at its last checkpoint: this worker was stopped; handed back to the queue, another worker resumes it',
    });
    expect(session.requeued).toEqual(['w-1']);
    expect(app.ledger.events('w-1').at(-1)).toBe('RUN_INTERRUPTED');
    expect(events.at(-1)).toMatchObject({ kind: 'stopped', reason: 'signal' });
  });

  it('retries an engine it cannot reach, saying once that it is lost and once that it is back', async () => {
    const app = memoryApp({ llm: new ScriptedLlmClient(politeCouncil) });
    const session = new FakeSession([workClaim('w-1')]);
    let attempts = 0;
    const { loop, events } = worker(app, session, {
      once: true,
      openSession: async () => (++attempts < 3 ? Promise.reject(new Error('connection refused')) : session),
    });
    await loop.run();
    expect(events.filter((e) => e.kind === 'notice').map((e) => (e as { message: string }).message)).toEqual([
      expect.stringMatching(/^the connection to the engine is lost \(connection refused\); .*retrying with a growing pause/),
      expect.stringMatching(/^the connection to the engine is back \(after \d+ s, 2 failed tries\)$/),
    ]);
    expect(events.find((e) => e.kind === 'finished')).toMatchObject({ status: 'completed' });
  });

  it('an engine that answers but cannot be used as it is (a table gone) stops the worker with the reason, instead of reconnecting forever', async () => {
    class Unusable extends AppError {
      readonly code = 'ENGINE_UNAVAILABLE' as const;
      readonly transient = false;
    }
    const app = memoryApp({ llm: new ScriptedLlmClient(politeCouncil) });
    const session = new FakeSession([]);
    session.claimNext = () =>
      Promise.reject(new Unusable('the engine at postgres://db is not ready: relation "maestro_queue" does not exist'));
    const { loop, events } = worker(app, session, { once: true });
    await expect(loop.run()).rejects.toThrow('relation "maestro_queue" does not exist');
    expect(events.filter((e) => e.kind === 'notice')).toEqual([]);
    expect(loop.state).toBe('STOPPED');
  });

  it('takes no command while a route is down (they stay queued), then takes them when the breaker says it answers again', async () => {
    const app = memoryApp({ llm: new ScriptedLlmClient(politeCouncil) });
    const session = new FakeSession([workClaim('w-1'), workClaim('w-2')]);
    let down = true;
    let wake: () => void = () => undefined;
    const ended: string[] = [];
    const gate: RouteGate = {
      start: async (w) => void (wake = w),
      mayClaim: async () => !down,
      afterRun: async (runId) => void ended.push(runId),
      stop: () => undefined,
    };
    const { loop, events } = worker(app, session, { once: false, routeGate: gate });
    const running = loop.run();
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(events.filter((e) => e.kind === 'claimed')).toHaveLength(0);
    expect(session.queue).toHaveLength(2);
    down = false;
    wake();
    await waitFor(() => events.filter((e) => e.kind === 'finished').length === 2);
    expect(ended).toEqual(['w-1', 'w-2']);
    await loop.stop();
    await running;
  });

  it('with --once and a route down, stops saying so and leaves the commands queued', async () => {
    const app = memoryApp({ llm: new ScriptedLlmClient(politeCouncil) });
    const session = new FakeSession([workClaim('w-1')]);
    const gate: RouteGate = {
      start: async () => undefined,
      mayClaim: async () => false,
      afterRun: async () => undefined,
      stop: () => undefined,
    };
    const { loop, events } = worker(app, session, { once: true, routeGate: gate });
    await loop.run();
    expect(events.filter((e) => e.kind === 'claimed')).toHaveLength(0);
    expect(session.queue).toHaveLength(1);
    const said = events.filter((e) => e.kind === 'notice').map((e) => (e as { message: string }).message);
    expect(said).toContainEqual(expect.stringContaining('a route this worker uses is down: --once stops here'));
  });

  it('an engine away for several tries after a session broke: one line when lost, one when back, and the queued work still runs', async () => {
    const app = memoryApp({ llm: new ScriptedLlmClient(politeCouncil) });
    const broken = new FakeSession([]);
    broken.claimNext = async () => {
      broken.alive = false;
      throw new Error('the engine at postgres://db is unreachable: terminating connection due to administrator command');
    };
    const healthy = new FakeSession([workClaim('w-1')]);
    let opened = 0;
    const { loop, events } = worker(app, healthy, {
      once: true,
      openSession: async () => {
        opened += 1;
        if (opened === 1) return broken;
        if (opened < 6) throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
        return healthy;
      },
    });
    await loop.run();
    const said = events.filter((e) => e.kind === 'notice').map((e) => (e as { message: string }).message);
    expect(said).toEqual([
      expect.stringMatching(/^the connection to the engine is lost \(could not take work from the engine: .*administrator command\)/),
      expect.stringMatching(/^the connection to the engine is back \(after \d+ s, 5 failed tries\)$/),
    ]);
    expect(events.find((e) => e.kind === 'finished')).toMatchObject({ run_id: 'w-1', status: 'completed' });
  });

  it('a stop that comes while the engine session is being opened ends the worker, instead of waiting forever for a free slot', async () => {
    const app = memoryApp({ llm: new ScriptedLlmClient(politeCouncil) });
    const session = new FakeSession([workClaim('w-1')]);
    let opened: () => void = () => undefined;
    const opening = new Promise<void>((resolve) => (opened = resolve));
    let asked = false;
    const { loop, events } = worker(app, session, {
      once: false,
      openSession: async () => {
        asked = true;
        await opening;
        return session;
      },
    });
    const done = loop.run();
    await waitFor(() => asked);
    const stopping = loop.stop();
    opened();
    const ended = await Promise.race([done.then(() => 'stopped'), new Promise((r) => setTimeout(() => r('still running'), 1000))]);
    expect(ended).toBe('stopped');
    await stopping;
    expect(events.at(-1)).toMatchObject({ kind: 'stopped', reason: 'signal' });
    // Nothing was claimed after the stop.
    expect(session.queue).toHaveLength(1);
  });
});
