import { describe, expect, it, vi } from 'vitest';
import { WatchLoop } from '../../src/app/watch-loop.js';
import { WorkerLoop, type WorkClaim } from '../../src/app/worker-loop.js';
import type { WatchEvent } from '../../src/domain/queue.js';
import { InMemoryClaimStore, InMemoryCommandInbox } from '../fakes/in-memory-inbox.js';
import { FakeSession, workClaim } from '../fakes/worker-session.js';
import { aCommand, memoryApp } from '../fakes/memory-app.js';
import { politeCouncil, ScriptedLlmClient, type ScriptedCall } from '../fakes/scripted-llm-client.js';

// `--concurrency N`: up to N runs at once in one process, each claimed, run and settled exactly once.

/** A council that answers after a pause, counting the runs whose calls are in flight at once. */
function busyCouncil(options: { delayMs: number; hangOn?: string }) {
  const active = new Map<string, number>();
  const seen = { peakRuns: 0, spans: new Map<string, { from: number; to: number }>() };
  // The run is named in its own task, the last message that names one (earlier ones are persona memory).
  const runOf = (r: ScriptedCall) =>
    r.messages
      .map((m) => [...m.content.matchAll(/plan of (cmd-\d+)/g)].at(-1)?.[1])
      .filter(Boolean)
      .at(-1) ?? '?';
  const llm = new ScriptedLlmClient(async (r, _n, signal) => {
    const run = runOf(r);
    const span = seen.spans.get(run) ?? { from: performance.now(), to: 0 };
    seen.spans.set(run, span);
    active.set(run, (active.get(run) ?? 0) + 1);
    seen.peakRuns = Math.max(seen.peakRuns, active.size);
    try {
      if (options.hangOn && run.includes(options.hangOn)) {
        await new Promise((_, reject) => signal?.addEventListener('abort', () => reject(signal.reason as Error), { once: true }));
      }
      await new Promise((resolve) => setTimeout(resolve, options.delayMs));
      return politeCouncil(r);
    } finally {
      span.to = performance.now();
      const left = (active.get(run) ?? 1) - 1;
      if (left === 0) active.delete(run);
      else active.set(run, left);
    }
  });
  return { llm, seen };
}

const finished = (events: WatchEvent[]) => events.filter((e): e is Extract<WatchEvent, { kind: 'finished' }> => e.kind === 'finished');
const internalNotices = (events: WatchEvent[]) => events.filter((e) => e.kind === 'notice' && e.message.startsWith('internal'));

function watchLoop(options: {
  commands: number;
  concurrency: number;
  once: boolean;
  delayMs?: number;
  hangOn?: string;
  /** The conflict_key of the nth command (1-based), when it has one. */
  keyOf?: (n: number) => string | undefined;
}) {
  const { llm, seen } = busyCouncil({ delayMs: options.delayMs ?? 5, ...(options.hangOn ? { hangOn: options.hangOn } : {}) });
  const app = memoryApp({ llm });
  const inbox = new InMemoryCommandInbox();
  const claims = new InMemoryClaimStore();
  for (let i = 1; i <= options.commands; i++) {
    const key = options.keyOf?.(i);
    const config = { max_rounds: 1, ...(key ? { conflict_key: key } : {}) };
    claims.texts.set(`${i}.json`, JSON.stringify(aCommand({ task_description: `Review the deploy plan of cmd-${i}`, config })));
    inbox.drop(`${i}.json`);
  }
  const events: WatchEvent[] = [];
  const loop = new WatchLoop({
    deps: app.deps,
    inbox,
    claims,
    onEvent: (e) => events.push(e),
    once: options.once,
    pid: 1,
    workspace: '/workspace',
    concurrency: options.concurrency,
  });
  return { app, loop, events, claims, seen };
}

describe('WatchLoop --concurrency', () => {
  it('runs up to N commands at once, and claims, runs and settles each exactly once', async () => {
    const { app, loop, events, claims, seen } = watchLoop({ commands: 7, concurrency: 3, once: true });
    await loop.start();
    expect(await loop.stopped).toBe('once');
    expect(seen.peakRuns).toBe(3);
    const done = finished(events);
    expect(done.map((e) => e.status)).toEqual(Array(7).fill('completed'));
    const ids = done.map((e) => e.run_id);
    expect(new Set(ids).size).toBe(7);
    expect([...claims.released].sort()).toEqual([...ids].sort());
    expect(events.filter((e) => e.kind === 'claimed')).toHaveLength(7);
    for (const id of ids) expect((await app.ledger.load(id))?.status).toBe('completed');
    // Each run moves through the state machine on its own: no transition is out of order.
    expect(internalNotices(events)).toEqual([]);
    expect(events.at(-1)).toMatchObject({ kind: 'stopped', from: 'AWAITING_COMMAND' });
  });

  it('never runs two commands of one task line at once: the second waits, the others go beside them', async () => {
    const { loop, events, seen } = watchLoop({
      commands: 4,
      concurrency: 4,
      once: true,
      delayMs: 15,
      keyOf: (n) => (n <= 2 ? 'migration-line' : undefined),
    });
    await loop.start();
    await loop.stopped;
    expect(finished(events).map((e) => e.status)).toEqual(Array(4).fill('completed'));
    const span = (run: string) => seen.spans.get(run) as { from: number; to: number };
    const overlap = (a: string, b: string) => span(a).from < span(b).to && span(b).from < span(a).to;
    expect(overlap('cmd-1', 'cmd-2')).toBe(false);
    expect(overlap('cmd-1', 'cmd-3') || overlap('cmd-1', 'cmd-4')).toBe(true);
    const waited = events.flatMap((e) => (e.kind === 'notice' && e.message.includes('same task line') ? [e.message] : []));
    expect(waited).toHaveLength(1);
    expect(waited[0]).toContain('2.json');
  });

  it('stays one run at a time by default', async () => {
    const { loop, seen, events } = watchLoop({ commands: 3, concurrency: 1, once: true });
    await loop.start();
    await loop.stopped;
    expect(seen.peakRuns).toBe(1);
    expect(finished(events)).toHaveLength(3);
  });

  it('stop() checkpoints every run in flight and leaves each claim for the next start', async () => {
    const { app, loop, events, claims } = watchLoop({ commands: 5, concurrency: 3, once: false, hangOn: 'cmd' });
    await loop.start();
    await vi.waitFor(() => expect(events.filter((e) => e.kind === 'claimed')).toHaveLength(3), { timeout: 5_000, interval: 5 });
    expect(loop.inFlight).toHaveLength(3);
    expect(loop.state).toBe('EXECUTING_TASK');
    await loop.stop();
    expect(await loop.stopped).toBe('signal');
    const done = finished(events);
    expect(done.map((e) => e.status)).toEqual(['interrupted', 'interrupted', 'interrupted']);
    expect(claims.released).toEqual([]);
    for (const e of done) expect((await app.ledger.load(e.run_id))?.status).toBe('running');
    // The two commands never claimed are still queued.
    expect(events.filter((e) => e.kind === 'claimed')).toHaveLength(3);
    expect(events.at(-1)).toMatchObject({ kind: 'stopped', reason: 'signal' });
  });
});

function workerLoop(options: { commands: number; concurrency: number; once: boolean; hangOn?: string }) {
  const { llm, seen } = busyCouncil({ delayMs: 5, ...(options.hangOn ? { hangOn: options.hangOn } : {}) });
  const app = memoryApp({ llm });
  const queue: WorkClaim[] = [];
  const claims = new InMemoryClaimStore();
  for (let i = 1; i <= options.commands; i++) {
    const runId = `cmd-${i}`;
    queue.push(workClaim(runId));
    claims.texts.set(`${runId}.json`, JSON.stringify(aCommand({ task_description: `Review the deploy plan of ${runId}` })));
  }
  const session = new FakeSession(queue);
  const events: WatchEvent[] = [];
  const loop = new WorkerLoop<WorkClaim, FakeSession>({
    openSession: async () => session,
    depsFor: (_claim, _session, controls) => ({ run: { ...app.deps, signal: controls.signal }, claims }),
    onEvent: (e) => events.push(e),
    once: options.once,
    pid: 42,
    workspace: '/workspace',
    pollMs: 5,
    concurrency: options.concurrency,
  });
  return { app, loop, events, claims, seen, session };
}

describe('WorkerLoop --concurrency', () => {
  it('runs up to N claims at once, each settled exactly once, then stops (--once)', async () => {
    const { loop, events, claims, seen } = workerLoop({ commands: 6, concurrency: 4, once: true });
    await loop.run();
    expect(seen.peakRuns).toBe(4);
    expect(finished(events).map((e) => e.status)).toEqual(Array(6).fill('completed'));
    expect([...claims.released].sort()).toEqual(['cmd-1', 'cmd-2', 'cmd-3', 'cmd-4', 'cmd-5', 'cmd-6']);
    expect(internalNotices(events)).toEqual([]);
    expect(loop.state).toBe('STOPPED');
  });

  it('stop() checkpoints every run in flight and hands each back to the queue', async () => {
    const { loop, events, session } = workerLoop({ commands: 3, concurrency: 2, once: false, hangOn: 'cmd' });
    const running = loop.run();
    await vi.waitFor(() => expect(events.filter((e) => e.kind === 'claimed')).toHaveLength(2), { timeout: 5_000, interval: 5 });
    expect(loop.inFlight).toEqual(['cmd-1', 'cmd-2']);
    await loop.stop();
    await running;
    expect(finished(events).map((e) => [e.run_id, e.status])).toEqual([
      ['cmd-1', 'interrupted'],
      ['cmd-2', 'interrupted'],
    ]);
    expect(session.requeued.sort()).toEqual(['cmd-1', 'cmd-2']);
    expect(session.queue.map((c) => c.runId)).toEqual(['cmd-3']);
  });
});
