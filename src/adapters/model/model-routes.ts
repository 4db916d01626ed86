import type { ModelRoutes } from '../../domain/ports.js';
import type { LlmClient } from '../../domain/ports.js';
import { OFFLINE_ROUTE_ID, Route, resolveRoute, type ResolvedRoute } from '../../domain/route.js';
import type { WorkspaceConfig } from '../../domain/workspace-config.js';
import { OFFLINE_MODEL, OfflineLlmClient } from './offline-llm-client.js';

export interface ModelRouteOptions {
  readonly config: WorkspaceConfig;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** `--route`: every persona uses this route for this invocation. */
  readonly overrideRoute?: string;
  /** `--model`: the model of the route in use; on the offline route it means an OpenAI-compatible route. */
  readonly overrideModel?: string;
  /** Builds a client for an `openai` route; the key is looked up here and never stored. */
  readonly createOpenAi?: (route: ResolvedRoute, apiKey: string | undefined) => LlmClient;
  /** What the offline rehearsal may look at: whether a workspace file exists. */
  readonly hasFile?: (relative: string) => Promise<boolean>;
}

const BUILTIN_OFFLINE: Route = Route.parse({ provider: 'offline', model: OFFLINE_MODEL, locality: 'local' });

/** Routes from `maestro.config.json` plus the built-in `offline` route, with the invocation's overrides. */
export class ConfiguredModelRoutes implements ModelRoutes {
  readonly #clients = new Map<string, LlmClient>();
  constructor(private readonly options: ModelRouteOptions) {}

  routeIdFor(persona: { route?: string | undefined }): string {
    return this.options.overrideRoute ?? persona.route ?? this.options.config.default_route;
  }

  resolve(id: string): ResolvedRoute | { error: string } {
    let route = this.options.config.routes[id] ?? (id === OFFLINE_ROUTE_ID ? BUILTIN_OFFLINE : undefined);
    if (!route) {
      const known = [OFFLINE_ROUTE_ID, ...Object.keys(this.options.config.routes)].sort().join(', ');
      return { error: `route "${id}" is not defined in maestro.config.json (known routes: ${known})` };
    }
    const model = this.options.overrideModel;
    const fromOffline = model !== undefined && route.provider === 'offline';
    if (model) route = fromOffline ? Route.parse({ provider: 'openai', model }) : { ...route, model };
    const resolved = resolveRoute(id, route, {
      ...(this.options.env.OPENAI_BASE_URL ? { OPENAI_BASE_URL: this.options.env.OPENAI_BASE_URL } : {}),
    });
    if ('error' in resolved || resolved.provider === 'offline' || resolved.locality !== 'remote') return resolved;
    // A remote endpoint needs a key: without one every call would be refused, so the route is not usable (a set-up error, said before any call).
    const keyVar = resolved.api_key_env ?? 'OPENAI_API_KEY';
    if (this.options.env[keyVar]) return resolved;
    if (fromOffline)
      return {
        error: `"${model}" on the offline route calls an OpenAI-compatible endpoint, and none is set: set OPENAI_BASE_URL to a server's address (a local one needs no key), or OPENAI_API_KEY for OpenAI`,
      };
    return {
      error: `route "${id}": no API key: set the environment variable ${keyVar} (its endpoint, ${resolved.base_url ?? 'OpenAI'}, is remote)`,
    };
  }

  clientFor(route: ResolvedRoute): LlmClient {
    const key = `${route.id}\u0000${route.model}`;
    let client = this.#clients.get(key);
    if (!client) {
      if (route.provider === 'offline') client = new OfflineLlmClient(this.options.hasFile ? { hasFile: this.options.hasFile } : {});
      else {
        if (!this.options.createOpenAi) throw new Error('the openai provider is not wired');
        client = this.options.createOpenAi(route, this.options.env[route.api_key_env ?? 'OPENAI_API_KEY']);
      }
      this.#clients.set(key, client);
    }
    return client;
  }
}
