import { afterEach, describe, expect, it } from 'vitest';
import { createApp } from '../../src/compose/app.js';
import type { SessionStore } from '../../src/domain/ports.js';
import type { WatchEvent } from '../../src/domain/queue.js';
import { fileWatchLoop } from '../helpers/file-watch-loop.js';
import { dropCommand, makeWorkspace, removeWorkspace, task } from '../helpers/watch-workspace.js';

// Issue 24 item 5: what a finished run writes after its slot is freed (its memory, its last records)
// waits until the next run has started its first call, so that run's head never queues behind those
// writes; the next run still sees the finished one in its memory, and everything is still written.

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe("WatchLoop: the next run's head goes before the last run's tail", () => {
  it("a run's memory lands only after the next run's first call has started, and that run sees it", async () => {
    const ws = await makeWorkspace('maestro-heads-first-');
    cleanups.push(() => removeWorkspace(ws));
    const app = await createApp({ workspace: ws });
    const order: string[] = [];
    const store = app.deps.sessions;
    const appendRun: SessionStore['appendRun'] = async (...args) => {
      await store.appendRun(...args);
      order.push(`saved ${args[1]}`);
    };
    // The store as it is, but noting when each save has landed.
    const sessions = new Proxy(store, {
      get: (target, key) => {
        if (key === 'appendRun') return appendRun;
        const value = Reflect.get(target, key, target) as unknown;
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    }) as SessionStore;
    const firstEvent = new Set<string>();
    // The second run's head is slow (its loop-policy read takes 150 ms): the first run's tail has all
    // that time to write, unless it waits for that head.
    let reads = 0;
    const loopPolicy = new Proxy(app.deps.loopPolicy, {
      get: (target, key) => {
        const value = Reflect.get(target, key, target) as unknown;
        if (key !== 'read' || typeof value !== 'function') return typeof value === 'function' ? value.bind(target) : value;
        return async (...args: unknown[]) => {
          if (++reads === 2) await new Promise((r) => setTimeout(r, 150));
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    const deps = {
      ...app.deps,
      sessions,
      loopPolicy,
      onProgress: (e: { run_id: string }) => {
        if (!firstEvent.has(e.run_id)) order.push(`first call ${e.run_id}`);
        firstEvent.add(e.run_id);
      },
    };
    const { loop, events } = fileWatchLoop({ ...app, deps });
    cleanups.push(() => loop.stop());
    await dropCommand(ws, 'a.json', task('Task A: review the rollout plan'));
    await dropCommand(ws, 'b.json', task('Task B: review the migration plan'));
    await loop.start();
    expect(await loop.stopped).toBe('once');

    const [a, b] = events.filter((e): e is Extract<WatchEvent, { kind: 'claimed' }> => e.kind === 'claimed').map((e) => e.run_id);
    expect(a && b).toBeTruthy();
    const firstSaveOfA = order.indexOf(`saved ${a}`);
    expect(firstSaveOfA).toBeGreaterThan(-1);
    expect(order.indexOf(`first call ${b}`)).toBeGreaterThan(-1);
    expect(order.indexOf(`first call ${b}`)).toBeLessThan(firstSaveOfA);
    // Both ended well, and every persona's memory holds both runs, once each.
    const finished = events.filter((e): e is Extract<WatchEvent, { kind: 'finished' }> => e.kind === 'finished');
    expect(finished.map((e) => e.status)).toEqual(['completed', 'completed']);
    const memory = (await app.deps.sessions.load('auditor')).state;
    expect(memory.runs).toEqual([a, b]);
  });

  it('a run waiting for its task line is no head: the run before it on that line ends without waiting for it', async () => {
    // Runs on one task line go one at a time: the next one waits for the whole of the one before,
    // tail included. Counted as a head meanwhile, it would hold that tail back for the heads' full
    // wait (250 ms), each run on the line paying it.
    const ws = await makeWorkspace('maestro-heads-line-');
    cleanups.push(() => removeWorkspace(ws));
    const app = await createApp({ workspace: ws });
    const { loop, events } = fileWatchLoop(app, { concurrency: 2 });
    cleanups.push(() => loop.stop());
    const at = new Map<WatchEvent, number>();
    const push = events.push.bind(events);
    events.push = (...added: WatchEvent[]): number => {
      for (const e of added) at.set(e, performance.now());
      return push(...added);
    };
    for (const name of ['a', 'b', 'c']) {
      await dropCommand(
        ws,
        `${name}.json`,
        task(`Task ${name}: review the rollout plan`, { config: { max_rounds: 1, conflict_key: 'one-line' } }),
      );
    }
    await loop.start();
    expect(await loop.stopped).toBe('once');

    const finished = events.filter((e): e is Extract<WatchEvent, { kind: 'finished' }> => e.kind === 'finished');
    expect(finished.map((e) => e.status)).toEqual(['completed', 'completed', 'completed']);
    // From each run's artifact to its end: its tail. Two of them had the next run on the line waiting.
    const tails = finished.map((f) => {
      const producing = events.find((e) => e.kind === 'producing_artifact' && e.run_id === f.run_id);
      return (at.get(f) ?? 0) - (producing ? (at.get(producing) ?? 0) : 0);
    });
    expect(tails.reduce((sum, ms) => sum + ms, 0)).toBeLessThan(500);
  });
});
