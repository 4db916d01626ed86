import { LlmError, type LlmErrorKind } from '../../domain/errors.js';
import { isRetryableKind, type RetryDecision } from '../../domain/retry-policy.js';
import type { ResolvedRoute } from '../../domain/route.js';
import { detectSensitive } from '../../domain/sensitive/detector.js';
import { isOutageFailure } from '../../domain/route-breaker.js';
import { MAX_REDIRECTS } from './endpoint-fetch.js';

/**
 * What the openai SDK or the HTTP layer under it threw, as an LlmError whose `kind` the retry
 * policy and REROUTE act on. Messages are built from statuses and short codes only: the SDK's own
 * messages quote the response body, and some servers echo the request in theirs.
 */

/** The SDK's module, for telling its error classes apart. */
export type OpenAiSdk = typeof import('openai');

/** An LlmError for this route; `retryable` follows the retry policy's table for the kind. */
export function llmError(route: ResolvedRoute, kind: LlmErrorKind, what: string, status?: number, cause?: unknown): LlmError {
  const options = { kind, route: route.id, ...(cause === undefined ? {} : { cause }) };
  // An outage names everything needed to find the endpoint that is down: the model, and where it was called.
  const where = isOutageFailure(kind) ? ` (model "${route.model}" at ${endpointOrigin(route)})` : '';
  return new LlmError(`route "${route.id}"${where}: ${what}`, isRetryableKind(kind), status, options);
}

/** Scheme, host and port of the route's endpoint: never a path, a query string or credentials. */
export function endpointOrigin(route: Pick<ResolvedRoute, 'base_url'>): string {
  try {
    const url = new URL(route.base_url ?? 'https://api.openai.com/v1');
    const port = url.port || (url.protocol === 'https:' ? '443' : url.protocol === 'http:' ? '80' : '');
    return `${url.protocol}//${url.hostname}${port ? `:${port}` : ''}`;
  } catch {
    return 'an endpoint whose address does not read';
  }
}

/** Translates one failed attempt (what the SDK threw, its own retries off) into an LlmError. */
export function toLlmError(error: unknown, route: ResolvedRoute, sdk: OpenAiSdk): LlmError {
  if (error instanceof LlmError) return error;
  const make = (kind: LlmErrorKind, what: string, status?: number): LlmError => llmError(route, kind, what, status, safeCause(error, sdk));
  if (!(error instanceof sdk.APIError) && codeInChain(error) === 'UND_ERR_BODY_TIMEOUT') {
    return make('timeout', `no data from the endpoint for ${route.timeout_ms} ms while reading the reply`);
  }
  if (error instanceof sdk.APIConnectionTimeoutError) return make('timeout', `no response within ${route.timeout_ms} ms`);
  if (error instanceof sdk.APIUserAbortError) return make('network', 'the request was cancelled');
  if (error instanceof sdk.APIConnectionError) {
    // TLS spoken to a plain-HTTP port, or a certificate this process does not trust: the route's set-up, not
    // an outage (nothing comes back by waiting): not retried, never held by the route's breaker, said once.
    const misconfigured = CONFIGURATION_CODES.test(codeInChain(error.cause) ?? '');
    return make(misconfigured ? 'bad_request' : 'network', `could not connect${causeNote(error)}`);
  }
  if (error instanceof sdk.APIError) return statusError(error, route, make);
  if (error instanceof SyntaxError) return make('invalid_output', 'the endpoint sent a reply that is not valid JSON');
  // undici reports a connection dropped mid-body as a TypeError ("terminated").
  return make('network', 'the connection failed while reading the reply');
}

type Make = (kind: LlmErrorKind, what: string, status?: number) => LlmError;

/** An HTTP status the endpoint answered with (or an error event inside a stream, which has none). */
function statusError(error: InstanceType<OpenAiSdk['APIError']>, route: ResolvedRoute, make: Make): LlmError {
  const status = error.status;
  const code = shortCode(error.code) ?? shortCode(error.type);
  const http = status === undefined ? 'an error in the stream' : `HTTP ${status}${code ? ` ${code}` : ''}`;
  if (status === undefined) return make('server', `the endpoint reported ${http}`);
  if (status === 429 && (error.code === 'insufficient_quota' || error.type === 'insufficient_quota')) {
    return make('quota', `the account's quota is exhausted (${http}); not retried`, status);
  }
  if (status === 402) return make('quota', `the endpoint wants payment (${http}); not retried`, status);
  if (status === 429) return make('rate_limit', `rate limited (${http})`, status);
  if (status === 401 || status === 403) {
    return make('auth', `the endpoint refused the credentials (${http}); check ${route.api_key_env ?? 'OPENAI_API_KEY'}`, status);
  }
  if (status >= 300 && status < 400) return redirectError(status, http, error.headers, route, make);
  if (status === 408) return make('timeout', `the endpoint timed out (${http})`, status);
  if (status >= 500 || status === 409) return make('server', `${http} from the endpoint`, status);
  return make('bad_request', `the endpoint rejected the request (${http}) for model "${route.model}"`, status);
}

/** A redirect the HTTP layer did not follow (any but a same-origin 307/308, or one too many), naming where it points as an origin only. */
function redirectError(status: number, http: string, headers: Headers | undefined, route: ResolvedRoute, make: Make): LlmError {
  const location = redirectTarget(headers, route);
  if (!location) return make('bad_request', `the endpoint answered ${http} without saying where to; check the route's base_url`, status);
  if (location.sameOrigin && (status === 307 || status === 308)) {
    const what = `the endpoint keeps redirecting (${http}, more than ${MAX_REDIRECTS} times); check the route's base_url`;
    return make('bad_request', what, status);
  }
  const where = location.sameOrigin ? ' to another path on the same host' : location.origin ? ` to ${location.origin}` : '';
  return make('bad_request', `the endpoint redirects (${http}${where}); set the route's base_url to the address it should call`, status);
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

/** The failure of the last attempt, saying how the retry policy ended the call (retries made, a wait not waited). */
export function finalFailure(
  error: LlmError,
  retriesMade: number,
  decision: RetryDecision & { retry: false },
  serverWaitMs?: number,
): LlmError {
  const notes: string[] = [];
  if (decision.why === 'wait_too_long' && serverWaitMs !== undefined) {
    notes.push(`; it asked to wait ${Math.ceil(serverWaitMs / 1_000)} s, too long to wait within a call`);
  }
  if (retriesMade > 0 && decision.why !== 'not_retryable') notes.push(` after ${retriesMade} ${retriesMade === 1 ? 'retry' : 'retries'}`);
  if (notes.length === 0) return error;
  const route = error.route ? { route: error.route } : {};
  const cause = error.cause === undefined ? {} : { cause: error.cause };
  return new LlmError(`${error.message}${notes.join('')}`, error.retryable, error.status, { kind: error.kind, ...route, ...cause });
}

/**
 * The cause kept on an LlmError. SDK status errors quote the response body in their message (and
 * some servers echo the request in validation errors), as does a JSON SyntaxError, so those are
 * replaced by a summary; connection errors and undici's socket and timeout errors carry no body and are kept.
 */
function safeCause(error: unknown, sdk: OpenAiSdk): unknown {
  if (error instanceof sdk.APIConnectionError && !(error instanceof sdk.APIUserAbortError)) return error;
  if (error instanceof TypeError && codeInChain(error) !== undefined) return error;
  if (!(error instanceof Error)) return new Error('non-error thrown by the SDK');
  const parts = [error.name];
  if (error instanceof sdk.APIError) {
    if (error.status !== undefined) parts.push(`HTTP ${error.status}`);
    const code = shortCode(error.code) ?? shortCode(error.type);
    if (code) parts.push(code);
    if (error.requestID) parts.push(`request id ${shortCode(error.requestID) ?? '(unprintable)'}`);
  }
  const summary = new Error(`${parts.join(', ')} (details withheld: they may quote a request or response body)`);
  summary.name = 'SdkErrorSummary';
  return summary;
}

/** The first system, TLS or undici error code in the cause chain. */
function codeInChain(error: unknown): string | undefined {
  let cause: unknown = error;
  for (let depth = 0; depth < 5 && cause instanceof Error; depth++) {
    const code = (cause as { code?: unknown }).code;
    if (typeof code === 'string' && /^[A-Z][A-Z0-9_]+$/.test(code)) return code;
    cause = cause.cause;
  }
  return undefined;
}

/** Connection failures that are the route's configuration (TLS on a plain port, an untrusted certificate), not an outage. */
const CONFIGURATION_CODES =
  /^(ERR_SSL_WRONG_VERSION_NUMBER|EPROTO|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_GET_ISSUER_CERT(_LOCALLY)?|UNABLE_TO_VERIFY_LEAF_SIGNATURE)$/;

/** What a connection failure's code tells a person, first match wins; the code itself when nothing more is known. */
const CAUSE_NOTES: ReadonlyArray<readonly [RegExp, (code: string) => string]> = [
  [
    /^(ERR_SSL_WRONG_VERSION_NUMBER|EPROTO)$/,
    (code) => `${code}: no TLS there; if the endpoint speaks plain HTTP, its base_url starts with http://`,
  ],
  [
    /^(DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_GET_ISSUER_CERT(_LOCALLY)?|UNABLE_TO_VERIFY_LEAF_SIGNATURE)$/,
    (code) => `${code}: its certificate is not trusted here; a private CA's certificate goes in NODE_EXTRA_CA_CERTS`,
  ],
  [/^UND_ERR_SOCKET$/, () => 'the endpoint closed the connection before it answered'],
  [/^UND_ERR_CONNECT_TIMEOUT$/, () => "no connection within the route's timeout_ms"],
  [/^(E[A-Z_]+|ERR_TLS_[A-Z_]+|CERT_[A-Z_]+|UND_ERR_[A-Z_]+)$/, (code) => code],
];

/** A connection failure's code, explained where there is more to say (a certificate the process does not trust, TLS on a plain port). */
export function causeNote(error: Error): string {
  const code = codeInChain(error.cause);
  const note = code === undefined ? undefined : CAUSE_NOTES.find(([pattern]) => pattern.test(code));
  return note && code ? ` (${note[1](code)})` : '';
}

/** Error codes are identifiers like `insufficient_quota`; anything else is not repeated. */
function shortCode(value: unknown): string | undefined {
  // A body can put anything in `code`, a key included: what the detector calls sensitive is not repeated either.
  return typeof value === 'string' && /^[A-Za-z0-9_.-]{1,64}$/.test(value) && detectSensitive(value).length === 0 ? value : undefined;
}
