/**
 * The HTTP layer under the openai SDK. The SDK's own behaviour falls short in two places, and both
 * are fixed here, below the SDK, so its retry loop and parsing stay untouched:
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
  /** The fetch underneath (default: the global one). */
  readonly fetch?: Fetch;
}

/** A fetch for the SDK's `fetch` option. */
export function createEndpointFetch(options: EndpointFetchOptions): Fetch {
  const inner = options.fetch ?? globalThis.fetch;
  return async (input, init) => {
    const trace = (init as { [TRACE]?: CallTrace } | undefined)?.[TRACE];
    if (trace) trace.attempts += 1;
    const response = await inner(input, init);
    if (response.status === 429) return await markQuotaNotRetryable(response);
    if (!response.body) return response;
    const init2 = { status: response.status, statusText: response.statusText, headers: response.headers };
    // A stream is handed on chunk by chunk; a whole body (a completion, an error) is read here, with
    // the same limit between chunks, and handed on whole: the SDK reads it whole anyway, and a
    // wrapping stream costs more per reply than the reply itself.
    if ((response.headers.get('content-type') ?? '').includes('text/event-stream')) return new Response(withBodyTimeout(response.body, options.bodyTimeoutMs), init2);
    const read = await readBody(response.body, options.bodyTimeoutMs);
    if ('bytes' in read) return new Response(read.bytes, init2);
    // A failed read fails where the SDK reads the body, as a stalled stream does. A read the SDK
    // aborted is its own time limit running out while the body stalled (a caller's cancel is told
    // apart above the SDK, by the caller's signal): a timeout, not a broken connection.
    const stalled = init?.signal?.aborted === true && !(read.error instanceof BodyTimeoutError) ? new BodyTimeoutError(options.bodyTimeoutMs, true) : read.error;
    return new Response(failingBody(stalled), init2);
  };
}

/** Reads a whole body, waiting at most `timeoutMs` for each chunk; a stall or an error is returned, not thrown. */
async function readBody(body: ReadableStream<Uint8Array>, timeoutMs: number): Promise<{ bytes: Uint8Array } | { error: unknown }> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let length = 0;
  // One timer for the whole body, pushed back at every chunk: a stall cancels the read, which ends it.
  let stalled = false;
  const timer = setTimeout(() => {
    stalled = true;
    reader.cancel(new BodyTimeoutError(timeoutMs)).catch(() => undefined);
  }, timeoutMs);
  try {
    for (;;) {
      const chunk = await reader.read();
      if (stalled) return { error: new BodyTimeoutError(timeoutMs) };
      if (chunk.done) break;
      chunks.push(chunk.value);
      length += chunk.value.length;
      timer.refresh();
    }
  } catch (error) {
    reader.cancel(error).catch(() => undefined);
    return { error: stalled ? new BodyTimeoutError(timeoutMs) : error };
  } finally {
    clearTimeout(timer);
  }
  if (chunks.length === 1) return { bytes: chunks[0] as Uint8Array };
  const bytes = new Uint8Array(length);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.length;
  }
  return { bytes };
}

function failingBody(error: unknown): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    start(controller) {
      controller.error(error);
    },
  });
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

async function markQuotaNotRetryable(response: Response): Promise<Response> {
  // Error bodies are small; reading one here costs nothing the SDK would not read anyway.
  const text = await response.text();
  const headers = new Headers(response.headers);
  if (isQuotaExhaustedBody(text)) headers.set('x-should-retry', 'false');
  return new Response(text, { status: response.status, statusText: response.statusText, headers });
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
        throw error;
      } finally {
        clearTimeout(timer);
      }
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}
