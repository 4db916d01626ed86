import type { LlmError } from '../../domain/errors.js';
import type { ResolvedRoute } from '../../domain/route.js';
import { OpenAiLlmClient } from './openai-llm-client.js';

/** The key a route uses, by the variable it names (never stored, never printed). */
export function routeApiKey(route: ResolvedRoute, env: Readonly<Record<string, string | undefined>>): string | undefined {
  return env[route.api_key_env ?? 'OPENAI_API_KEY'];
}

/** The smallest chat call there is: one short message, a few tokens back. */
const TINY = { messages: [{ role: 'user' as const, content: 'Reply with the single word OK.' }], maxOutputTokens: 8 };

/**
 * One attempt at a route, no retries and no streaming: undefined when the endpoint answered with a
 * completion, else the failure (its kind says whether the endpoint is there at all). With `json`,
 * the call asks for a JSON object the way the route's `json_mode` says, as the council's verdicts do.
 */
export async function probeRoute(
  route: ResolvedRoute,
  env: Readonly<Record<string, string | undefined>>,
  options: { json?: boolean } = {},
): Promise<LlmError | undefined> {
  if (route.provider === 'offline') return undefined;
  try {
    const client = new OpenAiLlmClient({ route: { ...route, max_retries: 0, stream: false }, apiKey: routeApiKey(route, env) });
    const schema = { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'], additionalProperties: false };
    const request = options.json
      ? { ...TINY, messages: [{ role: 'user' as const, content: 'Answer with the JSON object {"ok": true}.' }], maxOutputTokens: 32 }
      : TINY;
    await client.complete(options.json ? { ...request, responseFormat: { name: 'probe', schema } } : request);
    return undefined;
  } catch (error) {
    if (error instanceof Error && 'kind' in error) return error as LlmError;
    throw error;
  }
}
