import type { ModelRoutes, PersonaLoad, PersonaStore } from '../domain/ports.js';
import { decideReroute, refusedRerouteEffect } from '../domain/reroute.js';
import { diagnoseRoute, type CallCheck, type Diagnosis, type ModelsListing } from '../domain/route-doctor.js';
import type { ResolvedRoute } from '../domain/route.js';
import type { Persona } from '../domain/persona.js';

/** How `maestro doctor` reaches a route: its `GET /models`, and one tiny structured call (adapters). */
export interface RouteChecks {
  listModels(route: ResolvedRoute): Promise<ModelsListing>;
  structuredCall(route: ResolvedRoute): Promise<CallCheck>;
  /** Where the route's endpoint is, for people (scheme, host, port). */
  endpointOf(route: ResolvedRoute): string;
}

/** One route in use, and whether it would work. */
export interface RouteReport extends Diagnosis {
  readonly route: string;
  readonly provider: string | null;
  readonly model: string | null;
  readonly endpoint: string | null;
  /** Who uses it: `default_route`, `persona <id>`, `fallback of <id>`. */
  readonly used_by: readonly string[];
}

/** What `maestro doctor` found: one report a route in use, and the persona files that cannot be read (whose routes are not known). */
export interface DoctorReport {
  readonly routes: RouteReport[];
  readonly personaProblems: PersonaLoad['problems'];
}

/**
 * `maestro doctor`: every route in use — the default, each persona's, each persona's fallback_route —
 * checked against its endpoint: it answers, the key is accepted, the model exists, json_mode works;
 * and a fallback that the REROUTE policy would never let take over is said to be unusable. One report a route.
 * A persona file that does not read (or no personas/ at all) is a problem found, not a persona left out
 * silently: it is reported, and the routes of the personas that do read are still checked.
 */
export async function doctorRoutes(deps: {
  readonly models: ModelRoutes;
  readonly personas: PersonaStore;
  readonly defaultRoute: string;
  readonly checks: RouteChecks;
}): Promise<DoctorReport> {
  const { personas, problems } = await deps.personas.loadAll();
  const reports: RouteReport[] = [];
  for (const [id, usedBy] of routesInUse(personas, deps)) {
    const route = deps.models.resolve(id);
    if ('error' in route) {
      reports.push({ route: id, provider: null, model: null, endpoint: null, used_by: usedBy, ok: false, text: route.error });
      continue;
    }
    const diagnosis = await checkRoute(route, deps.checks, everyPersonaFallsBack(id, personas, deps.models));
    const base = { route: id, provider: route.provider, model: route.model, used_by: usedBy };
    const endpoint = route.provider === 'offline' ? null : deps.checks.endpointOf(route);
    const fallbackProblem = diagnosis.ok ? unusableFallback(route, personas, deps.models) : undefined;
    reports.push({ ...base, endpoint, ...(fallbackProblem ? { ok: false, text: fallbackProblem } : diagnosis) });
  }
  return { routes: reports, personaProblems: problems };
}

/** Route id → who uses it, in a stable order: the default first, then the personas' routes and fallbacks. */
function routesInUse(personas: readonly Persona[], deps: { models: ModelRoutes; defaultRoute: string }): Map<string, string[]> {
  const users = new Map<string, string[]>();
  const add = (id: string, who: string): void => void users.set(id, [...(users.get(id) ?? []), who]);
  add(deps.defaultRoute, 'default_route');
  for (const p of personas) {
    add(deps.models.routeIdFor(p), `persona ${p.id}`);
    if (p.fallback_route) add(p.fallback_route, `fallback of ${p.id}`);
  }
  return users;
}

/** Whether every persona on this route has a fallback_route (then the advice does not ask for one). */
function everyPersonaFallsBack(routeId: string, personas: readonly Persona[], models: ModelRoutes): boolean {
  const on = personas.filter((p) => models.routeIdFor(p) === routeId);
  return on.length > 0 && on.every((p) => p.fallback_route !== undefined);
}

async function checkRoute(route: ResolvedRoute, checks: RouteChecks, fallback: boolean): Promise<Diagnosis> {
  if (route.provider === 'offline') return { ok: true, text: 'the embedded offline rehearsal model (no endpoint to check)' };
  const models = await checks.listModels(route);
  const facts = { model: route.model, jsonMode: route.json_mode, keyVariable: route.api_key_env ?? 'OPENAI_API_KEY', models, fallback };
  if (models.kind === 'unreachable') return diagnoseRoute(facts);
  return diagnoseRoute({ ...facts, call: await checks.structuredCall(route) });
}

/** A working route that is some persona's fallback, but that the REROUTE policy would never let take over from that persona's route. */
function unusableFallback(candidate: ResolvedRoute, personas: readonly Persona[], models: ModelRoutes): string | undefined {
  const held = unusableFallbacks(personas, models).find((u) => u.fallback === candidate.id);
  return held && `cannot take over as ${held.persona.id}'s fallback: ${held.why}`;
}

/**
 * Each persona whose `fallback_route` the REROUTE policy would refuse even for a safe task on a plain
 * outage (more privileges, remote where its route is local, weaker constraints): it can never take
 * over, and a failure of the persona's route ends as the policy table decides for that refusal
 * (`effect`: a sealed or unsealed stop, or a pause). `doctor` and `validate` say so.
 */
export function unusableFallbacks(
  personas: readonly Persona[],
  models: ModelRoutes,
): { persona: Persona; route: string; fallback: string; why: string; effect: string }[] {
  const out = [];
  for (const p of personas) {
    if (!p.fallback_route) continue;
    const route = models.routeIdFor(p);
    const [original, candidate] = [models.resolve(route), models.resolve(p.fallback_route)];
    if ('error' in original || 'error' in candidate) continue;
    const outcome = decideReroute({ failure: 'network', original, candidate, rerouteCount: 0, maxReroute: 1, policySensitive: false });
    if (outcome.condition === undefined) continue;
    out.push({
      persona: p,
      route,
      fallback: p.fallback_route,
      why: outcome.detail,
      effect: refusedRerouteEffect(outcome.decision),
    });
  }
  return out;
}
