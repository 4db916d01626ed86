import { z } from 'zod';
import { KnowledgeAction } from './persona.js';

/** How structured output is asked for, in fallback order: the JSON Schema, any JSON object, the prompt alone. */
export const JSON_MODES = ['json_schema', 'json_object', 'prompt'] as const;
export const JsonMode = z.enum(JSON_MODES);
export type JsonMode = z.infer<typeof JsonMode>;

/**
 * A named model route in `maestro.config.json`: which provider and model answer, where, and under
 * which limits. The key itself is never in the config — only the name of the variable holding it.
 */
export const Route = z.strictObject({
  provider: z
    .enum(['offline', 'openai'])
    .describe('`offline`: the embedded rehearsal model; `openai`: any OpenAI-compatible endpoint through the official SDK.'),
  model: z.string().trim().min(1).describe('The model name the endpoint knows (`gpt-4o-mini`, `llama3.1:8b`, …).'),
  base_url: z
    .string()
    .url()
    .optional()
    .describe(
      "OpenAI-compatible endpoint, an http:// or https:// address; default `OPENAI_BASE_URL`, else the SDK's default (api.openai.com).",
    ),
  api_key_env: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be the NAME of an environment variable, not a key')
    .optional()
    .describe('Name of the environment variable holding the API key; default `OPENAI_API_KEY`. A local server needs none.'),
  temperature: z.number().min(0).max(2).optional().describe("Sampling temperature; default: the endpoint's own."),
  max_output_tokens: z
    .number()
    .int()
    .min(1)
    .max(1_000_000)
    .optional()
    .describe("Upper bound on each reply's tokens; default: the endpoint's own."),
  timeout_ms: z
    .number()
    .int()
    .min(100)
    .max(600_000)
    .default(60_000)
    .describe("Per attempt, in milliseconds: to connect, to receive the reply's headers, and the longest silence within its body."),
  max_retries: z
    .number()
    .int()
    .min(0)
    .max(10)
    .default(2)
    .describe(
      'Retries on this route after a failed attempt (a 429 other than an exhausted quota, a 5xx, a timeout, a lost connection, a broken reply), with a growing wait, before the call fails.',
    ),
  locality: z
    .enum(['local', 'remote'])
    .optional()
    .describe('`local`: on loopback (localhost, 127.x, ::1), data stays on this machine. Default: inferred from base_url.'),
  privileges: z
    .array(KnowledgeAction)
    .default(['READ_FILE', 'QUERY_CORTEX'])
    .describe("Knowledge actions personas on this route may use (intersected with the persona's own)."),
  json_mode: z
    .preprocess((v) => (v === 'response_format' ? 'json_object' : v), JsonMode)
    .default('json_schema')
    .describe(
      "How JSON replies are requested: `json_schema` (the reply's JSON Schema in `response_format`), `json_object` (any JSON object), or `prompt` (the instruction alone). An endpoint that rejects the format with HTTP 400 is asked the next way. `response_format`, the older name, means `json_object`.",
    ),
  stream: z.boolean().default(false).describe('Ask for a streamed response (server-sent events).'),
  max_concurrency: z
    .number()
    .int()
    .min(1)
    .max(1_000)
    .optional()
    .describe('Requests in flight at once on this route, across every run of the process; more wait their turn. Default: no limit.'),
  requests_per_minute: z
    .number()
    .int()
    .min(1)
    .max(1_000_000)
    .optional()
    .describe(
      'Requests (retries included) in any 60-second window, across every run of the process; more wait. A request counts from when it is sent until 60 s after its reply, so the endpoint never sees more either. Default: no limit.',
    ),
  tokens_per_minute: z
    .number()
    .int()
    .min(1)
    .max(100_000_000)
    .optional()
    .describe(
      'Tokens in any 60-second window, across every run of the process: a request is counted for its prompt plus `max_output_tokens` before it is sent, then for the tokens the endpoint says it used. Default: no limit.',
    ),
  default_query: z
    .record(z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, 'a query parameter name'), z.string().max(200))
    .optional()
    .describe('Query parameters sent with every request, e.g. `{"api-version": "2024-10-21"}` for Azure OpenAI.'),
  api_key_header: z
    .string()
    .regex(/^[A-Za-z0-9-]{1,64}$/, 'an HTTP header name')
    .optional()
    .describe('Also send the key in this header (`api-key` for Azure OpenAI); the key itself still comes from `api_key_env`.'),
});
export type Route = z.infer<typeof Route>;

/** A route ready to use: named, with its locality settled. The key is looked up by the adapter. */
export type ResolvedRoute = Route & { readonly id: string; readonly locality: 'local' | 'remote' };

/** The built-in route every workspace has: the embedded offline model. */
export const OFFLINE_ROUTE_ID = 'offline';

function schemeOf(url: string): string | undefined {
  try {
    return new URL(url).protocol;
  } catch {
    return undefined;
  }
}

/** Whether a base URL keeps data on this machine (a loopback host). */
export function isLocalUrl(baseUrl: string | undefined): boolean {
  if (!baseUrl) return false;
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    return false;
  }
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}

/** Settles a route's locality; a route that claims `local` but points elsewhere is an error. */
export function resolveRoute(id: string, route: Route, env: { OPENAI_BASE_URL?: string }): ResolvedRoute | { error: string } {
  if (route.provider === 'offline') return { ...route, id, locality: 'local' };
  const baseUrl = route.base_url ?? env.OPENAI_BASE_URL;
  const scheme = baseUrl === undefined ? undefined : schemeOf(baseUrl);
  if (baseUrl !== undefined && scheme !== 'http:' && scheme !== 'https:') {
    const from = route.base_url === undefined ? 'OPENAI_BASE_URL' : 'its base_url';
    return {
      error: `route "${id}": ${from} (${baseUrl}) is not an http:// or https:// address; the endpoint is called over HTTP (a unix socket is not supported: serve the endpoint on 127.0.0.1)`,
    };
  }
  const local = isLocalUrl(baseUrl);
  if (route.locality === 'local' && !local) {
    return { error: `route "${id}" says locality "local" but its endpoint (${baseUrl ?? 'the OpenAI default'}) is not on loopback` };
  }
  return { ...route, ...(baseUrl ? { base_url: baseUrl } : {}), id, locality: route.locality ?? (local ? 'local' : 'remote') };
}
