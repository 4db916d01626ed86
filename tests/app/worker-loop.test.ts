import { describe, expect, it } from 'vitest';
import type { RouteGate } from '../../src/app/route-breaker.js';
import { WorkerLoop, type WorkClaim, type WorkerSession } from '../../src/app/worker-loop.js';
import type { WatchEvent } from '../../src/domain/queue.js';
import { InMemoryClaimStore } from '../fakes/in-memory-inbox.js';
import { aCommand, memoryApp, type MemoryApp } from '../fakes/memory-app.js';
import { politeCouncil, ScriptedLlmClient } from '../fakes/scripted-llm-client.js';

// `maestro worker` with the engine faked: claims come from a queue in memory, runs go through the one use case.

class FakeSession implements WorkerSession<WorkClaim> {
  readonly id = 'worker-1';
  alive = true;
  readonly requeued: string[] = [];
  readonly lost: Promise<string>;
  #lose: (why: string) => void = () => undefined;

  constructor(readonly queue: WorkClaim[]) {
    this.lost = new Promise((resolve) => (this.#lose = resolve));
  }

  async claimNext(): Promise<WorkClaim | undefined> {
    return this.queue.shift();
  }

  async waitForWork(): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, 5));
  }

  async requeue(claim: WorkClaim): Promise<void> {
    this.requeued.push(claim.runId);
  }

  async setCurrent(): Promise<void> {}

  async close(): Promise<void> {
    this.alive = false;
  }

  /** The engine went away (its connection broke). */
  lose(why: string): void {
    this.alive = false;
    this.#lose(why);
  }
}

const workClaim = (runId: string): WorkClaim => ({
  runId,
  source: `${runId}.json`,
  claimedAt: '2026-01-01T00:00:00.000Z',
  recovered: false,
  kind: 'command',
  epoch: 1,
  inputHashes: {},
});

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

const waitFor = async (what: () => boolean): Promise<void> => {
  for (let i = 0; i < 200 && !what(); i++) await new Promise((resolve) => setTimeout(resolve, 5));
  if (!what()) throw new Error('timed out waiting');
};

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
    expect(events.find((e) => e.kind === 'finished')).toMatchObject({ status: 'interrupted', audit_log: 'memory:audit/w-1' });
    expect(session.requeued).toEqual(['w-1']);
    expect(app.ledger.events('w-1').at(-1)).toBe('RUN_INTERRUPTED');
    expect(events.at(-1)).toMatchObject({ kind: 'stopped', reason: 'signal' });
  });

  it('retries an engine it cannot reach, saying so once', async () => {
    const app = memoryApp({ llm: new ScriptedLlmClient(politeCouncil) });
    const session = new FakeSession([workClaim('w-1')]);
    let attempts = 0;
    const { loop, events } = worker(app, session, {
      once: true,
      openSession: async () => (++attempts < 3 ? Promise.reject(new Error('connection refused')) : session),
    });
    await loop.run();
    expect(events.filter((e) => e.kind === 'notice').map((e) => (e as { message: string }).message)).toEqual([
      'the engine cannot be reached (connection refused); retrying',
      'reconnected to the engine',
    ]);
    expect(events.find((e) => e.kind === 'finished')).toMatchObject({ status: 'completed' });
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
});
