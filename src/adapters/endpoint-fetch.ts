import { AsyncLocalStorage } from 'node:async_hooks';

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

const traces = new AsyncLocalStorage<CallTrace>();

/** Runs `fn` with `trace` collecting what every fetch made inside it (across `await`s) sees. */
export function traceCall<T>(trace: CallTrace, fn: () => Promise<T>): Promise<T> {
  return traces.run(trace, fn);
}

/** No byte of a response body arrived within the limit. */
export class BodyTimeoutError extends Error {
  constructor(readonly timeoutMs: number) {
    super(`no data from the endpoint for ${timeoutMs} ms while reading the response`);
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
    const trace = traces.getStore();
    if (trace) trace.attempts += 1;
    const response = await inner(input, init);
    if (response.status === 429) return await markQuotaNotRetryable(response);
    if (!response.body) return response;
    return new Response(withBodyTimeout(response.body, options.bodyTimeoutMs), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
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
