import { z } from 'zod';
import type { LlmErrorKind } from './errors.js';

/**
 * A circuit breaker per model route, as pure state. A route that failed as an outage (its retries
 * spent on a refused connection, a 5xx or a timeout) is *down*: commands that need it stay queued,
 * and it is probed with a growing wait until it answers. Any other failure (a key refused, a model
 * unknown, a rate limit, an unreadable reply) says nothing about whether the endpoint is up, and
 * leaves the route as it was: those still pause the run for a person.
 */

/** The failures that mean the endpoint is not there: the breaker opens on these only. */
export const OUTAGE_FAILURES: ReadonlySet<LlmErrorKind> = new Set<LlmErrorKind>(['network', 'server', 'timeout']);

/** Whether a failure kind (as kept in a record: a string) is an outage of the endpoint. */
export function isOutageFailure(kind: string | undefined): boolean {
  return kind !== undefined && OUTAGE_FAILURES.has(kind as LlmErrorKind);
}

/** One route that is down: since when, why, how often it was probed, when it is probed next. */
export const RouteDown = z.strictObject({
  since: z.string(),
  failure: z.string(),
  /** The failure as people read it (route, model, endpoint, status); never a key or a body. */
  message: z.string(),
  probes: z.number().int().min(0),
  next_probe_at: z.string(),
  /** Why the last probe failed, when one did. */
  last_probe: z.string().optional(),
});
export type RouteDown = z.infer<typeof RouteDown>;

/** The routes that are down, by route id (a route that is not here is up). */
export type Breaker = Readonly<Record<string, RouteDown>>;

/** `.maestro/route-health.json`: what the watcher's breaker holds, for `maestro status`. */
export const RouteHealthFile = z.strictObject({
  pid: z.number().int(),
  updated_at: z.string(),
  down: z.record(z.string(), RouteDown),
});
export type RouteHealthFile = z.infer<typeof RouteHealthFile>;

/** How long to wait between probes of a route that is down: doubling from `firstMs`, never more than `maxMs`. */
export interface ProbeBackoff {
  readonly firstMs: number;
  readonly maxMs: number;
}

export const DEFAULT_PROBE_BACKOFF: ProbeBackoff = { firstMs: 1_000, maxMs: 60_000 };

/** The wait before probe number `probes + 1`. */
export function probeDelayMs(probes: number, backoff: ProbeBackoff): number {
  return Math.min(backoff.maxMs, backoff.firstMs * 2 ** Math.min(Math.max(0, probes), 30));
}

/** A route failed as an outage: down from now (or still down since it first went, with the latest message). */
export function tripRoute(
  breaker: Breaker,
  failed: { route: string; failure: string; message: string },
  now: Date,
  backoff: ProbeBackoff,
): Breaker {
  const was = breaker[failed.route];
  const next = new Date(now.getTime() + probeDelayMs(was?.probes ?? 0, backoff)).toISOString();
  const entry: RouteDown = was
    ? { ...was, failure: failed.failure, message: failed.message, next_probe_at: next }
    : { since: now.toISOString(), failure: failed.failure, message: failed.message, probes: 0, next_probe_at: next };
  return { ...breaker, [failed.route]: entry };
}

/** A probe of a down route failed: it stays down, probed again after a longer wait. */
export function probeFailed(breaker: Breaker, route: string, why: string, now: Date, backoff: ProbeBackoff): Breaker {
  const was = breaker[route];
  if (!was) return breaker;
  const probes = was.probes + 1;
  const next = new Date(now.getTime() + probeDelayMs(probes, backoff)).toISOString();
  return { ...breaker, [route]: { ...was, probes, next_probe_at: next, last_probe: why } };
}

/** The route answered: it is up again. */
export function routeRecovered(breaker: Breaker, route: string): Breaker {
  if (!breaker[route]) return breaker;
  const { [route]: _gone, ...rest } = breaker;
  return rest;
}

/** Which of these routes are down (a command needing any of them waits). */
export function routesDown(breaker: Breaker, routes: Iterable<string>): string[] {
  return [...new Set(routes)].filter((r) => breaker[r] !== undefined).sort();
}

/** The down routes whose next probe is due at `now`. */
export function dueProbes(breaker: Breaker, now: Date): string[] {
  return Object.entries(breaker)
    .filter(([, d]) => Date.parse(d.next_probe_at) <= now.getTime())
    .map(([route]) => route);
}

/** Milliseconds until the next probe of any down route (0 when one is due); undefined when every route is up. */
export function untilNextProbe(breaker: Breaker, now: Date): number | undefined {
  const times = Object.values(breaker).map((d) => Date.parse(d.next_probe_at) - now.getTime());
  return times.length === 0 ? undefined : Math.max(0, Math.min(...times));
}

/** REROUTEs taken because the route was not there (not because it refused): the route it left was down too. */
const OUTAGE_REROUTES: ReadonlySet<string> = new Set(['MODEL_UNREACHABLE', 'MODEL_TIMEOUT', 'MODEL_SERVER_ERROR']);

/**
 * The routes an outage pause shows to be down: the one that failed last, and every route the run
 * fell back from, on an outage, to reach it (a fallback is only asked after its route failed).
 * Without them, a command whose primary route is down is claimed, falls back to the down fallback,
 * and pauses: one pause per queued command.
 */
export function routesOfOutage(route: string, reroutes: readonly { from: string; to: string; reason_code: string }[] = []): string[] {
  const down = [route];
  for (let grew = true; grew; ) {
    const more = reroutes.filter((r) => down.includes(r.to) && !down.includes(r.from) && OUTAGE_REROUTES.has(r.reason_code));
    down.push(...new Set(more.map((r) => r.from)));
    grew = more.length > 0;
  }
  return down;
}

/** What a pause says of an outage: the route that did not answer and how, read from the pause's record details. */
export function outageOfDetails(details: Readonly<Record<string, unknown>> | undefined): { route: string; failure: string } | undefined {
  const route = details?.route;
  const failure = details?.failure;
  if (typeof route !== 'string' || typeof failure !== 'string' || !isOutageFailure(failure)) return undefined;
  return { route, failure };
}
