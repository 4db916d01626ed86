import { describe, expect, it } from 'vitest';
import { LlmError, type LlmErrorKind } from '../../src/domain/errors.js';
import { describeModelFailure, modelFailureDetails } from '../../src/domain/model-failure.js';

const failure = (kind: LlmErrorKind, over: { status?: number; route?: string; retryable?: boolean } = {}) =>
  new LlmError(`route "${over.route ?? 'main'}" (127.0.0.1:8080) failed after 3 attempts`, over.retryable ?? false, over.status, {
    kind,
    ...(over.route ? { route: over.route } : {}),
  });

describe('describeModelFailure: the failure, then what a person can try', () => {
  it.each([
    ['network', 'is the server running'],
    ['timeout', 'raise timeout_ms'],
    ['server', 'fallback_route'],
    ['rate_limit', 'raise max_retries'],
    ['quota', 'top it up'],
    ['auth', 'api_key_env'],
    ['bad_request', 'json_mode, max_output_tokens'],
    ['invalid_output', 'json_mode "json_object" or "prompt"'],
    ['cassette', 'record again'],
  ] as const)('%s: says what happened and suggests %j', (kind, hint) => {
    const text = describeModelFailure(failure(kind));
    expect(text.startsWith('route "main" (127.0.0.1:8080) failed after 3 attempts — ')).toBe(true);
    expect(text).toContain(hint);
  });

  it('gives each kind its own advice', () => {
    const kinds: LlmErrorKind[] = [
      'network',
      'timeout',
      'server',
      'rate_limit',
      'quota',
      'auth',
      'bad_request',
      'invalid_output',
      'cassette',
    ];
    const advice = kinds.map((k) => describeModelFailure(failure(k)).split(' — ')[1]);
    expect(new Set(advice).size).toBe(kinds.length);
  });

  it('advises on the kind the status implies when none is given (429: rate limit, 5xx: server)', () => {
    expect(describeModelFailure(new LlmError('HTTP 429', true, 429))).toContain('rate-limiting');
    expect(describeModelFailure(new LlmError('HTTP 503', true, 503))).toContain('the endpoint is failing');
  });
});

describe('modelFailureDetails: what the audit log keeps of a failure', () => {
  it('keeps the kind, whether it was retryable, the route and the HTTP status', () => {
    expect(modelFailureDetails(failure('rate_limit', { status: 429, route: 'main', retryable: true }))).toEqual({
      failure: 'rate_limit',
      retryable: true,
      route: 'main',
      http_status: 429,
    });
  });

  it('leaves out a route and a status the error does not have', () => {
    expect(modelFailureDetails(new LlmError('connection refused', true, undefined, { kind: 'network' }))).toEqual({
      failure: 'network',
      retryable: true,
    });
  });

  it('never carries the message, which may quote what the endpoint sent back', () => {
    const error = new LlmError('401: invalid key sk-proj-abcdef0123456789 for jane@example.com', false, 401, {
      kind: 'auth',
      route: 'main',
    });
    const details = JSON.stringify(modelFailureDetails(error));
    expect(details).not.toContain('sk-proj');
    expect(details).not.toContain('jane@example.com');
  });
});
