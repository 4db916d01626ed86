import { LlmError } from '../../domain/errors.js';
import type { CallCheck, ModelsListing } from '../../domain/route-doctor.js';
import type { ResolvedRoute } from '../../domain/route.js';
import { createEndpointFetch, loadUndici } from './endpoint-fetch.js';
import { causeNote, endpointOrigin } from './openai-failure.js';
import { OpenAiLlmClient } from './openai-llm-client.js';

/** The key a route uses, by the variable it names (never stored, never printed). */
export function routeApiKey(route: ResolvedRoute, env: Readonly<Record<string, string | undefined>>): string | undefined {
  return env[route.api_key_env ?? 'OPENAI_API_KEY'];
}

/** The smallest chat call there is: one short message, a few tokens back. */
const TINY = { messages: [{ role: 'user' as const, content: 'Reply with the single word OK.' }], maxOutputTokens: 8 };

/**
 * One attempt at a route, no retries and no streaming: undefined when the endpoint answered with a
 * completion, else the failure (its kind says whether the endpoint is there at all).
 */
export async function probeRoute(route: ResolvedRoute, env: Readonly<Record<string, string | undefined>>): Promise<LlmError | undefined> {
  if (route.provider === 'offline') return undefined;
  try {
    const client = new OpenAiLlmClient({ route: { ...route, max_retries: 0, stream: false }, apiKey: routeApiKey(route, env) });
    await client.complete(TINY);
    return undefined;
  } catch (error) {
    if (error instanceof LlmError) return error;
    throw error;
  }
}

/**
 * `GET <base_url>/models` with the route's key: the model ids the endpoint offers, its HTTP status
 * when it answers otherwise (404: it does not offer the list), or why it did not answer at all.
 */
export async function listModels(route: ResolvedRoute, env: Readonly<Record<string, string | undefined>>): Promise<ModelsListing> {
  const fetch = createEndpointFetch(await loadUndici(), { timeoutMs: route.timeout_ms });
  const url = new URL(`${(route.base_url ?? 'https://api.openai.com/v1').replace(/\/+$/, '')}/models`);
  for (const [name, value] of Object.entries(route.default_query ?? {})) url.searchParams.set(name, value);
  const key = routeApiKey(route, env);
  const headers: Record<string, string> = { accept: 'application/json' };
  if (key) headers.authorization = `Bearer ${key}`;
  if (key && route.api_key_header) headers[route.api_key_header] = key;
  try {
    const response = await fetch(url, { method: 'GET', headers });
    if (!response.ok) {
      await response.body?.cancel();
      return { kind: 'status', status: response.status };
    }
    const body = (await response.json().catch(() => undefined)) as { data?: unknown } | undefined;
    const ids = Array.isArray(body?.data)
      ? body.data.map((m: { id?: unknown }) => m?.id).filter((id): id is string => typeof id === 'string')
      : undefined;
    return ids ? { kind: 'listed', ids } : { kind: 'status', status: response.status };
  } catch (error) {
    // The same words as a run's failure (TLS on a plain port, an untrusted certificate), else the code.
    const note = error instanceof Error ? causeNote(error) : '';
    return { kind: 'unreachable', message: `could not connect to ${endpointOrigin(route)}${note || errorCode(error)}` };
  }
}

/** The tiny structured call of `maestro doctor`: how JSON was asked for in the end, and whether the reply read as JSON. */
export async function checkStructuredCall(route: ResolvedRoute, env: Readonly<Record<string, string | undefined>>): Promise<CallCheck> {
  if (route.provider === 'offline') return { ok: true, jsonMode: route.json_mode, steppedFrom: undefined, json: true };
  const schema = { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'], additionalProperties: false };
  try {
    const client = new OpenAiLlmClient({ route: { ...route, max_retries: 0, stream: false }, apiKey: routeApiKey(route, env) });
    const reply = await client.complete({
      messages: [{ role: 'user', content: 'Answer with the JSON object {"ok": true} and nothing else.' }],
      responseFormat: { name: 'doctor_check', schema },
      maxOutputTokens: 64,
    });
    const steps = (reply.notices ?? []).filter((n) => n.kind === 'json_mode_fallback');
    const last = steps.at(-1);
    return { ok: true, jsonMode: last ? last.to : route.json_mode, steppedFrom: steps[0]?.from, json: readsAsJson(reply.content) };
  } catch (error) {
    if (error instanceof LlmError) return { ok: false, kind: error.kind, message: error.message };
    throw error;
  }
}

function readsAsJson(text: string): boolean {
  const trimmed = text.trim().replace(/^```(?:json)?\s*|\s*```$/g, '');
  try {
    const value: unknown = JSON.parse(trimmed);
    return value !== null && typeof value === 'object';
  } catch {
    return false;
  }
}

/** The first system or undici error code in a cause chain, as ` (CODE)`; else the innermost short plain message (`bad port`). */
function errorCode(error: unknown): string {
  let cause: unknown = error;
  let innermost: string | undefined;
  for (let depth = 0; depth < 5 && cause instanceof Error; depth++) {
    const code = (cause as { code?: unknown }).code;
    if (typeof code === 'string' && /^[A-Z][A-Z0-9_]+$/.test(code)) return ` (${code})`;
    if (/^[\w .,:'-]{1,60}$/.test(cause.message)) innermost = cause.message;
    cause = cause.cause;
  }
  return innermost ? ` (${innermost})` : '';
}
