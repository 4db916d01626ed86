import type { LlmErrorKind } from './errors.js';
import type { JsonMode } from './route.js';

/**
 * `maestro doctor`, as pure rules: from what was found out about one route (its `GET /models`, one
 * tiny structured call), whether it would work, and if not, what to fix. First match wins.
 */

/** What `GET /models` said: the model ids, an HTTP status (404: the server does not offer it), or no answer at all. */
export type ModelsListing =
  | { readonly kind: 'listed'; readonly ids: readonly string[] }
  | { readonly kind: 'status'; readonly status: number }
  | { readonly kind: 'unreachable'; readonly message: string };

/** What the tiny structured call gave: a reply (how JSON was asked for in the end, whether it read as JSON), or a failure. */
export type CallCheck =
  | { readonly ok: true; readonly jsonMode: JsonMode | undefined; readonly steppedFrom: JsonMode | undefined; readonly json: boolean }
  | { readonly ok: false; readonly kind: LlmErrorKind; readonly message: string };

export interface RouteFacts {
  readonly model: string;
  readonly jsonMode: JsonMode;
  readonly keyVariable: string;
  readonly models: ModelsListing;
  /** Absent when the endpoint did not answer at all (no call was tried). */
  readonly call?: CallCheck;
  /** Every persona on this route has a fallback_route (the advice does not ask for one). */
  readonly fallback?: boolean;
}

export interface Diagnosis {
  readonly ok: boolean;
  /** What was found, or what is wrong and what to fix. */
  readonly text: string;
}

type Rule = (f: RouteFacts) => string | undefined;

const CALL_FIXES: Partial<Record<LlmErrorKind, string>> = {
  network: 'is the server running at that address? start it, or fix base_url',
  timeout: 'the endpoint is slow or stuck: check it, or raise timeout_ms',
  server: 'the endpoint is failing: check its logs, or give the personas a fallback_route',
  rate_limit: 'the endpoint is rate-limiting: wait, or raise max_retries',
  quota: "the account's quota or credit is exhausted: top it up",
  bad_request: "check the route's model name and options against what the endpoint supports",
  invalid_output:
    'the endpoint answered with nothing usable (no text, only a tool call, or not a chat completion): if base_url is right (it usually ends in /v1), try json_mode "json_object" or "prompt" on the route',
};

function callFix(kind: LlmErrorKind, fallback: boolean | undefined): string {
  if (kind === 'server' && fallback) return "the endpoint is failing: check its logs (its personas' fallback_route takes over meanwhile)";
  return CALL_FIXES[kind] ?? 'see the message';
}

/** The rules, in order: the endpoint, the key, the model, the call, json_mode. */
const RULES: readonly Rule[] = [
  (f) =>
    f.models.kind === 'unreachable' ? `the endpoint does not answer (${f.models.message}): start the server, or fix base_url` : undefined,
  (f) => {
    const refused = f.call && !f.call.ok && f.call.kind === 'auth' ? f.call.message : undefined;
    const status = f.models.kind === 'status' && (f.models.status === 401 || f.models.status === 403) ? f.models.status : undefined;
    if (refused === undefined && status === undefined) return undefined;
    return `the key is not accepted (${refused ?? `GET /models: HTTP ${status}`}): check ${f.keyVariable}`;
  },
  (f) =>
    f.models.kind === 'listed' && !f.models.ids.includes(f.model)
      ? `model "${f.model}" is not on the endpoint (it offers: ${listed(f.models.ids)}): fix the route's model`
      : undefined,
  (f) => (f.call && !f.call.ok ? `a tiny call failed: ${f.call.message} — ${callFix(f.call.kind, f.fallback)}` : undefined),
  (f) =>
    f.call?.ok && f.call.steppedFrom
      ? `json_mode "${f.call.steppedFrom}" is refused by the endpoint; "${f.call.jsonMode}" works: set the route's json_mode to "${f.call.jsonMode}"`
      : undefined,
  (f) =>
    f.call?.ok && !f.call.json
      ? `a structured call with json_mode "${f.call.jsonMode ?? f.jsonMode}" did not come back as JSON: try json_mode "json_object", or a model that follows instructions`
      : undefined,
];

/** Whether the route would work, and what to fix when it would not. */
export function diagnoseRoute(facts: RouteFacts): Diagnosis {
  for (const rule of RULES) {
    const problem = rule(facts);
    if (problem) return { ok: false, text: problem };
  }
  const models = facts.models.kind === 'listed' ? 'model listed' : 'GET /models not offered, the model answered';
  return { ok: true, text: `answers, key accepted, ${models}, json_mode "${facts.jsonMode}" works` };
}

function listed(ids: readonly string[]): string {
  if (ids.length === 0) return 'none';
  return ids.length > 8 ? `${ids.slice(0, 8).join(', ')}, …` : ids.join(', ');
}
