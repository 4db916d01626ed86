import { describe, expect, it } from 'vitest';
import type { RouteGate } from '../../src/app/route-breaker.js';
import { WatchLoop } from '../../src/app/watch-loop.js';
import type { WatchEvent } from '../../src/domain/queue.js';

// `watch --once` that stops while commands still wait (a route that is down): its last word says so,
// not that the queue is empty.
describe('WatchLoop --once with commands left', () => {
  it('says how many commands it left queued when it stops for a route that is down', async () => {
    const { memoryApp, aCommand } = await import('../fakes/memory-app.js');
    const { InMemoryClaimStore, InMemoryCommandInbox } = await import('../fakes/in-memory-inbox.js');
    const app = memoryApp();
    const inbox = new InMemoryCommandInbox();
    const claims = new InMemoryClaimStore();
    for (const name of ['1.json', '2.json']) {
      claims.texts.set(name, JSON.stringify(aCommand({ task_description: `Review plan ${name}` })));
      inbox.drop(name);
    }
    const down: RouteGate = {
      start: async () => undefined,
      mayClaim: async () => false,
      afterRun: async () => undefined,
      stop: () => undefined,
    };
    const events: WatchEvent[] = [];
    const loop = new WatchLoop({
      deps: app.deps,
      inbox,
      claims,
      routeGate: down,
      onEvent: (e) => events.push(e),
      once: true,
      pid: 1,
      workspace: '/w',
    });
    await loop.start();
    expect(await loop.stopped).toBe('once');
    expect(events.at(-1)).toMatchObject({ kind: 'stopped', reason: 'once', left: 2 });
  });

  it('says nothing is left when the queue is drained', async () => {
    const { memoryApp } = await import('../fakes/memory-app.js');
    const { InMemoryClaimStore, InMemoryCommandInbox } = await import('../fakes/in-memory-inbox.js');
    const events: WatchEvent[] = [];
    const loop = new WatchLoop({
      deps: memoryApp().deps,
      inbox: new InMemoryCommandInbox(),
      claims: new InMemoryClaimStore(),
      onEvent: (e) => events.push(e),
      once: true,
      pid: 1,
      workspace: '/w',
    });
    await loop.start();
    await loop.stopped;
    expect(events.at(-1)).toMatchObject({ kind: 'stopped', reason: 'once', left: 0 });
  });
});
