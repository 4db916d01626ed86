import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { writeFileAtomically } from '../adapters/fs/atomic-file.js';
import { probeRoute } from '../adapters/model/route-probe.js';
import { decidePause, type DecideDeps } from '../app/hitl.js';
import { RouteBreaker } from '../app/route-breaker.js';
import { parseCommandText } from '../domain/command-file.js';
import { isOutageFailure, RouteHealthFile, type RouteDown } from '../domain/route-breaker.js';
import { FsPersonaStore } from '../adapters/fs/persona-store.js';
import { ConfiguredModelRoutes } from '../adapters/model/model-routes.js';
import { loadWorkspaceConfig } from '../config.js';
import type { Persona } from '../domain/persona.js';
import type { ReadyFile } from '../domain/queue.js';
import type { App } from './app.js';

/** Where the watcher's breaker says which routes are down, for `maestro status`. */
export function routeHealthPath(app: Pick<App, 'paths'>): string {
  return path.join(app.paths.state, 'route-health.json');
}

/** The watcher's circuit breaker over the workspace's routes (`app/route-breaker.ts`), wired to files and endpoints. */
export function openRouteBreaker(
  app: App,
  options: { pid: number; onNotice: (runId: string | null, message: string) => void },
): RouteBreaker {
  // With an engine (a worker), runs and their decisions are the engine's.
  const depsFor = (runId: string): DecideDeps => (app.engine ? app.engine.depsForRun(runId) : app.deps);
  return new RouteBreaker({
    ledger: app.deps.ledger,
    routesOf: (file) => commandRoutes(app, file),
    routesOfRun: (runId) => runRoutes(app, runId),
    probe: (route) => probeOnce(app, route),
    resume: async (runId, route) => {
      await decidePause({ runId, decision: 'continue', afterOutageOf: route }, depsFor(runId));
    },
    resumeAfterOutage: app.deps.config.resume_after_outage,
    clock: app.deps.clock,
    save: (health) => writeFileAtomically(routeHealthPath(app), `${JSON.stringify(health, null, 2)}\n`),
    pid: options.pid,
    onNotice: options.onNotice,
  });
}

/** The routes a queued command's council uses (its personas', or every persona's); [] when the file does not read as a command. */
async function commandRoutes(app: App, file: ReadyFile): Promise<string[]> {
  const { personas } = await app.deps.personas.loadAll();
  return routesOfCommandFile(path.join(app.paths.commands, file.name), {
    personas,
    defaultRoute: app.deps.config.default_route,
    routeIdFor: (p) => app.deps.models.routeIdFor(p),
  });
}

/** Pauses caused by a model route (a failed call, a refused REROUTE): continuing one calls that route again. */
const ROUTE_PAUSE_LAYERS: ReadonlySet<string> = new Set(['model', 'reroute']);

/**
 * The routes a continued run needs to go on: the default route (the classification's), its council's,
 * and the fallbacks its personas moved to. [] when the pause a person decided was not a route's (the
 * council's doubt, a budget): such a continue may need no model call at all, and is not held back.
 */
async function runRoutes(app: App, runId: string): Promise<string[]> {
  const state = await app.deps.ledger.load(runId);
  if (!state || !ROUTE_PAUSE_LAYERS.has(state.hitl.at(-1)?.layer ?? '')) return [];
  const { personas } = await app.deps.personas.loadAll();
  const members = state.plan ? personas.filter((p) => state.plan?.personas.includes(p.id)) : personas;
  const moved = new Map(state.reroutes.map((r) => [r.persona, r.to]));
  return [...new Set([app.deps.config.default_route, ...members.map((p) => moved.get(p.id) ?? app.deps.models.routeIdFor(p))])];
}

/** The routes the council of the command in `file` would use; [] when it cannot be read as a command. */
async function routesOfCommandFile(
  file: string,
  council: { personas: readonly Persona[]; defaultRoute: string; routeIdFor: (persona: Persona) => string },
): Promise<string[]> {
  const parsed = parseCommandText(await readFile(file, 'utf8').catch(() => ''));
  if (!parsed.ok) return [];
  const wanted = parsed.value.config.personas;
  const members = wanted ? council.personas.filter((p) => wanted.includes(p.id)) : council.personas;
  return [...new Set([council.defaultRoute, ...members.map(council.routeIdFor)])];
}

/** One attempt at the route: undefined when the endpoint is there (it answered, even with a refusal), else why not. */
async function probeOnce(app: App, routeId: string): Promise<string | undefined> {
  const route = app.deps.models.resolve(routeId);
  if ('error' in route) return undefined;
  const failure = await probeRoute(route, app.env);
  return failure && isOutageFailure(failure.kind) ? failure.message : undefined;
}

/** What the watcher's breaker last said; undefined when no watcher wrote one (or it does not read). */
export async function readRouteHealth(app: Pick<App, 'paths'>): Promise<RouteHealthFile | undefined> {
  try {
    const parsed = RouteHealthFile.safeParse(JSON.parse(await readFile(routeHealthPath(app), 'utf8')));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** A route the watcher's breaker holds as down, and the queued commands that wait for it. */
export interface RouteOutage extends RouteDown {
  readonly route: string;
  /** The watcher that saw it (its breaker probes the route). */
  readonly watcher_pid: number;
  /** Queued commands (file names in `commands/`) that need the route. */
  readonly queued: readonly string[];
}

/** `maestro status`: the routes that are down, as the watcher's breaker last saved them, with what waits for each. */
export async function readRouteOutages(
  paths: App['paths'],
  env: Readonly<Record<string, string | undefined>>,
  queued: readonly string[],
): Promise<RouteOutage[]> {
  const health = await readRouteHealth({ paths });
  const down = Object.entries(health?.down ?? {});
  if (!health || down.length === 0) return [];
  const config = await loadWorkspaceConfig(paths.config);
  const routes = new ConfiguredModelRoutes({ config, env });
  const { personas } = await new FsPersonaStore(paths.personas).loadAll();
  const council = { personas, defaultRoute: config.default_route, routeIdFor: (p: Persona) => routes.routeIdFor(p) };
  const needs = new Map<string, string[]>();
  for (const name of queued) needs.set(name, await routesOfCommandFile(path.join(paths.commands, name), council));
  return down.map(([route, d]) => ({
    route,
    ...d,
    watcher_pid: health.pid,
    queued: queued.filter((name) => needs.get(name)?.includes(route)),
  }));
}
