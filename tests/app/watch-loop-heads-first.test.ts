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
});
