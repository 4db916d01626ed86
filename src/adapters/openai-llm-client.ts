import type OpenAI from 'openai';
import { InternalError, LlmError, type LlmErrorKind } from '../domain/errors.js';
import { setTimeout as sleep } from 'node:timers/promises';
import type { CallContext, LlmClient, LlmNotice, LlmReply, LlmRequest } from '../domain/ports.js';
import type { JsonMode, ResolvedRoute } from '../domain/route.js';
import { detectSensitive } from '../domain/sensitive/detector.js';
import { BodyTimeoutError, type CallTrace, createEndpointFetch, MAX_REDIRECTS, traceOptions } from './endpoint-fetch.js';

/** Sent as the key to local servers (Ollama, vLLM, llama.cpp) that need none; the SDK insists on one. */

type Sdk = typeof import('openai');
let sdk: Sdk | undefined;

/** The SDK, loaded on the first call rather than at start-up: a run on the offline model never needs it. */
async function loadSdk(): Promise<Sdk> {
  sdk ??= await import('openai');
  return sdk;
}

/** The SDK's classes, for telling its errors apart (only ever asked after `loadSdk`, inside a call). */
function loaded(): Sdk {
  if (!sdk) throw new InternalError('the openai SDK is used before it was loaded');
  return sdk;
}
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
}

type ChatParams = Omit<OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming, 'stream'>;
type Usage = NonNullable<LlmReply['usage']>;

/** Hosts that speak OpenAI's current API, where reasoning models reject `max_tokens`. */
const OPENAI_HOSTED = /(^|\.)api\.openai\.com$|\.openai\.azure\.com$/i;

/**
 * An LlmClient over any OpenAI-compatible chat-completions endpoint (OpenAI, Azure OpenAI, Ollama,
 * vLLM, llama.cpp, LM Studio) through the official SDK. The SDK retries 429/5xx/timeouts itself
 * (`route.max_retries`); what still fails comes out as an LlmError whose `kind` and `retryable`
 * say what policy may do next, and whose message never holds a body or the key.
 */
export class OpenAiLlmClient implements LlmClient {
  readonly label: string;
  readonly rehearsal = false;
  readonly #route: ResolvedRoute;
  #client: ChatCompletionsApi | undefined;
  readonly #apiKey: string | undefined;
  /** How JSON is asked for now; steps down (json_schema → json_object → prompt) when the endpoint rejects it. */
  #jsonMode: JsonMode;

  constructor(options: OpenAiLlmClientOptions) {
    const { route } = options;
    if (route.provider !== 'openai') throw new InternalError(`route "${route.id}" is not an openai route`);
    this.#route = route;
    this.#jsonMode = route.json_mode;
    this.label = `${route.id} (${route.model})`;
    checkApiKey(route, options.apiKey);
    this.#apiKey = options.apiKey;
    this.#client = options.client;
  }

  async complete(request: LlmRequest, context?: Pick<CallContext, 'onText'>, signal?: AbortSignal): Promise<LlmReply> {
    signal?.throwIfAborted();
    await loadSdk();
    this.#client ??= createSdkClient(this.#route, this.#apiKey);
    const route = this.#route;
    const trace: CallTrace = { attempts: 0, streamed: route.stream === true };
    const notices: LlmNotice[] = [];
    let fallbackAttempts = 0;
    // The SDK adds an abort listener to the signal it is given on every request and never removes
    // it; each call gets its own signal, linked to the caller's and released when the call ends.
    const call = linkedSignal(signal);
    try {
      for (;;) {
        const mode = this.#modeFor(request);
        try {
          const sent = { signal: call.signal, fetchOptions: traceOptions(trace) };
          const result = await (route.stream ? this.#streamed(request, mode, sent, context?.onText) : this.#whole(request, mode, sent, context?.onText));
          signal?.throwIfAborted();
          return {
            content: result.content,
            model: `${route.id}/${route.model}`,
            identity: { provider: 'openai', model: route.model, route: route.id, rehearsal: false },
            ...(result.usage ? { usage: result.usage } : {}),
            ...(result.finish ? { finishReason: result.finish } : {}),
            ...(notices.length > 0 ? { notices } : {}),
          };
        } catch (error) {
          // Cancellation is not a model failure: the caller gets its own abort reason back.
          signal?.throwIfAborted();
          const next = mode === 'json_schema' ? 'json_object' : mode === 'json_object' ? 'prompt' : undefined;
          if (mode && next && error instanceof loaded().APIError && error.status === 400) {
            // The endpoint does not take this response_format: ask the next way, for the rest of this client's life.
            this.#jsonMode = next;
            fallbackAttempts += 1;
            notices.push({ kind: 'json_mode_fallback', route: route.id, from: mode, to: next, status: 400 });
            continue;
          }
          // A malformed body, no choices, a cut stream: one-off, retried within the same budget as a 5xx.
          if (isOneOff(error) && trace.attempts - fallbackAttempts <= route.max_retries) {
            await sleep(ONE_OFF_BACKOFF_MS * (trace.attempts - fallbackAttempts), undefined, { signal: call.signal }).catch(() => undefined);
            signal?.throwIfAborted();
            continue;
          }
          throw toLlmError(error, route, { attempts: trace.attempts - fallbackAttempts });
        }
      }
    } finally {
      call.release();
    }
  }

  #sdkClient(): ChatCompletionsApi {
    if (!this.#client) throw new InternalError('the openai client is used before it was made');
    return this.#client;
  }

  /** How this request asks for JSON on this route now (`undefined`: it is not a JSON request). */
  #modeFor(request: LlmRequest): JsonMode | undefined {
    return request.responseFormat ? this.#jsonMode : undefined;
  }

  async #whole(request: LlmRequest, mode: JsonMode | undefined, sent: SentOptions, onText: ((delta: string) => void) | undefined): Promise<Draft> {
    const completion = await this.#sdkClient().chat.completions.create({ ...this.#params(request, mode), stream: false }, sent);
    const choice = Array.isArray(completion.choices) ? completion.choices[0] : undefined;
    if (!choice) throw new OneOffFailure('invalid_output', 'the endpoint sent a completion with no choices');
    const content = choice.message?.content ?? '';
    if (content.trim().length === 0) {
      const why = choice.message?.refusal ? 'the model refused' : `finish_reason ${choice.finish_reason}`;
      throw llmError(this.#route, 'invalid_output', `the model returned no content (${why})`, true);
    }
    onText?.(content);
    return { content, usage: readUsage(completion.usage), finish: finishOf(choice.finish_reason) };
  }

  async #streamed(request: LlmRequest, mode: JsonMode | undefined, sent: SentOptions, onText: ((delta: string) => void) | undefined): Promise<Draft> {
    const stream = await this.#sdkClient().chat.completions.create({ ...this.#params(request, mode), stream: true, stream_options: { include_usage: true } }, sent);
    let content = '';
    let usage: Usage | undefined;
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
    if (!finish) throw new OneOffFailure('network', 'the stream ended before the model finished');
    if (content.trim().length === 0) throw llmError(this.#route, 'invalid_output', `the model returned no content (finish_reason ${finish})`, true);
    return { content, usage, finish: finishOf(finish) };
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
      params.response_format = { type: 'json_schema', json_schema: { name: request.responseFormat.name, schema: request.responseFormat.schema, strict: true } };
    }
    return params;
  }
}

/** The SDK's request options of one attempt loop: the call's signal, and the trace its fetches count into. */
interface SentOptions {
  readonly signal: AbortSignal;
  readonly fetchOptions: Record<symbol, CallTrace>;
}

interface Draft {
  readonly content: string;
  readonly usage: Usage | undefined;
  readonly finish: LlmReply['finishReason'];
}

function finishOf(reason: string | null | undefined): LlmReply['finishReason'] {
  return reason === 'stop' ? 'stop' : reason === 'length' ? 'length' : reason ? 'other' : undefined;
}

function minDefined(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  return b === undefined ? a : Math.min(a, b);
}

/** Pause before retrying a one-off failure, times the attempts made (the SDK backs off from 0.5 s for a 5xx). */
const ONE_OFF_BACKOFF_MS = 100;

/** A reply that arrived broken (no choices, a cut stream); another attempt will likely do. */
class OneOffFailure extends Error {
  constructor(
    readonly kind: LlmErrorKind,
    readonly what: string,
  ) {
    super(what);
    this.name = 'OneOffFailure';
  }
}

/** Failures after a response arrived, which the SDK does not retry: malformed body, no choices, a cut body. */
function isOneOff(error: unknown): boolean {
  if (error instanceof OneOffFailure || error instanceof SyntaxError) return true;
  if (error instanceof LlmError) return error.kind === 'invalid_output' && error.retryable;
  // Undici reports a connection dropped mid-body as a TypeError ("terminated").
  return error instanceof TypeError && !(error instanceof loaded().APIError);
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

/** A remote endpoint without a key is refused when the client is made, before any call. */
function checkApiKey(route: ResolvedRoute, apiKey: string | undefined): void {
  const keyVar = route.api_key_env ?? 'OPENAI_API_KEY';
  if (!apiKey && route.locality === 'remote') {
    throw llmError(route, 'auth', `no API key: set the environment variable ${keyVar} (the route's endpoint is remote)`);
  }
}

function createSdkClient(route: ResolvedRoute, apiKey: string | undefined): OpenAI {
  const silent = { error: noop, warn: noop, info: noop, debug: noop };
  return new (loaded().OpenAI)({
    apiKey: apiKey || LOCAL_PLACEHOLDER_KEY,
    // The SDK would read these from OPENAI_ADMIN_KEY / OPENAI_ORG_ID / OPENAI_PROJECT_ID: an admin key
    // has no business here, and OpenAI account identifiers are sent to OpenAI's own hosts only.
    adminAPIKey: null,
    ...(isOpenAiHosted(route.base_url) ? {} : { organization: null, project: null }),
    // Passed explicitly so the SDK never falls back to OPENAI_BASE_URL behind the route's back.
    baseURL: route.base_url ?? 'https://api.openai.com/v1',
    timeout: route.timeout_ms,
    maxRetries: route.max_retries,
    // An explicit level wins over OPENAI_LOG, and the logger drops everything anyway: request and
    // response bodies must never reach a log.
    logLevel: 'off',
    logger: silent,
    fetch: createEndpointFetch({ bodyTimeoutMs: route.timeout_ms }),
    // Azure OpenAI's classic endpoints want `?api-version=…` on every request and the key in `api-key`.
    ...(route.default_query ? { defaultQuery: { ...route.default_query } } : {}),
    ...(route.api_key_header && apiKey ? { defaultHeaders: { [route.api_key_header]: apiKey } } : {}),
  });
}

function noop(): void {}

function isOpenAiHosted(baseUrl: string | undefined): boolean {
  if (!baseUrl) return true;
  try {
    return OPENAI_HOSTED.test(new URL(baseUrl).hostname);
  } catch {
    return false;
  }
}

function readUsage(usage: { prompt_tokens?: number; completion_tokens?: number } | null | undefined): Usage | undefined {
  if (!usage || typeof usage.prompt_tokens !== 'number' || typeof usage.completion_tokens !== 'number') return undefined;
  return { prompt_tokens: usage.prompt_tokens, completion_tokens: usage.completion_tokens };
}

function llmError(route: ResolvedRoute, kind: LlmErrorKind, what: string, retryable = false, status?: number, cause?: unknown): LlmError {
  return new LlmError(`route "${route.id}": ${what}`, retryable, status, { kind, route: route.id, ...(cause === undefined ? {} : { cause }) });
}

/**
 * The cause kept on an LlmError. SDK status errors quote the response body in their message (and
 * some servers echo the request in validation errors), as does a JSON SyntaxError, so those are
 * replaced by a summary; connection errors and our own timeouts carry no body and are kept.
 */
function safeCause(error: unknown): unknown {
  if (error instanceof BodyTimeoutError || (error instanceof loaded().APIConnectionError && !(error instanceof loaded().APIUserAbortError))) return error;
  if (!(error instanceof Error)) return new Error('non-error thrown by the SDK');
  const parts = [error.name];
  if (error instanceof loaded().APIError) {
    if (error.status !== undefined) parts.push(`HTTP ${error.status}`);
    const code = shortCode(error.code) ?? shortCode(error.type);
    if (code) parts.push(code);
    if (error.requestID) parts.push(`request id ${shortCode(error.requestID) ?? '(unprintable)'}`);
  }
  const summary = new Error(`${parts.join(', ')} (details withheld: they may quote a request or response body)`);
  summary.name = 'SdkErrorSummary';
  return summary;
}

/**
 * Translates whatever the SDK threw (after its own retries) into an LlmError. Messages are built
 * from the status and short codes only: the SDK's own messages quote the response body.
 */
function toLlmError(error: unknown, route: ResolvedRoute, trace: CallTrace): LlmError {
  if (error instanceof LlmError) return error.retryable && trace.attempts > 1 ? withRetries(error, trace) : error;
  if (error instanceof OneOffFailure) return withRetries(llmError(route, error.kind, error.what, true), trace);
  const retries = trace.attempts > 1 ? ` after ${trace.attempts - 1} ${trace.attempts === 2 ? 'retry' : 'retries'}` : '';
  const make = (kind: LlmErrorKind, what: string, retryable: boolean, status?: number): LlmError =>
    llmError(route, kind, what, retryable, status, safeCause(error));

  if (error instanceof BodyTimeoutError) {
    return make('timeout', error.whole ? `the reply was not all in within ${error.timeoutMs} ms${retries}` : `no data from the endpoint for ${error.timeoutMs} ms while reading the reply`, true);
  }
  if (error instanceof loaded().APIConnectionTimeoutError) return make('timeout', `no response within ${route.timeout_ms} ms${retries}`, true);
  if (error instanceof loaded().APIUserAbortError) return make('network', 'the request was cancelled', true);
  if (error instanceof loaded().APIConnectionError) return make('network', `could not reach ${endpointName(route)}${causeCode(error)}${retries}`, true);
  if (error instanceof loaded().APIError) {
    const status = error.status;
    const code = shortCode(error.code) ?? shortCode(error.type);
    const http = status === undefined ? 'an error in the stream' : `HTTP ${status}${code ? ` ${code}` : ''}`;
    if (status === undefined) return make('server', `the endpoint reported ${http}`, true);
    if (status === 429 && (error.code === 'insufficient_quota' || error.type === 'insufficient_quota')) {
      return make('quota', `the account's quota is exhausted (${http}); not retried`, false, status);
    }
    if (status === 402) return make('quota', `the endpoint wants payment (${http}); not retried`, false, status);
    if (status === 429) return make('rate_limit', `rate limited (${http})${retries}`, true, status);
    if (status === 401 || status === 403) {
      return make('auth', `the endpoint refused the credentials (${http}); check ${route.api_key_env ?? 'OPENAI_API_KEY'}`, false, status);
    }
    if (status >= 300 && status < 400) {
      // Followed only within the same origin with the method and body kept (307/308); any other would drop the body or carry the key elsewhere.
      const location = redirectTarget(error.headers, route);
      if (!location) return make('bad_request', `the endpoint answered ${http} without saying where to; check the route's base_url`, false, status);
      if (location.sameOrigin && (status === 307 || status === 308)) return make('bad_request', `the endpoint keeps redirecting (${http}, more than ${MAX_REDIRECTS} times); check the route's base_url`, false, status);
      const where = location.sameOrigin ? ' to another path on the same host' : location.origin ? ` to ${location.origin}` : '';
      return make('bad_request', `the endpoint redirects (${http}${where}); set the route's base_url to the address it should call`, false, status);
    }
    if (status === 408) return make('timeout', `the endpoint timed out (${http})${retries}`, true, status);
    if (status >= 500 || status === 409) return make('server', `${http} from the endpoint${retries}`, true, status);
    return make('bad_request', `the endpoint rejected the request (${http}) for model "${route.model}"`, false, status);
  }
  if (error instanceof SyntaxError) return make('invalid_output', `the endpoint sent a reply that is not valid JSON${retries}`, true);
  // Undici reports a connection dropped mid-body as a TypeError ("terminated").
  return make('network', `the connection to ${endpointName(route)} failed while reading the reply${retries}`, true);
}

/** Where a redirect points, as an origin only (a path or query could carry anything); undefined when the reply names no place. */
function redirectTarget(headers: Headers | undefined, route: ResolvedRoute): { origin?: string; sameOrigin: boolean } | undefined {
  const location = headers?.get('location');
  if (!location) return undefined;
  try {
    const base = new URL(route.base_url ?? 'https://api.openai.com/v1');
    const url = new URL(location, base);
    const origin = url.protocol === 'http:' || url.protocol === 'https:' ? url.origin : undefined;
    return { ...(origin ? { origin } : {}), sameOrigin: origin === base.origin };
  } catch {
    return { sameOrigin: false };
  }
}

/** The same failure, saying how many attempts were made. */
function withRetries(error: LlmError, trace: CallTrace): LlmError {
  const n = trace.attempts - 1;
  if (n < 1) return error;
  const route = error.route ? { route: error.route } : {};
  return new LlmError(`${error.message} after ${n} ${n === 1 ? 'retry' : 'retries'}`, error.retryable, error.status, { kind: error.kind, ...route, ...(error.cause === undefined ? {} : { cause: error.cause }) });
}

function endpointName(route: ResolvedRoute): string {
  if (!route.base_url) return 'api.openai.com';
  try {
    return new URL(route.base_url).host;
  } catch {
    return 'the endpoint';
  }
}

/** A system or TLS error code such as ECONNREFUSED or CERT_HAS_EXPIRED, from the cause chain (a certificate the process does not trust is explained). */
function causeCode(error: Error): string {
  let cause: unknown = error.cause;
  for (let depth = 0; depth < 4 && cause instanceof Error; depth++) {
    const code = (cause as { code?: unknown }).code;
    if (code === 'EPROTO' && /wrong version number/.test(cause.message)) return ` (EPROTO: no TLS there; if the endpoint speaks plain HTTP, its base_url starts with http://)`;
    if (typeof code === 'string' && /^E[A-Z_]+$/.test(code)) return ` (${code})`;
    if (typeof code === 'string' && TLS_TRUST_CODES.test(code)) return ` (${code}: its certificate is not trusted here; a private CA's certificate goes in NODE_EXTRA_CA_CERTS)`;
    if (typeof code === 'string' && /^(ERR_TLS_[A-Z_]+|CERT_[A-Z_]+)$/.test(code)) return ` (${code})`;
    cause = cause.cause;
  }
  return '';
}

/** OpenSSL's verification codes for a certificate whose issuer is not among the trusted ones. */
const TLS_TRUST_CODES = /^(DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_GET_ISSUER_CERT|UNABLE_TO_GET_ISSUER_CERT_LOCALLY|UNABLE_TO_VERIFY_LEAF_SIGNATURE)$/;

/** Error codes are identifiers like `insufficient_quota`; anything else is not repeated. */
function shortCode(value: unknown): string | undefined {
  // A body can put anything in `code`, a key included: what the detector calls sensitive is not repeated either.
  return typeof value === 'string' && /^[A-Za-z0-9_.-]{1,64}$/.test(value) && detectSensitive(value).length === 0 ? value : undefined;
}
