import type { LlmError, LlmErrorKind } from './errors.js';

/** What a person can try for each kind of model failure (the message already names route, host, status and attempts). */
const TRY: Record<LlmErrorKind, string> = {
  network: 'is the server running and reachable at that address? (start it, or fix base_url)',
  timeout: 'the endpoint is slow or stuck: try again, or raise timeout_ms on the route',
  server: 'the endpoint is failing: try again later, or give the personas a fallback_route',
  rate_limit: 'the endpoint is rate-limiting: wait and continue, raise max_retries, or give the personas a fallback_route',
  quota: "the account's quota or credit is exhausted: top it up, or route the personas elsewhere",
  auth: 'check the API key in the variable the route names (api_key_env), and that the key may use this model',
  bad_request: "check the route's model name and options (json_mode, max_output_tokens) against what the endpoint supports",
  invalid_output: 'the endpoint answered with something unusable: try again, or try json_mode "json_object" or "prompt" on the route',
  cassette: 'replay in a workspace in the state it was recorded in, or record again',
};

/** A call past the run's own per-call limit: the limit hit is the command's (or workspace's), not the route's. */
const CALL_LIMIT =
  "the call ran past the run's per-call limit: try again, or raise config.call_timeout_ms in the command (or deliberation.call_timeout_ms in maestro.config.json)";

/** The failure, then what to try: one message a person can act on. */
export function describeModelFailure(error: LlmError): string {
  return `${error.message} — ${error.limit === 'call_timeout_ms' ? CALL_LIMIT : TRY[error.kind]}`;
}

/** Audit fields for a model failure: the kind, the route, the HTTP status — never a key or a body. */
export function modelFailureDetails(error: LlmError): Record<string, unknown> {
  return {
    failure: error.kind,
    retryable: error.retryable,
    ...(error.route ? { route: error.route } : {}),
    ...(error.status !== undefined ? { http_status: error.status } : {}),
  };
}
