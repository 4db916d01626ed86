import { describe, expect, it } from 'vitest';
import { RerouteRefusedError, RoutedLlmClient, type RerouteEvent } from '../../src/app/routed-llm.js';
import { LlmError } from '../../src/domain/errors.js';
import type { LlmClient } from '../../src/domain/ports.js';
import type { ResolvedRoute } from '../../src/domain/route.js';
import { ScriptedLlmClient } from '../fakes/scripted-llm-client.js';

// The council's model: each persona's call goes to its route; a failed route goes through REROUTE.

const route = (id: string, over: Partial<ResolvedRoute> = {}): ResolvedRoute => ({
  provider: 'openai',
  model: `${id}-model`,
  timeout_ms: 60_000,
  max_retries: 0,
  privileges: ['READ_FILE'],
  json_mode: 'json_schema',
  stream: false,
  locality: 'remote',
  ...over,
  id,
});
const down = (kind: 'server' | 'quota' = 'server') =>
  new ScriptedLlmClient(() => {
    throw new LlmError(`route ${kind}`, kind === 'server', kind === 'server' ? 503 : 429, { kind });
  });
const call = (persona: string) => ({ persona, purpose: 'turn' as const, step: `turn:r1:${persona}`, round: 1 });
const ask = (llm: LlmClient, persona: string) => llm.complete({ messages: [{ role: 'user', content: 'hi' }] }, call(persona));

function routed(options: {
  clients: Record<string, LlmClient>;
  routes?: ResolvedRoute[];
  assignment?: Record<string, string>;
  fallbacks?: Record<string, string>;
  maxReroute?: number;
  sensitive?: boolean;
  reroutes?: { persona: string; from: string; to: string; reason_code: string; at_step: number }[];
}) {
  const routes = options.routes ?? [route('main'), route('backup')];
  const events: RerouteEvent[] = [];
  const llm = new RoutedLlmClient({
    routes: new Map(routes.map((r) => [r.id, r])),
    assignment: new Map(Object.entries(options.assignment ?? { alpha: 'main', beta: 'main' })),
    fallbacks: new Map(Object.entries(options.fallbacks ?? { alpha: 'backup', beta: 'backup' })),
    clientFor: (r) => options.clients[r.id]!,
    maxReroute: options.maxReroute ?? 1,
    sensitivity: () => ({ policySensitive: options.sensitive ?? false, ambiguous: false }),
    reroutes: options.reroutes ?? [],
    onReroute: async (e) => void events.push(e),
  });
  return { llm, events };
}

describe('RoutedLlmClient', () => {
  it("sends each persona's call to its own route, and names the route in the reply's model", async () => {
    const main = new ScriptedLlmClient('from main');
    const other = new ScriptedLlmClient('from other');
    const { llm } = routed({
      clients: { main, other },
      routes: [route('main'), route('other')],
      assignment: { alpha: 'main', beta: 'other' },
      fallbacks: {},
    });
    expect(await ask(llm, 'alpha')).toMatchObject({ content: 'from main', model: 'main/scripted-model', identity: { route: 'main' } });
    expect(await ask(llm, 'beta')).toMatchObject({ content: 'from other', model: 'other/scripted-model' });
    expect(llm.label).toBe('main (openai: main-model), other (openai: other-model)');
  });

  it('reroutes a route that is down to the fallback, for every persona on it, and records the REROUTE', async () => {
    const backup = new ScriptedLlmClient('from backup');
    const { llm, events } = routed({ clients: { main: down(), backup } });
    expect((await ask(llm, 'alpha')).content).toBe('from backup');
    expect(events.map((e) => [e.persona, e.from, e.to, e.outcome.decision.decision])).toEqual([['alpha', 'main', 'backup', 'REROUTE']]);
    // The route is down, not one persona's call: beta goes to the fallback without a second REROUTE.
    expect((await ask(llm, 'beta')).content).toBe('from backup');
    expect(llm.routeOf('beta')).toBe('backup');
    expect(events).toHaveLength(1);
  });

  it('never reroutes a quota failure: it is refused, recorded, and the call fails', async () => {
    const backup = new ScriptedLlmClient('from backup');
    const { llm, events } = routed({ clients: { main: down('quota'), backup } });
    await expect(ask(llm, 'alpha')).rejects.toBeInstanceOf(LlmError);
    expect(backup.calls).toEqual([]);
    expect(events).toEqual([]);
  });

  it('refuses a REROUTE of a policy-sensitive task, records the refusal, and says why', async () => {
    const backup = new ScriptedLlmClient('from backup');
    const { llm, events } = routed({ clients: { main: down(), backup }, sensitive: true });
    const error = await ask(llm, 'alpha').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RerouteRefusedError);
    expect((error as RerouteRefusedError).outcome.condition).toBe('policy_sensitive');
    expect(events.map((e) => e.outcome.decision.decision)).toEqual(['PAUSE_FOR_HITL']);
    expect(backup.calls).toEqual([]);
  });

  it('stops rerouting at max_reroute, counting the REROUTEs already in the checkpoint', async () => {
    const { llm, events } = routed({
      clients: { main: down(), backup: down(), spare: new ScriptedLlmClient('spare') },
      routes: [route('main'), route('backup'), route('spare')],
      reroutes: [{ persona: 'alpha', from: 'main', to: 'backup', reason_code: 'REROUTE_SERVER', at_step: 2 }],
      fallbacks: { alpha: 'spare', beta: 'spare' },
    });
    // The checkpoint moved the route already: alpha is on backup, and that one REROUTE was the limit.
    expect(llm.routeOf('alpha')).toBe('backup');
    await expect(ask(llm, 'alpha')).rejects.toBeInstanceOf(RerouteRefusedError);
    expect(events[0]?.outcome.condition).toBe('reroute_limit');
  });

  it('does not reroute a call the run aborted', async () => {
    const controller = new AbortController();
    const main = new ScriptedLlmClient(() => {
      controller.abort();
      throw new LlmError('aborted', true, 503);
    });
    const { llm, events } = routed({ clients: { main, backup: new ScriptedLlmClient('x') } });
    await expect(llm.complete({ messages: [] }, call('alpha'), controller.signal)).rejects.toBeInstanceOf(LlmError);
    expect(events).toEqual([]);
  });

  it('refuses a persona with no route as a bad request', async () => {
    const { llm } = routed({ clients: {} });
    await expect(ask(llm, 'nobody')).rejects.toMatchObject({ kind: 'bad_request' });
  });
});
