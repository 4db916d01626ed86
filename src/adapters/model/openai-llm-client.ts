import type OpenAI from 'openai';
import { setTimeout as sleep } from 'node:timers/promises';
import { InternalError, type LlmError } from '../../domain/errors.js';
import type { CallContext, LlmClient, LlmNotice, LlmReply, LlmRequest } from '../../domain/ports.js';
import { decideRetry, MAX_SERVER_WAIT_MS, parseRetryAfter } from '../../domain/retry-policy.js';
import type { JsonMode, ResolvedRoute } from '../../domain/route.js';
import { createEndpointFetch, loadUndici, type Undici } from './endpoint-fetch.js';
import { finalFailure, llmError, type OpenAiSdk, toLlmError } from './openai-failure.js';
import { RouteLimiter, RouteLimitTooSmallError, type RoutePermit } from './route-limiter.js';
import { countTokens } from './token-counter.js';

/** Sent as the key to local servers (Ollama, vLLM, llama.cpp) that need none; the SDK insists on one. */
export const LOCAL_PLACEHOLDER_KEY = 'not-needed';

/** The part of the SDK this adapter uses; tests may inject a fake of this shape. */
export type ChatCompletionsApi = { chat: { completions: Pick<OpenAI['chat']['completions'], 'create'> } };

export interface OpenAiLlmClientOptions {
  /** The route this client serves (provider `openai`). */
  readonly route: ResolvedRoute;
  /** The key read from `route.api_key_env` (or `OPENAI_API_KEY`); never logged, never in a message. */
  readonly apiKey: string | undefined;
  /** An SDK client to use instead of building one (tests). */
  readonly client?: ChatCompletionsApi;
  /** The jitter's draw in [0, 1) (default `Math.random`). */
  readonly random?: () => number;
  /** Waits between attempts (default: a timer, cut short by the signal); tests record the waits instead. */
  readonly wait?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** The route's limits, shared by every client of the route in the process (default: one of its own, from the route). */
  readonly limiter?: RouteLimiter;
}

type ChatParams = Omit<OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming, 'stream'>;
/** What one attempt brought back. */
type Draft = Pick<LlmReply, 'content' | 'usage' | 'finishReason'>;

/** Hosts that speak OpenAI's current API, where reasoning models reject `max_tokens`. */
const OPENAI_HOSTED = /(^|\.)api\.openai\.com$|\.openai\.azure\.com$/i;

/**
 * An LlmClient over any OpenAI-compatible chat-completions endpoint (OpenAI, Azure OpenAI, Ollama,
 * vLLM, llama.cpp, LM Studio) through the official SDK, its own retries off. A failed attempt
 * becomes an LlmError whose `kind` the retry policy (`domain/retry-policy.ts`) reads: another
 * attempt after a wait, within `route.max_retries`, or the error, whose message never holds a body
 * or the key.
 */
export class OpenAiLlmClient implements LlmClient {
  readonly label: string;
  readonly rehearsal = false;
  readonly #route: ResolvedRoute;
  #client: ChatCompletionsApi | undefined;
  readonly #apiKey: string | undefined;
  readonly #random: () => number;
  readonly #wait: (ms: number, signal: AbortSignal) => Promise<void>;
  readonly #limiter: RouteLimiter;
  /** How JSON is asked for now; steps down (json_schema → json_object → prompt) when the endpoint rejects it. */
  #jsonMode: JsonMode;

  constructor(options: OpenAiLlmClientOptions) {
    const { route } = options;
    if (route.provider !== 'openai') throw new InternalError(`route "${route.id}" is not an openai route`);
    this.#route = route;
    this.#jsonMode = route.json_mode;
    this.label = `${route.id} (${route.model})`;
    this.#apiKey = options.apiKey;
    this.#client = options.client;
    this.#random = options.random ?? Math.random;
    this.#wait = options.wait ?? ((ms, signal) => sleep(ms, undefined, { signal }).catch(() => undefined));
    this.#limiter =
      options.limiter ??
      new RouteLimiter(route.id, {
        maxConcurrency: route.max_concurrency,
        requestsPerMinute: route.requests_per_minute,
        tokensPerMinute: route.tokens_per_minute,
      });
  }

  async complete(request: LlmRequest, context?: Pick<CallContext, 'onText' | 'onWait'>, signal?: AbortSignal): Promise<LlmReply> {
    signal?.throwIfAborted();
    // Loaded on the first call rather than at start-up (the module cache keeps it): a run on the offline model never needs it.
    const sdk: OpenAiSdk = await import('openai');
    const client = (this.#client ??= createSdkClient(sdk, await loadUndici(), this.#route, this.#apiKey));
    const route = this.#route;
    const notices: LlmNotice[] = [];
    // The SDK adds an abort listener to the signal it is given on every request and never removes
    // it; each call gets its own signal, linked to the caller's and released when the call ends.
    const call = linkedSignal(signal);
    try {
      for (let retries = 0; ; ) {
        // How this request asks for JSON on this route now (`undefined`: it is not a JSON request).
        const mode = request.responseFormat ? this.#jsonMode : undefined;
        // Each attempt is a request the endpoint counts: each waits for the route's limits.
        const permit = await this.#admit(request, context?.onWait, call.signal);
        try {
          const params = this.#params(request, mode);
          const result = await (route.stream
            ? this.#streamed(client, params, call.signal, context?.onText)
            : this.#whole(client, params, call.signal, context?.onText));
          permit.release(result.usage ? result.usage.prompt_tokens + result.usage.completion_tokens : undefined);
          signal?.throwIfAborted();
          return {
            ...result,
            model: `${route.id}/${route.model}`,
            identity: { provider: 'openai', model: route.model, route: route.id, rehearsal: false },
            ...(notices.length > 0 ? { notices } : {}),
          };
        } catch (error) {
          permit.release();
          // Cancellation is not a model failure: the caller gets its own abort reason back.
          signal?.throwIfAborted();
          const notice = this.#stepDownJsonMode(mode, error, sdk);
          if (notice) {
            notices.push(notice);
            continue;
          }
          const headers = error instanceof sdk.APIError ? error.headers : undefined;
          await this.#waitOrThrow(toLlmError(error, route, sdk), headers, retries, call.signal);
          signal?.throwIfAborted();
          retries += 1;
        }
      }
    } finally {
      call.release();
    }
  }

  /** Waits for the route's limits (shared by every run of the process); a request too large for them ever fails now. */
  async #admit(request: LlmRequest, onWait: CallContext['onWait'], signal: AbortSignal): Promise<RoutePermit> {
    const limits = this.#route;
    const tokens = limits.tokens_per_minute === undefined ? 0 : estimateTokens(request, limits.max_output_tokens);
    try {
      return await this.#limiter.acquire(tokens, { signal, ...(onWait ? { onWait } : {}) });
    } catch (error) {
      if (!(error instanceof RouteLimitTooSmallError)) throw error;
      throw llmError(this.#route, 'bad_request', `this call needs ${error.message}: it can never be sent within that limit`);
    }
  }

  /** The endpoint does not take this response_format (HTTP 400): ask the next way, for the rest of this client's life. */
  #stepDownJsonMode(mode: JsonMode | undefined, error: unknown, sdk: OpenAiSdk): LlmNotice | undefined {
    const next = mode === 'json_schema' ? 'json_object' : mode === 'json_object' ? 'prompt' : undefined;
    if (!mode || !next || !(error instanceof sdk.APIError) || error.status !== 400) return undefined;
    this.#jsonMode = next;
    return { kind: 'json_mode_fallback', route: this.#route.id, from: mode, to: next, status: 400 };
  }

  /** The retry policy's word on a failed attempt (and the headers of its reply, if any): wait before the next one, or throw. */
  async #waitOrThrow(failure: LlmError, headers: Headers | undefined, retriesMade: number, signal: AbortSignal): Promise<void> {
    const asked = { retryAfterMs: headers?.get('retry-after-ms'), retryAfter: headers?.get('retry-after') };
    const serverWaitMs = parseRetryAfter(asked, Date.now());
    // A 429 that names a wait slows the whole route: every run's next call on it waits too.
    if (failure.kind === 'rate_limit' && serverWaitMs !== undefined) this.#limiter.pause(Math.min(serverWaitMs, MAX_SERVER_WAIT_MS));
    const decision = decideRetry({
      kind: failure.kind,
      retriesMade,
      maxRetries: this.#route.max_retries,
      serverWaitMs,
      serverRefuses: headers?.get('x-should-retry') === 'false',
      random: this.#random(),
    });
    if (!decision.retry) throw finalFailure(failure, retriesMade, decision, serverWaitMs);
    await this.#wait(decision.delayMs, signal);
  }

  async #whole(client: ChatCompletionsApi, params: ChatParams, signal: AbortSignal, onText?: (delta: string) => void): Promise<Draft> {
    const completion = await client.chat.completions.create({ ...params, stream: false }, { signal });
    const choice = Array.isArray(completion.choices) ? completion.choices[0] : undefined;
    if (!choice) throw llmError(this.#route, 'invalid_output', 'the endpoint sent a completion with no choices');
    const content = choice.message?.content ?? '';
    if (content.trim().length === 0) {
      const why = choice.message?.refusal ? 'the model refused' : `finish_reason ${choice.finish_reason}`;
      throw llmError(this.#route, 'invalid_output', `the model returned no content (${why})`);
    }
    onText?.(content);
    return draft(content, readUsage(completion.usage), choice.finish_reason);
  }

  async #streamed(client: ChatCompletionsApi, params: ChatParams, signal: AbortSignal, onText?: (delta: string) => void): Promise<Draft> {
    const stream = await client.chat.completions.create({ ...params, stream: true, stream_options: { include_usage: true } }, { signal });
    let content = '';
    let usage: LlmReply['usage'];
    let finish: string | null | undefined;
    for await (const chunk of stream) {
      const choice = chunk.choices[0];
      const delta = choice?.delta.content ?? '';
      if (delta) {
        content += delta;
        onText?.(delta);
      }
      finish = choice?.finish_reason ?? finish;
      usage = readUsage(chunk.usage) ?? usage;
    }
    // The SDK ends the iteration quietly on abort too; complete() tells the two apart by the caller's signal.
    if (!finish) throw llmError(this.#route, 'network', 'the stream ended before the model finished');
    if (content.trim().length === 0) {
      throw llmError(this.#route, 'invalid_output', `the model returned no content (finish_reason ${finish})`);
    }
    return draft(content, usage, finish);
  }

  #params(request: LlmRequest, mode: JsonMode | undefined): ChatParams {
    const route = this.#route;
    const params: ChatParams = {
      model: route.model,
      messages: request.messages.map((m) => ({ role: m.role, content: m.content })),
    };
    if (route.temperature !== undefined) params.temperature = route.temperature;
    const limit = minDefined(route.max_output_tokens, request.maxOutputTokens);
    if (limit !== undefined) {
      // OpenAI's reasoning models reject max_tokens; most local servers ignore max_completion_tokens.
      if (isOpenAiHosted(route.base_url)) params.max_completion_tokens = limit;
      else params.max_tokens = limit;
    }
    if (mode === 'json_object') params.response_format = { type: 'json_object' };
    if (mode === 'json_schema' && request.responseFormat) {
      params.response_format = {
        type: 'json_schema',
        json_schema: { name: request.responseFormat.name, schema: request.responseFormat.schema, strict: true },
      };
    }
    return params;
  }
}

/** A reply's content, its usage when the endpoint told it, and why the model stopped. */
function draft(content: string, usage: LlmReply['usage'], finish: string | null | undefined): Draft {
  const finishReason = finish === 'stop' ? 'stop' : finish === 'length' ? 'length' : finish ? 'other' : undefined;
  return { content, ...(usage ? { usage } : {}), ...(finishReason ? { finishReason } : {}) };
}

/** A request's tokens before it is sent: its prompt, counted, and the most it may answer. */
function estimateTokens(request: LlmRequest, routeMaxOutput: number | undefined): number {
  const prompt = request.messages.reduce((sum, m) => sum + countTokens(m.content) + 4, 0);
  return prompt + (minDefined(routeMaxOutput, request.maxOutputTokens) ?? 0);
}

function minDefined(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  return b === undefined ? a : Math.min(a, b);
}

/** An AbortController that follows `parent`; `release()` removes the listener it put on `parent`. */
function linkedSignal(parent: AbortSignal | undefined): { signal: AbortSignal; release: () => void } {
  const controller = new AbortController();
  if (!parent) return { signal: controller.signal, release: () => undefined };
  const follow = (): void => controller.abort(parent.reason);
  if (parent.aborted) follow();
  else parent.addEventListener('abort', follow, { once: true });
  return { signal: controller.signal, release: () => parent.removeEventListener('abort', follow) };
}

function createSdkClient(sdk: OpenAiSdk, undici: Undici, route: ResolvedRoute, apiKey: string | undefined): OpenAI {
  const silent = { error: noop, warn: noop, info: noop, debug: noop };
  return new sdk.OpenAI({
    apiKey: apiKey || LOCAL_PLACEHOLDER_KEY,
    // The SDK would read these from OPENAI_ADMIN_KEY / OPENAI_ORG_ID / OPENAI_PROJECT_ID: an admin key
    // has no business here, and OpenAI account identifiers are sent to OpenAI's own hosts only.
    adminAPIKey: null,
    ...(isOpenAiHosted(route.base_url) ? {} : { organization: null, project: null }),
    // Passed explicitly so the SDK never falls back to OPENAI_BASE_URL behind the route's back.
    baseURL: route.base_url ?? 'https://api.openai.com/v1',
    // The SDK's limit ends when the headers arrive; the HTTP layer holds a body to the same limit between chunks.
    timeout: route.timeout_ms,
    // Retries are the retry policy's, in complete(): the SDK retrying too would multiply the attempts.
    maxRetries: 0,
    // An explicit level wins over OPENAI_LOG, and the logger drops everything anyway: request and
    // response bodies must never reach a log.
    logLevel: 'off',
    logger: silent,
    fetch: createEndpointFetch(undici, { timeoutMs: route.timeout_ms }),
    // Azure OpenAI's classic endpoints want `?api-version=…` on every request and the key in `api-key`.
    ...(route.default_query ? { defaultQuery: { ...route.default_query } } : {}),
    ...(route.api_key_header && apiKey ? { defaultHeaders: { [route.api_key_header]: apiKey } } : {}),
  });
}

function noop(): void {}

/** A resolved route's base_url is an http(s) address (`resolveRoute`); none means OpenAI's own. */
function isOpenAiHosted(baseUrl: string | undefined): boolean {
  return !baseUrl || OPENAI_HOSTED.test(new URL(baseUrl).hostname);
}

/** The counts an endpoint reports; `prompt_tokens_details.cached_tokens` when it says what its prompt cache served. */
function readUsage(usage: OpenAI.CompletionUsage | null | undefined): LlmReply['usage'] {
  if (!usage || typeof usage.prompt_tokens !== 'number' || typeof usage.completion_tokens !== 'number') return undefined;
  const cached = usage.prompt_tokens_details?.cached_tokens;
  const counted = typeof cached === 'number' && Number.isInteger(cached) && cached >= 0;
  return {
    prompt_tokens: usage.prompt_tokens,
    completion_tokens: usage.completion_tokens,
    ...(counted ? { cached_tokens: Math.min(cached, usage.prompt_tokens) } : {}),
  };
}
