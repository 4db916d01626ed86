import { LlmError } from '../domain/errors.js';
import type { CallContext, LlmClient, LlmReply, LlmRequest } from '../domain/ports.js';
import { decideReroute, REROUTE_REASONS, type RerouteOutcome } from '../domain/reroute.js';
import type { ResolvedRoute } from '../domain/route.js';

export type { ModelRoutes } from '../domain/ports.js';
import { AppError } from '../domain/errors.js';
import type { RunState } from '../domain/run-state.js';

/** A REROUTE was refused; the decision says whether the run pauses or is sealed. */
export class RerouteRefusedError extends AppError {
  readonly code = 'REROUTE_REFUSED' as const;
  constructor(
    readonly outcome: RerouteOutcome,
    cause: LlmError,
  ) {
    super(outcome.detail, { cause });
  }
}

export interface RerouteEvent {
  readonly persona: string;
  readonly from: string;
  readonly to: string | undefined;
  readonly outcome: RerouteOutcome;
  readonly failure: LlmError;
}

/**
 * The council's model: each persona's call goes to its route's client. A failed call (after the
 * route's retries) goes through the REROUTE policy; quota, auth and bad-request failures are not rerouted.
 */
export class RoutedLlmClient implements LlmClient {
  readonly rehearsal: boolean;
  readonly label: string;
  readonly #current = new Map<string, string>();
  #rerouteCount: number;

  constructor(
    private readonly options: {
      routes: ReadonlyMap<string, ResolvedRoute>;
      /** persona id → route id at the start of the run. */
      assignment: ReadonlyMap<string, string>;
      /** persona id → fallback route id. */
      fallbacks: ReadonlyMap<string, string | undefined>;
      clientFor: (route: ResolvedRoute) => LlmClient;
      maxReroute: number;
      /** The task's sensitivity as it stands now (the mediator's classification may add to the rules'). */
      sensitivity: () => { policySensitive: boolean; ambiguous: boolean };
      /** REROUTEs already taken by this run (from its checkpoint). */
      reroutes: RunState['reroutes'];
      onReroute: (event: RerouteEvent) => Promise<void>;
    },
  ) {
    this.#rerouteCount = options.reroutes.length;
    for (const [persona, route] of options.assignment) this.#current.set(persona, route);
    // A REROUTE moves the whole route: every persona that was on it uses the fallback from then on.
    for (const r of options.reroutes) {
      for (const [persona, route] of this.#current) if (route === r.from || persona === r.persona) this.#current.set(persona, r.to);
    }
    const used = [...new Set(this.#current.values())]
      .map((id) => options.routes.get(id))
      .filter((r): r is ResolvedRoute => r !== undefined);
    this.rehearsal = used.every((r) => r.provider === 'offline');
    this.label = used.map((r) => `${r.id} (${r.provider}: ${r.model})`).join(', ');
  }

  /** The route a persona is on now. */
  routeOf(persona: string): string | undefined {
    return this.#current.get(persona);
  }

  async complete(request: LlmRequest, call: CallContext, signal?: AbortSignal): Promise<LlmReply> {
    const fromId = this.#current.get(call.persona);
    const from = fromId ? this.options.routes.get(fromId) : undefined;
    if (!from) throw new LlmError(`persona "${call.persona}" has no route`, false, undefined, { kind: 'bad_request' });
    try {
      const reply = await this.options.clientFor(from).complete(request, call, signal);
      const identity = { ...reply.identity, route: from.id };
      return { ...reply, identity, model: reply.model.includes('/') ? reply.model : `${from.id}/${reply.model}` };
    } catch (error) {
      if (!(error instanceof LlmError) || signal?.aborted || REROUTE_REASONS[error.kind] === undefined) throw error;
      // Another call of this run (parallel steps) already moved this route: go where it went.
      if (this.#current.get(call.persona) !== from.id) return this.complete(request, call, signal);
      const toId = this.options.fallbacks.get(call.persona);
      const outcome = decideReroute({
        failure: error.kind,
        original: from,
        candidate: toId ? this.options.routes.get(toId) : undefined,
        rerouteCount: this.#rerouteCount,
        maxReroute: this.options.maxReroute,
        ...this.options.sensitivity(),
        call: call.purpose,
      });
      await this.options.onReroute({ persona: call.persona, from: from.id, to: toId, outcome, failure: error });
      if (outcome.decision.decision !== 'REROUTE' || !toId) throw new RerouteRefusedError(outcome, error);
      this.#rerouteCount += 1;
      // The route is down, not just this persona's call: the fallback serves the rest of the run for
      // every persona on that route (max_reroute counts route switches, not calls).
      for (const [persona, route] of this.#current) if (route === from.id) this.#current.set(persona, toId);
      return this.complete(request, call, signal);
    }
  }
}
