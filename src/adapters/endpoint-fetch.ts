import type http from 'node:http';
import { createRequire } from 'node:module';
import { pipeline, Readable, Transform } from 'node:stream';

// Loaded when the first endpoint client is made, not at start-up: a run on the offline model needs
// none of them (they are a few MiB of a `maestro run`'s memory).
const load = createRequire(import.meta.url);
let httpModule: typeof import('node:http') | undefined;
let httpsModule: typeof import('node:https') | undefined;
const plain = (): typeof import('node:http') => (httpModule ??= load('node:http') as typeof import('node:http'));
const secure = (): typeof import('node:https') => (httpsModule ??= load('node:https') as typeof import('node:https'));

/**
 * The HTTP layer under the openai SDK (its `fetch` option). The SDK's own behaviour falls short in
 * two places, and both are fixed here, below the SDK, so its retry loop and parsing stay untouched:
 *
 * - It retries every 429, including `insufficient_quota`, which no retry can fix. A 429 whose body
 *   says `insufficient_quota` gets `x-should-retry: false`, a header the SDK obeys before its
 *   status rules.
 * - Its `timeout` covers only the wait for response headers; a body that stalls (a stream that
 *   stops mid-reply) would hang forever. Every body read here gets the same limit between chunks.
 *
 * It also counts attempts per logical call, so error messages can say how many retries were made.
 */

/** What one logical call (one `complete`) saw at the HTTP layer. */
export interface CallTrace {
  /** HTTP attempts made so far: 1 + the SDK's retries. */
  attempts: number;
  /** The call asked for a stream: a 2xx reply is handed on as it comes, whatever its content-type says. */
  readonly streamed?: boolean;
}

const TRACE = Symbol('maestro.callTrace');

/**
 * The SDK's per-request `fetchOptions` that make every fetch of one logical call count into `trace`.
 * (The SDK copies them into each attempt's `init`, retries included. An AsyncLocalStorage would do
 * the same, but in Node 20 it installs a hook on every promise of the process: a cost per step.)
 */
export function traceOptions(trace: CallTrace): Record<symbol, CallTrace> {
  return { [TRACE]: trace };
}

/** No byte of a response body arrived within the limit, or (`whole`) the body was not all in before the SDK's own limit for the request. */
export class BodyTimeoutError extends Error {
  constructor(
    readonly timeoutMs: number,
    readonly whole = false,
  ) {
    super(whole ? `the response was not all in within ${timeoutMs} ms` : `no data from the endpoint for ${timeoutMs} ms while reading the response`);
    this.name = 'BodyTimeoutError';
  }
}

type Fetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

export interface EndpointFetchOptions {
  /** Longest wait for the next chunk of a response body, in milliseconds. */
  readonly bodyTimeoutMs: number;
}

/** How long an idle kept-alive connection is kept (shorter when the server announces a shorter one). */
const IDLE_CONNECTION_MS = 4_000;
/** Same-origin 307/308 redirects followed per request (method and body kept). */
export const MAX_REDIRECTS = 5;

/**
 * A fetch for the SDK's `fetch` option, on `node:http` / `node:https` with kept-alive connections.
 * The platform fetch costs a few tenths of a millisecond per call in streams and wrappers that a
 * chat completion, a small body read whole, does not need: per call, that was as much as all of
 * maestro's own work between two model calls.
 *
 * What it does as the platform fetch does: any body the SDK sends, `AbortSignal`s (an aborted
 * request rejects with an `AbortError`, which the SDK counts as a timeout), a failed connection as
 * `TypeError('fetch failed')` with the system error as its cause, compressed replies decoded.
 * Where it differs, on purpose: a redirect is followed only when it keeps the method, the body and
 * the origin (307/308 to the same host); any other is handed to the SDK as the error it is, rather
 * than replayed as a GET or with the key to another host. A connection that fails is never tried
 * again here: the SDK retries within the route's `max_retries`, as it did over the platform fetch (a
 * request the endpoint may have received is not sent twice behind the user's back). Idle kept-alive
 * connections are closed after 4 s, or sooner when the server announces a shorter keep-alive.
 */
export function createEndpointFetch(options: EndpointFetchOptions): Fetch {
  const agents = new Map<string, http.Agent>();
  const agentFor = (protocol: string): http.Agent => {
    let agent = agents.get(protocol);
    if (!agent) {
      agent = protocol === 'https:' ? new (secure().Agent)({ keepAlive: true, timeout: IDLE_CONNECTION_MS }) : new (plain().Agent)({ keepAlive: true, timeout: IDLE_CONNECTION_MS });
      agents.set(protocol, agent);
    }
    return agent;
  };
  return async (input, init) => {
    const trace = (init as { [TRACE]?: CallTrace } | undefined)?.[TRACE];
    if (trace) trace.attempts += 1;
    const outgoing = await outgoingRequest(input, init);
    let url = outgoing.url;
    for (let redirects = 0; ; redirects++) {
      if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TypeError('fetch failed', { cause: new Error(`unsupported protocol ${url.protocol}`) });
      const exchange = await exchangeOnce(url, outgoing, agentFor(url.protocol), options.bodyTimeoutMs, trace?.streamed === true);
      const location = exchange.status === 307 || exchange.status === 308 ? exchange.headers.get('location') : null;
      const next = location === null ? undefined : safeUrl(location, url);
      if (next && next.origin === url.origin && redirects < MAX_REDIRECTS) {
        url = next;
        continue;
      }
      return exchange.response();
    }
  };
}

interface Outgoing {
  readonly url: URL;
  readonly method: string;
  readonly headers: Record<string, string>;
  readonly body: string | Buffer | undefined;
  readonly signal: AbortSignal | undefined;
}

/** The request as bytes and plain headers; a body that is not already text or bytes (a form, a blob, a stream) is serialized by the platform. */
async function outgoingRequest(input: string | URL | Request, init: RequestInit | undefined): Promise<Outgoing> {
  const request = input instanceof Request ? input : undefined;
  const headers: Record<string, string> = {};
  const source = init?.headers ?? request?.headers;
  (source instanceof Headers ? source : new Headers(source)).forEach((value, name) => (headers[name] = value));
  const method = (init?.method ?? request?.method ?? 'GET').toUpperCase();
  let body: string | Buffer | undefined;
  const raw = init?.body ?? (request?.body ? await request.arrayBuffer() : undefined);
  if (raw === undefined || raw === null) body = undefined;
  else if (typeof raw === 'string') body = raw;
  else if (raw instanceof ArrayBuffer) body = Buffer.from(raw);
  else if (ArrayBuffer.isView(raw)) body = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
  else {
    const serialized = new Request('http://localhost/', { method: 'POST', body: raw, duplex: 'half' } as RequestInit);
    const type = serialized.headers.get('content-type');
    if (type && headers['content-type'] === undefined) headers['content-type'] = type;
    body = Buffer.from(await serialized.arrayBuffer());
  }
  delete headers['content-length'];
  if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
  const signal = init?.signal ?? request?.signal ?? undefined;
  return { url: new URL(request ? request.url : String(input)), method, headers, body, signal };
}

interface Exchange {
  readonly status: number;
  readonly headers: Headers;
  /** The response for the SDK (made only for the exchange that is not followed). */
  response(): Response;
}

/** One request and its response, read whole (or, for a stream, handed on as it comes). */
function exchangeOnce(url: URL, outgoing: Outgoing, agent: http.Agent, bodyTimeoutMs: number, streamed: boolean): Promise<Exchange> {
  return new Promise<Exchange>((resolve, reject) => {
    const send = url.protocol === 'https:' ? secure().request : plain().request;
    const req = send(url, { method: outgoing.method, headers: outgoing.headers, agent, ...(outgoing.signal ? { signal: outgoing.signal } : {}) });
    let answered = false;
    req.on('error', (error: NodeJS.ErrnoException) => {
      if (answered) return;
      reject(isAbort(error) ? error : new TypeError('fetch failed', { cause: error }));
    });
    req.on('response', (res) => {
      answered = true;
      let headers: Headers;
      try {
        headers = responseHeaders(res.rawHeaders);
      } catch (error) {
        res.destroy();
        reject(new TypeError('fetch failed', { cause: error }));
        return;
      }
      const status = res.statusCode ?? 0;
      const init = { status, statusText: res.statusMessage ?? '', headers };
      if (status < 200 || status > 599) {
        res.destroy();
        reject(new TypeError('fetch failed', { cause: new Error(`the endpoint answered with HTTP status ${status}`) }));
        return;
      }
      const decoded = decode(res, headers.get('content-encoding'));
      // A stream is a stream when it was asked for (not every server labels its events) or says it is one.
      if (status < 300 && !NULL_BODY.has(status) && (streamed || (headers.get('content-type') ?? '').includes('text/event-stream'))) {
        resolve({ status, headers, response: () => new Response(withBodyTimeout(Readable.toWeb(decoded) as ReadableStream<Uint8Array>, bodyTimeoutMs), init) });
        return;
      }
      void readWhole(decoded, req, outgoing.signal, bodyTimeoutMs).then((read) => {
        if (status === 429 && 'bytes' in read && isQuotaExhaustedBody(utf8(read.bytes))) headers.set('x-should-retry', 'false');
        resolve({ status, headers, response: () => wholeResponse(read, init) });
      });
    });
    req.end(outgoing.body);
  });
}

const NULL_BODY = new Set([101, 204, 205, 304]);

type WholeRead = { bytes: Buffer } | { error: unknown };

let WholeResponse: (new (read: WholeRead, init: ResponseInit) => Response) | undefined;

/** A response read whole (see `defineWholeResponse`). */
function wholeResponse(read: WholeRead, init: ResponseInit): Response {
  // Defined on first use: touching the global Response loads the platform's fetch (~7 MiB), which a
  // run on the offline model never needs.
  WholeResponse ??= defineWholeResponse();
  return new WholeResponse(read, init);
}

/**
 * A response whose body is already in memory (or whose read failed: the SDK meets that failure
 * where it reads the body, as with a stream that stopped). Reading it is a conversion, not a stream.
 */
function defineWholeResponse(): new (read: WholeRead, init: ResponseInit) => Response {
  return class WholeResponse extends Response {
    readonly #read: WholeRead;
    constructor(read: WholeRead, init: ResponseInit) {
      super(null, init);
      this.#read = read;
      // Whoever reads it as a stream (the SDK reads any reply to a streamed request so) gets one.
      let stream: ReadableStream<Uint8Array> | undefined;
      Object.defineProperty(this, 'body', { get: () => (stream ??= streamOf(read)) });
    }
    #bytes = (): Buffer => {
      if ('error' in this.#read) throw this.#read.error;
      return this.#read.bytes;
    };
    override text = async (): Promise<string> => utf8(this.#bytes());
    override json = async (): Promise<unknown> => JSON.parse(utf8(this.#bytes()));
    override arrayBuffer = async (): Promise<ArrayBuffer> => {
      const bytes = this.#bytes();
      return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
    };
    override blob = async (): Promise<Blob> => new Blob([this.#bytes()], { type: this.headers.get('content-type') ?? '' });
    override clone = (): Response => new WholeResponse(this.#read, { status: this.status, statusText: this.statusText, headers: this.headers });
  };
}

function streamOf(read: WholeRead): ReadableStream<Uint8Array> {
  // A failed read fails whoever reads it, not whoever cancels it unread (the SDK cancels the body of a reply it will retry).
  if ('error' in read) return new ReadableStream<Uint8Array>({ pull: (controller) => controller.error(read.error) }, { highWaterMark: 0 });
  return new ReadableStream<Uint8Array>({
    start(controller) {
      if (read.bytes.length > 0) controller.enqueue(new Uint8Array(read.bytes));
      controller.close();
    },
  });
}

/** Text as the platform's `Response.text()` decodes it: UTF-8, a leading byte order mark dropped. */
function utf8(bytes: Buffer): string {
  const text = bytes.toString('utf8');
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/**
 * Reads a whole body, waiting at most `timeoutMs` for each chunk; a stall or an error is returned,
 * not thrown. A read the SDK aborted is its own time limit for the request running out while the
 * body stalled (a caller's cancel is told apart above the SDK, by the caller's signal): a timeout,
 * not a broken connection.
 */
function readWhole(body: Readable, req: http.ClientRequest, signal: AbortSignal | undefined, timeoutMs: number): Promise<{ bytes: Buffer } | { error: unknown }> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let done = false;
    const finish = (result: { bytes: Buffer } | { error: unknown }): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve(result);
    };
    // One timer for the whole body, pushed back at every chunk: a stall hangs up.
    const timer = setTimeout(() => {
      // The SDK's limit for the whole request may have run out in the same instant: that one is said.
      finish({ error: new BodyTimeoutError(timeoutMs, signal?.aborted === true) });
      req.destroy();
    }, timeoutMs);
    body.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      timer.refresh();
    });
    body.on('end', () => finish({ bytes: chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks) }));
    const failed = (error: unknown): void => finish({ error: signal?.aborted === true ? new BodyTimeoutError(timeoutMs, true) : terminated(error) });
    body.on('error', failed);
    body.on('close', () => failed(new TypeError('terminated', { cause: new Error('the connection closed before the response was complete') })));
  });
}

function responseHeaders(raw: readonly string[]): Headers {
  const headers = new Headers();
  for (let i = 0; i + 1 < raw.length; i += 2) headers.append(raw[i] as string, raw[i + 1] as string);
  return headers;
}

/**
 * The body with its content codings undone, last applied first (the request asks for none, but a
 * server may compress anyway); an unknown coding leaves the body as it is, as the platform fetch does.
 */
function decode(res: http.IncomingMessage, encoding: string | null): Readable {
  const codings = (encoding ?? '').split(',').map((c) => c.trim().toLowerCase()).filter((c) => c !== '' && c !== 'identity');
  if (codings.length === 0 || !codings.every((c) => DECODERS.has(c))) return res;
  const zlib = load('node:zlib') as typeof import('node:zlib');
  const decoders = codings.reverse().map((c) => (c === 'br' ? zlib.createBrotliDecompress() : c === 'deflate' ? inflateEither(zlib) : zlib.createGunzip()));
  return pipeline([res, ...decoders], () => undefined) as unknown as Readable;
}

const DECODERS = new Set(['gzip', 'x-gzip', 'deflate', 'br']);

/** `deflate` as servers send it: with the zlib wrapper (as the standard says) or without (as some do). */
function inflateEither(zlib: typeof import('node:zlib')): Transform {
  let inner: Transform | undefined;
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      if (!inner) {
        // A zlib stream starts with a header whose low nibble is 8 (deflate); raw deflate does not.
        inner = ((chunk[0] ?? 0) & 0x0f) === 0x08 ? zlib.createInflate() : zlib.createInflateRaw();
        inner.on('data', (data: Buffer) => this.push(data));
        inner.on('error', (error) => this.destroy(error));
      }
      inner.write(chunk, () => callback());
    },
    flush(callback) {
      if (!inner) return callback();
      inner.once('end', () => callback());
      inner.end();
    },
    destroy(error, callback) {
      inner?.destroy();
      callback(error);
    },
  });
}

/**
 * A body that broke off (a dropped connection, a corrupt compressed body), as the platform fetch
 * reports it: a `TypeError` ("terminated") with the cause, which the client retries as a one-off.
 */
function terminated(error: unknown): TypeError {
  return error instanceof TypeError ? error : new TypeError('terminated', { cause: error });
}

function isAbort(error: Error): boolean {
  return error.name === 'AbortError';
}

function safeUrl(location: string, base: URL): URL | undefined {
  try {
    return new URL(location, base);
  } catch {
    return undefined;
  }
}

/** Whether an error body (OpenAI's `{ error: { code, type } }` shape) says the quota is gone. */
export function isQuotaExhaustedBody(text: string): boolean {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return false;
  }
  const error = (parsed as { error?: { code?: unknown; type?: unknown } } | null)?.error;
  return error?.code === 'insufficient_quota' || error?.type === 'insufficient_quota';
}

function withBodyTimeout(body: ReadableStream<Uint8Array>, timeoutMs: number): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let timer: NodeJS.Timeout | undefined;
      const stalled = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new BodyTimeoutError(timeoutMs)), timeoutMs);
      });
      try {
        const chunk = await Promise.race([reader.read(), stalled]);
        if (chunk.done) controller.close();
        else controller.enqueue(chunk.value);
      } catch (error) {
        reader.cancel(error).catch(() => undefined);
        throw error instanceof BodyTimeoutError || (error instanceof Error && isAbort(error)) ? error : terminated(error);
      } finally {
        clearTimeout(timer);
      }
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}
