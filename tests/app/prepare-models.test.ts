import { describe, expect, it } from 'vitest';
import { prepareModels } from '../../src/app/prepare-models.js';
import { LlmError } from '../../src/domain/errors.js';
import type { Persona } from '../../src/domain/persona.js';
import type { RunPlan } from '../../src/domain/run-state.js';
import { triad } from '../fakes/in-memory-stores.js';
import { memoryApp, startRun, type MemoryApp } from '../fakes/memory-app.js';
import { ScriptedLlmClient } from '../fakes/scripted-llm-client.js';

// Each persona's route for the run, and the client the council talks to.

const safe = () => ({ policySensitive: false, ambiguous: false });
const byId = (personas: Persona[]) => new Map(personas.map((p) => [p.id, p]));
const down = () =>
  new ScriptedLlmClient(() => {
    throw new LlmError('upstream 503', true, 503);
  });

async function prepared(app: MemoryApp, personas: Persona[] = triad()) {
  const run = await startRun(app);
  const models = prepareModels({
    state: run.state,
    personaIds: personas.map((p) => p.id),
    personas: byId(personas),
    deps: app.deps,
    sensitivity: safe,
    run,
  });
  return { run, models };
}

describe('prepareModels', () => {
  it('with one client for everyone (a replay, a test), uses it as it is', async () => {
    const llm = new ScriptedLlmClient('hi');
    const { models } = await prepared(memoryApp({ llm }));
    expect(models).toMatchObject({ routes: {}, problems: [], rehearsal: false });
    expect(models.llm).toBe(llm);
  });

  it("gives each persona its route, narrowing its privileges to the route's", async () => {
    const app = memoryApp({
      routes: {
        main: { route: { privileges: ['READ_FILE'] }, client: new ScriptedLlmClient('m') },
        deep: { route: {}, client: new ScriptedLlmClient('d') },
      },
    });
    const personas = triad().map((p) =>
      p.id === 'auditor'
        ? { ...p, route: 'deep', privileges: ['READ_FILE' as const, 'QUERY_CORTEX' as const] }
        : { ...p, privileges: ['READ_FILE' as const, 'QUERY_CORTEX' as const] },
    );
    const { models } = await prepared(app, personas);
    expect(models.routes).toEqual({ coordinator: 'main', strategist: 'main', auditor: 'deep' });
    expect(models.personas.get('coordinator')?.privileges).toEqual(['READ_FILE']);
    expect(models.personas.get('auditor')?.privileges).toEqual(['READ_FILE', 'QUERY_CORTEX']);
  });

  it('keeps the routes the run started with when it resumes, whatever the personas say now', async () => {
    const app = memoryApp({
      routes: { main: { route: {}, client: new ScriptedLlmClient('m') }, deep: { route: {}, client: new ScriptedLlmClient('d') } },
    });
    const run = await startRun(app);
    const plan = {
      mode: 'round_robin',
      personas: ['coordinator'],
      rounds: 1,
      synthesizer: 'coordinator',
      arbitration: 'confidence_weighted',
      output_path: 'o.md',
      model: 'x',
      routes: { coordinator: 'deep' },
      rehearsal: false,
      settings: {},
    } satisfies RunPlan;
    await run.commit({ event: { type: 'planned', plan, trail: [] } });
    const models = prepareModels({
      state: run.state,
      personaIds: ['coordinator'],
      personas: byId(triad()),
      deps: app.deps,
      sensitivity: safe,
      run,
    });
    expect(models.routes).toEqual({ coordinator: 'deep' });
  });

  it("lists routes that do not resolve as `file: problem`, a fallback's too", async () => {
    const app = memoryApp({ routes: { main: { route: {}, client: new ScriptedLlmClient('m') } } });
    const personas = triad().map((p) => (p.id === 'auditor' ? { ...p, route: 'gpt-9', fallback_route: 'nowhere' } : p));
    const { models } = await prepared(app, personas);
    expect(models.problems).toEqual([
      'personas/auditor.md: maestro.config.json: no route named "gpt-9"',
      'personas/auditor.md (fallback_route): maestro.config.json: no route named "nowhere"',
    ]);
  });

  it('commits a REROUTE taken with its record: the route moves for the rest of the run', async () => {
    const app = memoryApp({
      routes: { main: { route: {}, client: down() }, backup: { route: {}, client: new ScriptedLlmClient('from backup') } },
    });
    const personas = triad().map((p) => ({ ...p, fallback_route: 'backup' }));
    const { run, models } = await prepared(app, personas);
    const reply = await models.llm.complete({ messages: [] }, { persona: 'auditor', purpose: 'turn', step: 'turn:r1:auditor', round: 1 });
    expect(reply.content).toBe('from backup');
    const commit = app.ledger.commits.at(-1);
    expect(commit?.event).toMatchObject({ type: 'rerouted', reroute: { persona: 'auditor', from: 'main', to: 'backup', at_step: 0 } });
    expect(commit?.records.map((r) => [r.event, r.details])).toEqual([
      ['REROUTE', { persona: 'auditor', from_route: 'main', to_route: 'backup', failure: 'server' }],
    ]);
    expect((await app.ledger.load(run.runId))?.reroutes).toHaveLength(1);
  });

  it('records a refused REROUTE without changing the run', async () => {
    const app = memoryApp({ routes: { main: { route: {}, client: down() } } });
    const { run, models } = await prepared(app);
    await expect(
      models.llm.complete({ messages: [] }, { persona: 'auditor', purpose: 'turn', step: 'turn:r1:auditor', round: 1 }),
    ).rejects.toThrow();
    expect(app.ledger.events(run.runId)).toEqual(['REROUTE_REFUSED']);
    expect(app.ledger.commits.at(-1)?.changesState).toBe(false);
    expect((await app.ledger.load(run.runId))?.reroutes).toEqual([]);
  });

  it('calls a run a rehearsal only when every route it uses is the offline model', async () => {
    const offline = memoryApp({ routes: { main: { route: { provider: 'offline' }, client: new ScriptedLlmClient('m') } } });
    expect((await prepared(offline)).models.rehearsal).toBe(true);
    const real = memoryApp({ routes: { main: { route: {}, client: new ScriptedLlmClient('m') } } });
    expect((await prepared(real)).models.rehearsal).toBe(false);
  });
});
