import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { PromptMeter } from '../helpers/prompt-meter.mjs';
import { aMediatorReading } from '../fixtures/domain-builders.js';

/**
 * A real chat-completions endpoint on 127.0.0.1 for tests: the openai SDK talks to it over real
 * HTTP, JSON or server-sent events, exactly as it would to OpenAI, vLLM or Ollama. Each request is
 * answered by a handler and recorded for assertions.
 */

/** The request body as the server parsed it (only the fields tests look at are typed). */
export interface ChatRequestBody {
  readonly model?: string;
  readonly messages?: { role: string; content: string }[];
  readonly stream?: boolean;
  readonly stream_options?: { include_usage?: boolean };
  readonly response_format?: { type: string; json_schema?: { name: string; strict?: boolean; schema: Record<string, unknown> } };
  readonly temperature?: number;
  readonly max_tokens?: number;
  readonly max_completion_tokens?: number;
  readonly [key: string]: unknown;
}

export interface RecordedRequest {
  /** 1-based, in arrival order, over all paths. */
  readonly n: number;
  readonly method: string;
  readonly path: string;
  /** The query string, without the `?` ('' when none). */
  readonly query: string;
  readonly headers: IncomingHttpHeaders;
  /** Parsed JSON body, or undefined when there was none or it was not JSON. */
  readonly body: ChatRequestBody | undefined;
  /** Set when the client went away before the reply was complete (timeout, abort). */
  disconnected: boolean;
}

export interface ChatUsage {
  readonly prompt_tokens: number;
  readonly completion_tokens: number;
  /** What the endpoint's prompt cache served (OpenAI's `prompt_tokens_details.cached_tokens`). */
  readonly prompt_tokens_details?: { readonly cached_tokens: number };
}

interface ReplyBase {
  /** Wait this long before answering; a client that disconnects meanwhile gets nothing. */
  readonly delayMs?: number;
  /** Extra response headers, e.g. `{ 'retry-after-ms': '1' }` to keep retries fast. */
  readonly headers?: Record<string, string>;
}

/** A successful completion. Streamed automatically when the request asked for `stream: true`. */
export interface ContentReply extends ReplyBase {
  readonly content: string;
  /** Default: rough counts from the text (4 characters a token), or the server's `meter`; `null` sends no usage at all. */
  readonly usage?: ChatUsage | null;
  readonly finishReason?: string;
  /** How a streamed reply is cut into deltas (default: word by word). Must join to `content`. */
  readonly chunks?: readonly string[];
  /** Pause between streamed chunks. */
  readonly chunkDelayMs?: number;
  /** Stream only the content chunks, then hang up: no finish_reason, no usage, no [DONE]. */
  readonly truncate?: boolean;
}

/** An API error in OpenAI's shape: `{ error: { message, type, code } }`. */
export interface ErrorReply extends ReplyBase {
  readonly status: number;
  readonly error: { readonly message: string; readonly type?: string; readonly code?: string | null };
}

/** Any bytes at all. */
export interface RawReply extends ReplyBase {
  readonly raw: string;
  readonly status?: number;
  readonly contentType?: string;
  /** Send the headers and this many bytes of `raw`, then nothing more (until the client hangs up). */
  readonly stallAfter?: number;
}

export type ChatReply = ContentReply | ErrorReply | RawReply | (ReplyBase & { readonly delayMs: number });

/** Answers the `n`th chat request (1-based, counting chat requests only). */
export type ChatHandler = (body: ChatRequestBody, n: number, request: RecordedRequest) => ChatReply | Promise<ChatReply>;

export interface ChatServer {
  /** Base URL for the SDK, ending in `/v1`. */
  readonly url: string;
  /** Every request received, in order. */
  readonly requests: RecordedRequest[];
  /** Only the chat-completions requests (the mediator's classifications are kept apart, below). */
  readonly chatRequests: () => RecordedRequest[];
  /** The mediator_advice classification requests, answered by the `classify` handler. */
  readonly classifyRequests: RecordedRequest[];
  close(): Promise<void>;
}

const CHAT_PATHS = new Set(['/v1/chat/completions', '/chat/completions']);

/** True for the mediator_advice classification the orchestrator asks a real route before the council. */
export function isClassifyRequest(body: ChatRequestBody): boolean {
  const first = body.messages?.[0]?.content;
  return typeof first === 'string' && first.startsWith('You read tasks for a safety gate');
}

/** A mediator's reading of a task as JSON: nothing found, unless `over` says otherwise. */
export function readingReply(over: Record<string, unknown> = {}): string {
  return JSON.stringify({ ...aMediatorReading(), ...over });
}

/** The default classification: nothing to flag (a model that finds every task harmless). */
export const HARMLESS: ChatHandler = () => ({ content: readingReply() });

/**
 * A chat-completions server on 127.0.0.1. Classification requests (`isClassifyRequest`) go to
 * `options.classify` (default: HARMLESS) and are recorded in `classifyRequests`, not in `requests`,
 * so the council's calls are numbered and counted as before.
 */
export async function startChatServer(
  handler: ChatHandler = councilHandler(),
  options: {
    classify?: ChatHandler;
    tls?: { key: string; cert: string };
    /** Listen on this port (an endpoint brought back where it was); default: any free port. */
    port?: number;
    /** Answer `GET /models` with these model ids (default: 404, like servers that do not offer it). */
    models?: readonly string[];
    /**
     * Count every prompt with the tokenizer and report the cached tokens a provider's prefix cache
     * would (tests/helpers/prompt-meter.mjs), where a reply gives no usage of its own.
     */
    meter?: PromptMeter;
  } = {},
): Promise<ChatServer> {
  const requests: RecordedRequest[] = [];
  const classifyRequests: RecordedRequest[] = [];
  let chatCount = 0;
  let classifyCount = 0;
  const listener = (req: IncomingMessage, res: ServerResponse): void => {
    void serve(req, res).catch(() => res.destroy());
  };
  // With `tls`, the same endpoint over HTTPS (its url starts with https://).
  const server = options.tls ? createTlsServer(options.tls, listener) : createServer(listener);

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const gone = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) gone.abort();
    });
    const text = await readBody(req);
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const parsed = parseJson(text);
    const classify = CHAT_PATHS.has(path) && parsed !== undefined && isClassifyRequest(parsed);
    const query = (req.url ?? '').split('?')[1] ?? '';
    const record: RecordedRequest = {
      n: (classify ? classifyRequests : requests).length + 1,
      method: req.method ?? '',
      path,
      query,
      headers: req.headers,
      body: parsed,
      disconnected: false,
    };
    (classify ? classifyRequests : requests).push(record);
    gone.signal.addEventListener('abort', () => (record.disconnected = true));

    if (req.method === 'GET' && options.models && (path === '/v1/models' || path === '/models')) {
      return sendJson(res, 200, { object: 'list', data: options.models.map((id) => ({ id, object: 'model', owned_by: 'test' })) });
    }
    if (req.method !== 'POST' || !CHAT_PATHS.has(path)) {
      return sendJson(res, 404, {
        error: { message: `no route for ${req.method} ${path}`, type: 'invalid_request_error', code: 'not_found' },
      });
    }
    const body = record.body ?? {};
    const reply = classify ? await (options.classify ?? HARMLESS)(body, ++classifyCount, record) : await handler(body, ++chatCount, record);
    if (reply.delayMs && !(await pause(reply.delayMs, gone.signal))) return;
    const headers = reply.headers ?? {};
    if ('raw' in reply) {
      res.writeHead(reply.status ?? 200, { 'content-type': reply.contentType ?? 'application/json', ...headers });
      if (reply.stallAfter === undefined) res.end(reply.raw);
      else {
        res.write(reply.raw.slice(0, reply.stallAfter));
        await pause(60_000, gone.signal);
      }
    } else if ('error' in reply) {
      sendJson(res, reply.status, { error: { type: null, code: null, param: null, ...reply.error } }, headers);
    } else {
      const content: ContentReply = 'content' in reply ? reply : { content: '(delayed reply)' };
      const usage = usageFor(body, content, options.meter);
      if (body.stream === true) await sendStream(res, body, content, usage, gone.signal);
      else sendJson(res, 200, completion(body, content, usage), headers);
    }
  }

  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `${options.tls ? 'https' : 'http'}://127.0.0.1:${port}/v1`,
    requests,
    chatRequests: () => requests.filter((r) => CHAT_PATHS.has(r.path)),
    classifyRequests,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // The SDK keeps connections alive; without this, close() waits for them to idle out.
        server.closeAllConnections();
      }),
  };
}

function completion(body: ChatRequestBody, reply: ContentReply, usage: ChatUsage | undefined): Record<string, unknown> {
  return {
    id: 'chatcmpl-test',
    object: 'chat.completion',
    created: 1_700_000_000,
    model: body.model ?? 'test-model',
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: reply.content, refusal: null },
        finish_reason: reply.finishReason ?? 'stop',
        logprobs: null,
      },
    ],
    ...(usage ? { usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens } } : {}),
  };
}

async function sendStream(
  res: ServerResponse,
  body: ChatRequestBody,
  reply: ContentReply,
  usage: ChatUsage | undefined,
  gone: AbortSignal,
): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...(reply.headers ?? {}) });
  const base = { id: 'chatcmpl-test', object: 'chat.completion.chunk', created: 1_700_000_000, model: body.model ?? 'test-model' };
  const send = (payload: unknown): void => void res.write(`data: ${JSON.stringify(payload)}\n\n`);
  const chunks = reply.chunks ?? reply.content.match(/\S+\s*|\s+/g) ?? [];
  send({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] });
  for (const piece of chunks) {
    if (reply.chunkDelayMs && !(await pause(reply.chunkDelayMs, gone))) return;
    send({ ...base, choices: [{ index: 0, delta: { content: piece }, finish_reason: null }] });
  }
  if (reply.truncate) {
    res.end();
    return;
  }
  send({ ...base, choices: [{ index: 0, delta: {}, finish_reason: reply.finishReason ?? 'stop' }] });
  if (body.stream_options?.include_usage && usage) {
    send({ ...base, choices: [], usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens } });
  }
  res.end('data: [DONE]\n\n');
}

function usageFor(body: ChatRequestBody, reply: ContentReply, meter: PromptMeter | undefined): ChatUsage | undefined {
  if (reply.usage === null) return undefined;
  if (reply.usage) return reply.usage;
  if (meter) {
    const { prompt_tokens, cached_tokens } = meter.measure(body.messages ?? []);
    return { prompt_tokens, completion_tokens: Math.ceil(reply.content.length / 4), prompt_tokens_details: { cached_tokens } };
  }
  const promptChars = (body.messages ?? []).reduce((n, m) => n + String(m.content).length, 0);
  return { prompt_tokens: Math.ceil(promptChars / 4), completion_tokens: Math.ceil(reply.content.length / 4) };
}

function sendJson(res: ServerResponse, status: number, payload: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(payload));
}

/** Waits; false when the client disconnected meanwhile. */
async function pause(ms: number, gone: AbortSignal): Promise<boolean> {
  try {
    await sleep(ms, undefined, { signal: gone });
    return true;
  } catch {
    return false;
  }
}

async function readBody(req: IncomingMessage): Promise<string> {
  const parts: Buffer[] = [];
  for await (const part of req) parts.push(part as Buffer);
  return Buffer.concat(parts).toString('utf8');
}

function parseJson(text: string): ChatRequestBody | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return value && typeof value === 'object' ? (value as ChatRequestBody) : undefined;
  } catch {
    return undefined;
  }
}

export interface CouncilHandlerOptions {
  /** The verdict JSON (default: proceed, 0.8); a function may vary it per persona or call. */
  readonly verdict?: object | ((persona: string, n: number) => object | string);
  /** A turn reply (default: `<Name> speaks (call n).`). */
  readonly turn?: (persona: string, n: number) => string;
  /** The synthesizer's proposal. */
  readonly synthesis?: string;
  /** Usage reported on every reply (default: rough counts; null for none). */
  readonly usage?: ChatUsage | null;
}

/** The persona's name from the orchestrator's system prompt ("You are <Name>, one member…"). */
export function personaName(body: ChatRequestBody): string {
  const system = body.messages?.find((m) => m.role === 'system')?.content ?? '';
  return /You are (.+?),/.exec(system)?.[1] ?? 'Unknown';
}

/** Whether the request asks for a verdict: JSON mode, or a last user message asking for ONE JSON object. */
export function isVerdictRequest(body: ChatRequestBody): boolean {
  if (body.response_format?.type === 'json_object' || body.response_format?.type === 'json_schema') return true;
  const lastUser = [...(body.messages ?? [])].reverse().find((m) => m.role === 'user');
  return lastUser?.content.includes('ONE JSON object') ?? false;
}

/** Answers like a well-behaved council: short turns naming the persona, proceed verdicts, a short proposal. */
export function councilHandler(options: CouncilHandlerOptions = {}): ChatHandler {
  return (body, n) => {
    const name = personaName(body);
    const usage = options.usage === undefined ? {} : { usage: options.usage };
    if (isVerdictRequest(body)) {
      const verdict =
        typeof options.verdict === 'function'
          ? options.verdict(name, n)
          : (options.verdict ?? { action: 'proceed', confidence: 0.8, rationale: 'the direction is sound' });
      return { content: typeof verdict === 'string' ? verdict : JSON.stringify(verdict), ...usage };
    }
    const lastUser = [...(body.messages ?? [])].reverse().find((m) => m.role === 'user')?.content ?? '';
    if (lastUser.includes('As the synthesizer')) {
      return {
        content: options.synthesis ?? '### Recommendation\n\nProceed with the first step.\n\n### Next steps\n\n1. Do it.',
        ...usage,
      };
    }
    return { content: options.turn ? options.turn(name, n) : `${name} speaks (call ${n}).`, ...usage };
  };
}

/** Answers the first requests from `script` (one reply each, in order), the rest with `then`. */
export function scripted(script: readonly ChatReply[], then: ChatHandler = councilHandler()): ChatHandler {
  return (body, n, request) => script[n - 1] ?? then(body, n, request);
}

/** Answers 400 to any request whose `response_format` type is listed, like servers that do not support it. */
export function rejectingResponseFormat(types: readonly string[], then: ChatHandler = councilHandler()): ChatHandler {
  return (body, n, request) =>
    body.response_format && types.includes(body.response_format.type)
      ? {
          status: 400,
          error: {
            message: `response_format.type ${body.response_format.type} is not supported`,
            type: 'invalid_request_error',
            code: 'invalid_request_error',
          },
        }
      : then(body, n, request);
}

/** One-off faults a real endpoint sometimes sends, each a 200 that is not a usable completion. */
export const FAULTS = {
  /** A JSON body cut off half-way. */
  malformedBody: (): RawReply => ({ raw: '{"id":"chatcmpl-x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assis' }),
  /** A well-formed completion with no choices. */
  emptyChoices: (): RawReply => ({
    raw: JSON.stringify({ id: 'chatcmpl-x', object: 'chat.completion', created: 1_700_000_000, model: 'test-model', choices: [] }),
  }),
  /** A streamed reply that stops before finish_reason (non-streamed requests get a cut body). */
  cutStream: (): ContentReply => ({ content: 'I think we should', truncate: true }),
} as const;

/**
 * Wraps a handler so that the listed chat requests (1-based) get a fault instead. A cut stream
 * answers a non-streamed request with a malformed body, since it cannot hang up mid-event there.
 */
export function withFaults(faults: Readonly<Record<number, keyof typeof FAULTS>>, then: ChatHandler = councilHandler()): ChatHandler {
  return (body, n, request) => {
    const fault = faults[n];
    if (!fault) return then(body, n, request);
    if (fault === 'cutStream' && body.stream !== true) return FAULTS.malformedBody();
    return FAULTS[fault]();
  };
}
