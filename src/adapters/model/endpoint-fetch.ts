import type { RequestInit as UndiciRequestInit } from 'undici';

/** The undici module (its type only: importing it is `loadUndici`'s job). */
export type Undici = typeof import('undici');
let undici: Undici | undefined;

/** undici, loaded with the first endpoint client rather than at start-up: a run on the offline model never needs it. */
export async function loadUndici(): Promise<Undici> {
  undici ??= await import('undici');
  return undici;
}

/** The `fetch` the openai SDK calls (its `fetch` option). */
export type EndpointFetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

export interface EndpointFetchOptions {
  /** The route's time limit, in milliseconds: to connect, to receive the headers, and between two chunks of a body. */
  readonly timeoutMs: number;
}

/** Same-origin 307/308 redirects followed per request (method, body and headers kept). */
export const MAX_REDIRECTS = 5;

/**
 * The HTTP layer under the openai SDK: undici's fetch over one undici `Agent` per route, so calls
 * reuse kept-alive connections (idle ones close after undici's 4 s, or sooner when the server says
 * so). TLS is Node's default, which trusts the CAs in `NODE_EXTRA_CA_CERTS` as well as the public
 * ones. A body that goes silent for the route's `timeout_ms` fails with undici's
 * `UND_ERR_BODY_TIMEOUT` (the SDK's own `timeout` ends when the headers arrive). Compressed
 * replies are decoded by undici.
 *
 * A redirect is followed only when it keeps the method, the body and the origin (307/308 to the
 * same host): any other reaches the SDK as the 3xx it is, rather than replayed as a GET or sent with
 * the key to another host. Nothing here retries: the retry policy sits above the SDK.
 */
export function createEndpointFetch(lib: Undici, options: EndpointFetchOptions): EndpointFetch {
  const limit = options.timeoutMs;
  const dispatcher = new lib.Agent({ connect: { timeout: limit }, headersTimeout: limit, bodyTimeout: limit });
  return async (input, init) => {
    let url = typeof input === 'string' || input instanceof URL ? String(input) : input.url;
    for (let redirects = 0; ; redirects++) {
      // The SDK's init is the platform's RequestInit (undici 6 types); undici 7 takes the same fields.
      const response = await lib.fetch(url, { ...(init as UndiciRequestInit), redirect: 'manual', dispatcher });
      const next = redirects < MAX_REDIRECTS ? sameOriginRedirect(response.status, response.headers.get('location'), url) : undefined;
      if (!next) return response as unknown as Response;
      await response.body?.cancel();
      url = next;
    }
  };
}

/** Where a 307/308 on the same origin points; undefined for any other reply. */
function sameOriginRedirect(status: number, location: string | null, from: string): string | undefined {
  if ((status !== 307 && status !== 308) || location === null) return undefined;
  try {
    const next = new URL(location, from);
    return next.origin === new URL(from).origin ? next.href : undefined;
  } catch {
    return undefined;
  }
}
