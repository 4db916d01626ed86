import { auditEvent } from '../domain/audit.js';
import type { Persona } from '../domain/persona.js';
import type { LlmClient, StartedRun } from '../domain/ports.js';
import type { ResolvedRoute } from '../domain/route.js';
import type { RunState } from '../domain/run-state.js';
import { type RerouteEvent, RoutedLlmClient } from './routed-llm.js';
import type { RunDeps } from './run-deps.js';

export interface PreparedModels {
  /** The council's client (wrapped for `--record` when asked). */
  readonly llm: LlmClient;
  /** The same routed client, not wrapped: for calls that are not the council's (the mediator's classification). */
  readonly routed: LlmClient;
  /** persona id → route id, fixed for the run (empty when one client serves everyone). */
  readonly routes: Record<string, string>;
  /** Personas with privileges narrowed to what their route allows. */
  readonly personas: Map<string, Persona>;
  readonly resolved: ReadonlyMap<string, ResolvedRoute>;
  /** Config problems (unknown routes, a local route pointing elsewhere), as `file: message` lines. */
  readonly problems: string[];
  /** Every route of the run is the offline rehearsal model (from the routes' providers, not their names). */
  readonly rehearsal: boolean;
}

/**
 * Picks each persona's route (kept from the checkpoint on resume) and builds the client the council
 * talks to: routed per persona with the REROUTE policy, or one override client (replay, tests).
 */
export function prepareModels(options: {
  state: RunState;
  personaIds: readonly string[];
  personas: ReadonlyMap<string, Persona>;
  deps: RunDeps;
  /** The task's sensitivity as it stands when a route fails (read then, not now: the mediator may add to it). */
  sensitivity: () => { policySensitive: boolean; ambiguous: boolean };
  /** Where a REROUTE (or its refusal) is recorded. */
  run: Pick<StartedRun, 'state' | 'commit'>;
}): PreparedModels {
  const { state, deps } = options;
  const wrap = (llm: LlmClient): LlmClient => (deps.wrapLlm ? deps.wrapLlm(llm) : llm);
  if (deps.llm)
    return {
      llm: wrap(deps.llm),
      routed: deps.llm,
      routes: {},
      personas: new Map(options.personas),
      resolved: new Map(),
      problems: [],
      rehearsal: deps.llm.rehearsal,
    };

  const { resolved, assignment, fallbacks, personas, problems } = resolveRoutes({
    personaIds: options.personaIds,
    personas: options.personas,
    models: deps.models,
    planRoutes: state.plan?.routes,
  });
  const used = [...new Set(assignment.values())].map((id) => resolved.get(id)).filter((r): r is ResolvedRoute => r !== undefined);
  const llm = new RoutedLlmClient({
    routes: resolved,
    assignment,
    fallbacks,
    clientFor: (route) => deps.models.clientFor(route),
    maxReroute: state.command.config.max_reroute ?? 1,
    sensitivity: options.sensitivity,
    reroutes: state.reroutes,
    onReroute: (event) => recordReroute(options.run, event),
  });
  return {
    llm: wrap(llm),
    routed: llm,
    routes: Object.fromEntries(assignment),
    personas,
    resolved,
    problems,
    rehearsal: used.length > 0 && used.every((r) => r.provider === 'offline'),
  };
}

/**
 * Records a REROUTE or its refusal. A REROUTE taken moves the route for the rest of the run: the
 * move and its record are one commit.
 */
async function recordReroute(
  run: Pick<StartedRun, 'state' | 'commit'>,
  { persona, from, to, outcome, failure }: RerouteEvent,
): Promise<void> {
  const record = auditEvent(outcome.decision.decision === 'REROUTE' ? 'REROUTE' : 'REROUTE_REFUSED', outcome.decision, {
    persona,
    from_route: from,
    to_route: to ?? null,
    failure: failure.kind,
    ...(outcome.condition ? { condition: outcome.condition } : {}),
    ...(outcome.failed.length > 1 ? { conditions: [...outcome.failed] } : {}),
  });
  const atStep = run.state.steps.length;
  const reroute =
    outcome.decision.decision === 'REROUTE' && to
      ? { persona, from, to, reason_code: outcome.decision.reason_code, at_step: atStep }
      : undefined;
  await run.commit({
    ...(reroute ? { event: { type: 'rerouted' as const, reroute, decision: outcome.decision } } : {}),
    records: [record],
  });
}

/**
 * Each persona's route (kept from the plan on resume, else flags, persona, default) and fallback,
 * resolved; what does not resolve is a `file: message` problem. Also what `validate` checks.
 */
export function resolveRoutes(options: {
  personaIds: readonly string[];
  personas: ReadonlyMap<string, Persona>;
  models: RunDeps['models'];
  planRoutes?: Readonly<Record<string, string>> | undefined;
}): {
  resolved: Map<string, ResolvedRoute>;
  assignment: Map<string, string>;
  fallbacks: Map<string, string | undefined>;
  personas: Map<string, Persona>;
  problems: string[];
} {
  const { models } = options;
  const resolved = new Map<string, ResolvedRoute>();
  // A route that does not resolve is one problem, whoever uses it: one line naming every file that does.
  const failed = new Map<string, { error: string; who: string[] }>();
  const resolve = (id: string, who: string): ResolvedRoute | undefined => {
    const cached = resolved.get(id);
    if (cached) return cached;
    const known = failed.get(id);
    const r = known ?? models.resolve(id);
    if ('error' in r) {
      failed.set(id, { error: r.error, who: [...(known?.who ?? []), who] });
      return undefined;
    }
    resolved.set(id, r);
    return r;
  };

  const assignment = new Map<string, string>();
  const fallbacks = new Map<string, string | undefined>();
  const personas = new Map<string, Persona>();
  for (const id of options.personaIds) {
    const persona = options.personas.get(id);
    if (!persona) continue;
    const routeId = options.planRoutes?.[id] ?? models.routeIdFor(persona);
    const route = resolve(routeId, persona.file);
    if (persona.fallback_route) resolve(persona.fallback_route, `${persona.file} (fallback_route)`);
    assignment.set(id, routeId);
    fallbacks.set(id, persona.fallback_route);
    personas.set(id, route ? { ...persona, privileges: persona.privileges.filter((p) => route.privileges.includes(p)) } : persona);
  }

  const problems = [...failed.values()].map((f) => `${f.who.join(', ')}: ${f.error}`);
  return { resolved, assignment, fallbacks, personas, problems };
}
