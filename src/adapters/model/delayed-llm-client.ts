import { setTimeout as sleep } from 'node:timers/promises';
import type { ModelRoutes } from '../../domain/ports.js';
import type { CallContext, LlmClient, LlmReply, LlmRequest } from '../../domain/ports.js';

/**
 * Makes every call of another client wait `delayMs` first (abortable), so a run lasts long enough
 * to be interrupted on purpose. A testing and demo knob (`MAESTRO_OFFLINE_DELAY_MS`), never a default.
 */
export class DelayedLlmClient implements LlmClient {
  constructor(
    private readonly inner: LlmClient,
    private readonly delayMs: number,
  ) {}

  get label(): string {
    return this.inner.label;
  }

  get rehearsal(): boolean {
    return this.inner.rehearsal;
  }

  async complete(request: LlmRequest, call: CallContext, signal?: AbortSignal): Promise<LlmReply> {
    await sleep(this.delayMs, undefined, signal ? { signal } : {});
    return this.inner.complete(request, call, signal);
  }
}

/** The same routes, with every client of an `offline` route delayed by `delayMs` (unchanged when 0). */
export function delayOfflineRoutes(routes: ModelRoutes, delayMs: number): ModelRoutes {
  if (delayMs <= 0) return routes;
  const delayed = new Map<LlmClient, LlmClient>();
  return {
    routeIdFor: (persona) => routes.routeIdFor(persona),
    resolve: (id) => routes.resolve(id),
    clientFor: (route) => {
      const client = routes.clientFor(route);
      if (route.provider !== 'offline') return client;
      let wrapped = delayed.get(client);
      if (!wrapped) delayed.set(client, (wrapped = new DelayedLlmClient(client, delayMs)));
      return wrapped;
    },
  };
}
