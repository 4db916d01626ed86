import { describe, expect, it, vi } from 'vitest';
import type { RouteGate } from '../../src/app/route-breaker.js';
import { WatchLoop } from '../../src/app/watch-loop.js';
import type { WatchEvent } from '../../src/domain/queue.js';

// A person continues a paused run while a route it needs is down: the decision waits in
// .maestro/decisions/ (as a command waits in commands/) instead of being taken into a run that
// can only fail again and pause a second time; it is taken once the route answers.
describe('WatchLoop: a decided run waits for a route that is down', () => {
  it('keeps the decision queued while the route is down, says so once, and resumes the run when it answers', async () => {
    const { memoryApp, aCommand } = await import('../fakes/memory-app.js');
    const { InMemoryClaimStore, InMemoryCommandInbox } = await import('../fakes/in-memory-inbox.js');
    const { politeCouncil, ScriptedLlmClient } = await import('../fakes/scripted-llm-client.js');
    const { decidePause } = await import('../../src/app/hitl.js');
    const doubt = (r: Parameters<typeof politeCouncil>[0]) =>
      r.purpose === 'verdict' ? '{"action":"investigate","confidence":1,"rationale":"no"}' : politeCouncil(r);
    const app = memoryApp({ llm: new ScriptedLlmClient(doubt) });
    const claims = new InMemoryClaimStore();
    const first = new InMemoryCommandInbox();
    claims.texts.set('1.json', JSON.stringify(aCommand({ task_description: 'Review the migration plan' })));
    first.drop('1.json');
    const once = new WatchLoop({ deps: app.deps, inbox: first, claims, onEvent: () => undefined, once: true, pid: 1, workspace: '/w' });
    await once.start();
    await once.stopped;
    await decidePause({ runId: 'run-1', decision: 'continue' }, app.deps);

    let down = true;
    let wake: () => void = () => undefined;
    const asked: string[] = [];
    const gate: RouteGate = {
      start: async (w) => void (wake = w),
      mayClaim: async () => !down,
      mayResume: async (runId) => {
        asked.push(runId);
        return !down;
      },
      afterRun: async () => undefined,
      stop: () => undefined,
    };
    const decisions = new InMemoryCommandInbox();
    decisions.drop('run-1.json');
    const events: WatchEvent[] = [];
    const loop = new WatchLoop({
      deps: app.deps,
      inbox: new InMemoryCommandInbox(),
      decisions,
      claims,
      routeGate: gate,
      onEvent: (e) => events.push(e),
      once: false,
      pid: 1,
      workspace: '/w',
    });
    await loop.start();
    await new Promise((r) => setTimeout(r, 50));
    wake(); // another look while still down: the held decision is not announced twice
    await new Promise((r) => setTimeout(r, 50));
    expect(asked).toContain('run-1');
    expect(events.filter((e) => e.kind === 'claimed')).toEqual([]);
    expect(decisions.ready).toBeGreaterThan(0);
    expect(events.filter((e) => e.kind === 'notice' && e.message.includes('waits for a route that is down'))).toHaveLength(1);

    down = false;
    wake();
    await vi.waitFor(() => expect(events.some((e) => e.kind === 'finished')).toBe(true), { timeout: 5_000, interval: 10 });
    expect(events.find((e) => e.kind === 'claimed')).toMatchObject({ run_id: 'run-1', resume: 'decision' });
    await loop.stop();
  });
});
