import { inspect } from 'node:util';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LOCAL_PLACEHOLDER_KEY, OpenAiLlmClient, type ChatCompletionsApi } from '../../../src/adapters/model/openai-llm-client.js';
import { ConfiguredModelRoutes } from '../../../src/adapters/model/model-routes.js';
import { WorkspaceConfig } from '../../../src/domain/workspace-config.js';
import type { LlmRequest } from '../../../src/domain/ports.js';
import { Route, type ResolvedRoute } from '../../../src/domain/route.js';
import { getEventListeners } from 'node:events';
import { VERDICT_SCHEMA } from '../../../src/domain/verdict.js';
import { failureOf } from '../../helpers/llm-failure.js';
import { FAULTS, rejectingResponseFormat, scripted, type ChatHandler, type ChatServer, startChatServer } from '../../fakes/chat-server.js';

// Every test here goes through the real SDK over real HTTP to a server on 127.0.0.1.

// Built from parts so the test file itself holds no key-shaped string.
const KEY = ['sk', 'test', 'Zq8XvL2mN4pR7tY9wB3cD6fG1hJ5kA0s'].join('-');
/** Keeps the retry policy's wait at 1 ms instead of its backoff (0.25–8 s). */
const FAST_RETRY = { 'retry-after-ms': '1' };

let server: ChatServer;
let handler: ChatHandler;

beforeEach(async () => {
  handler = () => ({ content: 'hello' });
  server = await startChatServer((body, n, request) => handler(body, n, request));
});
afterEach(async () => {
  await server.close();
});

function aRoute(overrides: Partial<ResolvedRoute> = {}): ResolvedRoute {
  const route = Route.parse({ provider: 'openai', model: 'test-model', base_url: server.url, max_retries: 2, timeout_ms: 2_000 });
  return { ...route, id: 'local', locality: 'local', ...overrides };
}

function aRequest(overrides: Partial<LlmRequest> = {}): LlmRequest {
  return {
    messages: [
      { role: 'system', content: 'You are Auditor, one member of a small council.' },
      { role: 'user', content: 'Round 1 of 2: give your analysis.' },
    ],
    ...overrides,
  };
}

function clientFor(overrides: Partial<ResolvedRoute> = {}, options: { apiKey?: string } = { apiKey: KEY }): OpenAiLlmClient {
  return new OpenAiLlmClient({ route: aRoute(overrides), apiKey: options.apiKey });
}

/** A client that does not wait between attempts, where the test is not about the wait. */
function quickRetriesFor(overrides: Partial<ResolvedRoute> = {}): OpenAiLlmClient {
  return new OpenAiLlmClient({ route: aRoute(overrides), apiKey: KEY, random: () => 0, wait: async () => undefined });
}

describe('OpenAiLlmClient: replies', () => {
  it('returns content, route/model and usage from a JSON completion, sending the route settings', async () => {
    handler = () => ({ content: 'I see two risks.', usage: { prompt_tokens: 42, completion_tokens: 7 } });
    const llm = clientFor({ temperature: 0.3, max_output_tokens: 256 });

    const reply = await llm.complete(aRequest());

    expect(reply).toEqual({
      content: 'I see two risks.',
      model: 'local/test-model',
      identity: { provider: 'openai', model: 'test-model', route: 'local', rehearsal: false },
      usage: { prompt_tokens: 42, completion_tokens: 7 },
      finishReason: 'stop',
    });
    expect(llm.label).toBe('local (test-model)');
    expect(llm.rehearsal).toBe(false);
    const [request] = server.requests;
    expect(request?.path).toBe('/v1/chat/completions');
    expect(request?.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(request?.body).toMatchObject({ model: 'test-model', temperature: 0.3, max_tokens: 256, messages: aRequest().messages });
    expect(request?.body).not.toHaveProperty('max_completion_tokens');
    expect(request?.body?.stream).toBeFalsy();
  });

  it('assembles a streamed reply and its usage from the chunks', async () => {
    handler = () => ({ content: 'Streamed words arrive one by one.', usage: { prompt_tokens: 11, completion_tokens: 6 } });

    const reply = await clientFor({ stream: true }).complete(aRequest());

    expect(reply).toMatchObject({
      content: 'Streamed words arrive one by one.',
      model: 'local/test-model',
      usage: { prompt_tokens: 11, completion_tokens: 6 },
      finishReason: 'stop',
    });
    expect(server.requests[0]?.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  });

  it('reads the cached tokens the endpoint reports (prompt_tokens_details.cached_tokens), streamed or not, and ignores nonsense', async () => {
    handler = () => ({
      content: 'Cached.',
      usage: { prompt_tokens: 2048, completion_tokens: 9, prompt_tokens_details: { cached_tokens: 1024 } },
    });
    expect((await clientFor().complete(aRequest())).usage).toEqual({ prompt_tokens: 2048, completion_tokens: 9, cached_tokens: 1024 });
    expect((await clientFor({ stream: true }).complete(aRequest())).usage).toEqual({
      prompt_tokens: 2048,
      completion_tokens: 9,
      cached_tokens: 1024,
    });
    // More cached than sent is held to what was sent; a count that is not a whole number is not a count.
    handler = () => ({
      content: 'Odd.',
      usage: { prompt_tokens: 100, completion_tokens: 1, prompt_tokens_details: { cached_tokens: 500 } },
    });
    expect((await clientFor().complete(aRequest())).usage).toEqual({ prompt_tokens: 100, completion_tokens: 1, cached_tokens: 100 });
    handler = () => ({
      content: 'Odd.',
      usage: { prompt_tokens: 100, completion_tokens: 1, prompt_tokens_details: { cached_tokens: -3 } },
    });
    expect((await clientFor().complete(aRequest())).usage).toEqual({ prompt_tokens: 100, completion_tokens: 1 });
  });

  it('omits usage when the endpoint reports none, streamed or not', async () => {
    handler = () => ({ content: 'no usage here', usage: null });
    expect(await clientFor().complete(aRequest())).toMatchObject({
      content: 'no usage here',
      model: 'local/test-model',
      identity: { provider: 'openai', model: 'test-model', route: 'local', rehearsal: false },
    });
    expect(await clientFor({ stream: true }).complete(aRequest())).toMatchObject({
      content: 'no usage here',
      model: 'local/test-model',
      identity: { provider: 'openai', model: 'test-model', route: 'local', rehearsal: false },
    });
  });

  it('asks for JSON the way the route says: the JSON Schema (default), any object, or the prompt alone', async () => {
    handler = () => ({ content: '{"action":"proceed","confidence":0.8,"rationale":"ok"}' });
    const verdict = aRequest({ responseFormat: VERDICT_SCHEMA });
    await clientFor().complete(verdict);
    await clientFor({ json_mode: 'json_object' }).complete(verdict);
    await clientFor({ json_mode: 'prompt' }).complete(verdict);
    await clientFor().complete(aRequest({ responseFormat: { name: 'any', schema: {} } }));
    await clientFor().complete(aRequest());

    const formats = server.requests.map((r) => r.body?.response_format);
    expect(formats).toEqual([
      { type: 'json_schema', json_schema: { name: 'verdict', strict: true, schema: VERDICT_SCHEMA.schema } },
      { type: 'json_object' },
      undefined,
      { type: 'json_schema', json_schema: { name: 'any', strict: true, schema: {} } }, // every JSON request carries its own schema
      undefined,
    ]);
    expect(Route.parse({ provider: 'openai', model: 'm', json_mode: 'response_format' }).json_mode).toBe('json_object');
  });

  it('sends a placeholder key to a local endpoint when none is configured', async () => {
    await clientFor({}, {}).complete(aRequest());
    expect(server.requests[0]?.headers.authorization).toBe(`Bearer ${LOCAL_PLACEHOLDER_KEY}`);
  });

  it('sends no OpenAI account identifiers from the environment to a non-OpenAI endpoint', async () => {
    vi.stubEnv('OPENAI_ORG_ID', 'org-test123');
    vi.stubEnv('OPENAI_PROJECT_ID', 'proj_test123');
    try {
      await clientFor().complete(aRequest());
    } finally {
      vi.unstubAllEnvs();
    }
    expect(server.requests[0]?.headers).not.toHaveProperty('openai-organization');
    expect(server.requests[0]?.headers).not.toHaveProperty('openai-project');
  });

  it('refuses a remote route without a key, naming the variable and not calling out', () => {
    // Refused where routes are resolved, before any client is made.
    const config = WorkspaceConfig.parse({ routes: { cloud: { provider: 'openai', model: 'm', api_key_env: 'ACME_LLM_KEY' } } });
    const resolved = new ConfiguredModelRoutes({ config, env: {} }).resolve('cloud');
    expect(resolved).toEqual({ error: expect.stringMatching(/no API key: set the environment variable ACME_LLM_KEY/) });
    expect(server.requests).toHaveLength(0);
  });

  it('uses max_completion_tokens, not max_tokens, on OpenAI-hosted endpoints (reasoning models reject max_tokens)', async () => {
    const create = vi.fn().mockResolvedValue({ choices: [{ message: { content: 'ok', refusal: null }, finish_reason: 'stop' }] });
    const client = { chat: { completions: { create } } } as unknown as ChatCompletionsApi;
    const route = { ...aRoute({ max_output_tokens: 100, locality: 'remote' }), base_url: undefined };

    await new OpenAiLlmClient({ route, apiKey: KEY, client }).complete(aRequest());

    expect(create.mock.calls[0]?.[0]).toMatchObject({ max_completion_tokens: 100 });
    expect(create.mock.calls[0]?.[0]).not.toHaveProperty('max_tokens');
  });
});

describe('OpenAiLlmClient: failures', () => {
  it('retries a 429 and succeeds (the server sees two requests)', async () => {
    handler = (_body, n) =>
      n === 1
        ? { status: 429, error: { message: 'Rate limit reached', type: 'requests', code: 'rate_limit_exceeded' }, headers: FAST_RETRY }
        : { content: 'second time lucky' };

    const reply = await clientFor().complete(aRequest());

    expect(reply.content).toBe('second time lucky');
    expect(server.requests).toHaveLength(2);
  });

  it('gives up on a persistent 500 after max_retries + 1 requests, as a retryable server error', async () => {
    handler = () => ({ status: 500, error: { message: 'The server had an error: body text', type: 'server_error' }, headers: FAST_RETRY });

    const error = await failureOf(clientFor({ max_retries: 2 }).complete(aRequest()));

    expect(server.requests).toHaveLength(3);
    expect(error).toMatchObject({ kind: 'server', retryable: true, status: 500, route: 'local' });
    expect(error.message).toMatch(
      /^route "local" \(model "test-model" at http:\/\/127\.0\.0\.1:\d+\): HTTP 500 server_error from the endpoint after 2 retries$/,
    );
  });

  it('fails fast on insufficient_quota: exactly one request, kind quota, not retryable', async () => {
    handler = () => ({
      status: 429,
      error: {
        message: 'You exceeded your current quota, please check your plan and billing details.',
        type: 'insufficient_quota',
        code: 'insufficient_quota',
      },
      headers: FAST_RETRY,
    });

    const error = await failureOf(clientFor({ max_retries: 3 }).complete(aRequest()));

    expect(server.requests).toHaveLength(1);
    expect(error).toMatchObject({ kind: 'quota', retryable: false, status: 429 });
    expect(error.message).not.toMatch(/exceeded your current quota/);
  });

  it('does not retry a 401 and never repeats the key, even when the body echoes it', async () => {
    handler = () => ({
      status: 401,
      error: { message: `Incorrect API key provided: ${KEY}.`, type: 'invalid_request_error', code: 'invalid_api_key' },
      headers: FAST_RETRY,
    });

    const error = await failureOf(clientFor({ api_key_env: 'ACME_LLM_KEY' }).complete(aRequest()));

    expect(server.requests).toHaveLength(1);
    expect(error).toMatchObject({ kind: 'auth', retryable: false, status: 401 });
    expect(error.message).toContain('ACME_LLM_KEY');
    expect(error.message).not.toContain(KEY);
    expect(error.message).not.toContain(KEY.slice(-8));
    expect(error.message).not.toMatch(/Incorrect API key/);
  });

  it('maps 400 to bad_request without retrying', async () => {
    handler = () => ({
      status: 400,
      error: { message: "Unsupported parameter: 'max_tokens'", type: 'invalid_request_error', code: 'unsupported_parameter' },
    });

    const error = await failureOf(clientFor().complete(aRequest()));

    expect(server.requests).toHaveLength(1);
    expect(error).toMatchObject({ kind: 'bad_request', retryable: false, status: 400 });
    expect(error.message).toBe('route "local": the endpoint rejected the request (HTTP 400 unsupported_parameter) for model "test-model"');
  });

  it('honours the route timeout: a 5 s stall fails as timeout in well under a second per attempt', async () => {
    handler = () => ({ delayMs: 5_000 });
    const started = performance.now();

    const error = await failureOf(quickRetriesFor({ timeout_ms: 300, max_retries: 1 }).complete(aRequest()));

    expect(performance.now() - started).toBeLessThan(2_500);
    expect(error).toMatchObject({ kind: 'timeout', retryable: true });
    expect(error.message).toMatch(
      /^route "local" \(model "test-model" at http:\/\/127\.0\.0\.1:\d+\): no response within 300 ms after 1 retry$/,
    );
    expect(server.requests).toHaveLength(2);
    await vi.waitFor(() => expect(server.requests.every((r) => r.disconnected)).toBe(true));
  });

  it('times out a whole reply whose body stalls after the headers, and the endpoint sees the hang-up', async () => {
    handler = () => ({
      raw: JSON.stringify({
        id: 'x',
        object: 'chat.completion',
        created: 0,
        model: 'test-model',
        choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'a reply' } }],
      }),
      stallAfter: 40,
    });
    const started = performance.now();

    const error = await failureOf(clientFor({ timeout_ms: 300, max_retries: 0 }).complete(aRequest()));

    expect(performance.now() - started).toBeLessThan(1_500);
    expect(error).toMatchObject({ kind: 'timeout', retryable: true });
    expect(error.message).toMatch(
      /^route "local" \(model "test-model" at http:\/\/127\.0\.0\.1:\d+\): no data from the endpoint for 300 ms while reading the reply$/,
    );
    await vi.waitFor(() => expect(server.requests.every((r) => r.disconnected)).toBe(true));
  });

  it('times out a stream that stalls between chunks', async () => {
    handler = () => ({ content: 'one two three', chunkDelayMs: 2_000 });
    const started = performance.now();

    const error = await failureOf(clientFor({ stream: true, timeout_ms: 300, max_retries: 0 }).complete(aRequest()));

    expect(performance.now() - started).toBeLessThan(1_500);
    expect(error).toMatchObject({ kind: 'timeout', retryable: true });
  });

  it('reports a stream cut off before the model finished as a network error, after the same retries as a 5xx', async () => {
    handler = () => ({ content: 'half a sent', truncate: true });
    const error = await failureOf(quickRetriesFor({ stream: true, max_retries: 2 }).complete(aRequest()));
    expect(error).toMatchObject({ kind: 'network', retryable: true });
    expect(error.message).toMatch(
      /^route "local" \(model "test-model" at http:\/\/127\.0\.0\.1:\d+\): the stream ended before the model finished after 2 retries$/,
    );
    expect(server.requests).toHaveLength(3);
  });

  it('reports an unreachable endpoint as a network error', async () => {
    const route = aRoute({ max_retries: 0 });
    await server.close();
    const error = await failureOf(new OpenAiLlmClient({ route, apiKey: KEY }).complete(aRequest()));
    expect(error).toMatchObject({ kind: 'network', retryable: true });
    expect(error.message).toMatch(
      /^route "local" \(model "test-model" at http:\/\/127\.0\.0\.1:\d+\): could not connect \(ECONNREFUSED\)$/,
    );
  });

  it('treats empty content as invalid output, retried like a 5xx', async () => {
    handler = () => ({ content: '  ', finishReason: 'length' });
    const error = await failureOf(clientFor({ max_retries: 1 }).complete(aRequest()));
    expect(error).toMatchObject({ kind: 'invalid_output', retryable: true });
    expect(error.message).toBe('route "local": the model returned no content (finish_reason length) after 1 retry');
    expect(server.requests).toHaveLength(2);
  });

  it('never repeats a body in the message when the endpoint sends garbage', async () => {
    handler = () => ({ raw: 'secret-ish <html> not json', status: 502, contentType: 'text/html', headers: FAST_RETRY });
    const error = await failureOf(clientFor({ max_retries: 0 }).complete(aRequest()));
    expect(error).toMatchObject({ kind: 'server', status: 502 });
    expect(error.message).not.toMatch(/html|secret/);
  });

  it('keeps bodies out of the whole error, cause chain included (what util.inspect or a log would show)', async () => {
    const echo = 'Validation failed for input: Round 1 of 2: give your analysis.';
    handler = (_body, n) =>
      n === 1
        ? { status: 422, error: { message: echo, type: 'invalid_request_error', code: 'invalid_value' } }
        : { raw: '<html>Round 1 of 2</html>', contentType: 'application/json' };
    const llm = clientFor({ max_retries: 0 });

    for (const error of [await failureOf(llm.complete(aRequest())), await failureOf(llm.complete(aRequest()))]) {
      const shown = inspect(error, { depth: 10 });
      expect(shown).not.toContain('Round 1 of 2');
      expect(shown).not.toContain(KEY);
    }
  });
});

describe('OpenAiLlmClient: one-off faults are retried on the same route', () => {
  it.each([
    ['a malformed body', false, FAULTS.malformedBody()],
    ['empty choices', false, FAULTS.emptyChoices()],
    ['empty choices, streamed', true, FAULTS.emptyChoices()],
    ['a cut stream', true, FAULTS.cutStream()],
  ] as const)('%s once: the second attempt answers', async (_what, stream, fault) => {
    handler = scripted([fault], () => ({ content: 'second attempt' }));
    const reply = await clientFor({ stream, max_retries: 2 }).complete(aRequest());
    expect(reply.content).toBe('second attempt');
    expect(server.requests).toHaveLength(2);
  });

  it('a malformed body every time: max_retries + 1 attempts, then an invalid_output error naming them', async () => {
    handler = () => FAULTS.malformedBody();
    const error = await failureOf(clientFor({ max_retries: 2 }).complete(aRequest()));
    expect(server.requests).toHaveLength(3);
    expect(error).toMatchObject({ kind: 'invalid_output', retryable: true });
    expect(error.message).toBe('route "local": the endpoint sent a reply that is not valid JSON after 2 retries');
  });

  it('no retry budget, no retry', async () => {
    handler = () => FAULTS.emptyChoices();
    const error = await failureOf(clientFor({ max_retries: 0 }).complete(aRequest()));
    expect(server.requests).toHaveLength(1);
    expect(error.message).toBe('route "local": the endpoint sent a completion with no choices');
  });

  it('a 5xx then a malformed body share one budget', async () => {
    handler = scripted([{ status: 500, error: { message: 'boom' }, headers: FAST_RETRY }, FAULTS.malformedBody()], () => ({
      content: 'never',
    }));
    const error = await failureOf(clientFor({ max_retries: 1 }).complete(aRequest()));
    expect(server.requests).toHaveLength(2);
    expect(error.kind).toBe('invalid_output');
  });
});

describe('OpenAiLlmClient: one retry policy, applied once', () => {
  /** The waits the client asked for between attempts, in ms: recorded, not slept (the test is about which wait, not the clock). */
  let waits: number[];
  beforeEach(() => {
    waits = [];
  });
  const recordWait = async (ms: number): Promise<void> => {
    waits.push(ms);
  };
  const withPolicy = (overrides: Partial<ResolvedRoute>, random = (): number => 0): OpenAiLlmClient =>
    new OpenAiLlmClient({ route: aRoute(overrides), apiKey: KEY, random, wait: recordWait });

  it('a 500 then a 200 succeeds in 2 attempts, after the backoff (no header asked for a wait)', async () => {
    handler = (_body, n) => (n === 1 ? { status: 500, error: { message: 'boom', type: 'server_error' } } : { content: 'recovered' });
    const reply = await withPolicy({ max_retries: 3 }).complete(aRequest());
    expect(reply.content).toBe('recovered');
    expect(server.requests).toHaveLength(2);
    // A 5xx waits half of 500 ms (random 0) before the retry, once.
    expect(waits).toEqual([250]);
  });

  it('max_retries 0 is exactly one attempt, and the message claims no retry', async () => {
    handler = () => ({ status: 503, error: { message: 'busy', type: 'server_error' }, headers: FAST_RETRY });
    const error = await failureOf(withPolicy({ max_retries: 0 }).complete(aRequest()));
    expect(server.requests).toHaveLength(1);
    expect(error).toMatchObject({ kind: 'server', status: 503 });
    expect(error.message).toMatch(
      /^route "local" \(model "test-model" at http:\/\/127\.0\.0\.1:\d+\): HTTP 503 server_error from the endpoint$/,
    );
  });

  it('a 429 with retry-after: 1 waits the second it asks for (not the shorter backoff)', async () => {
    handler = (_body, n) =>
      n === 1
        ? { status: 429, error: { message: 'slow down', type: 'requests', code: 'rate_limit_exceeded' }, headers: { 'retry-after': '1' } }
        : { content: 'after the wait' };
    const reply = await withPolicy({ max_retries: 1 }).complete(aRequest());
    expect(reply.content).toBe('after the wait');
    expect(server.requests).toHaveLength(2);
    expect(waits).toEqual([1000]);
  });

  it('a 429 that asks for a wait longer than a call should take fails at once, saying so', async () => {
    handler = () => ({
      status: 429,
      error: { message: 'slow down', type: 'requests', code: 'rate_limit_exceeded' },
      headers: { 'retry-after': '3600' },
    });
    const error = await failureOf(withPolicy({ max_retries: 3 }).complete(aRequest()));
    expect(server.requests).toHaveLength(1);
    expect(error).toMatchObject({ kind: 'rate_limit', retryable: true, status: 429 });
    expect(error.message).toBe(
      'route "local": rate limited (HTTP 429 rate_limit_exceeded); it asked to wait 3600 s, too long to wait within a call',
    );
  });

  it('an endpoint that answers x-should-retry: false is not asked again', async () => {
    handler = () => ({ status: 500, error: { message: 'boom', type: 'server_error' }, headers: { 'x-should-retry': 'false' } });
    await failureOf(withPolicy({ max_retries: 3 }).complete(aRequest()));
    expect(server.requests).toHaveLength(1);
  });

  it('a refused connection is retried after a wait, then fails as network naming the retries', async () => {
    const route = aRoute({ max_retries: 2 });
    await server.close();
    const error = await failureOf(new OpenAiLlmClient({ route, apiKey: KEY, random: () => 0, wait: recordWait }).complete(aRequest()));
    expect(error).toMatchObject({ kind: 'network', retryable: true });
    expect(error.message).toMatch(
      /^route "local" \(model "test-model" at http:\/\/127\.0\.0\.1:\d+\): could not connect \(ECONNREFUSED\) after 2 retries$/,
    );
    // Two waits: 250 ms, then 500 ms (random 0).
    expect(waits).toEqual([250, 500]);
  });

  it('a refused connection is asked again: an endpoint that comes up during the wait answers', async () => {
    const port = Number(new URL(server.url).port);
    await server.close();
    let revived: Promise<ChatServer> | undefined;
    // The policy draws its jitter once it decided to retry, after the first attempt was refused: the endpoint comes up then (500 ms wait).
    const random = (): number => {
      revived ??= startOn(port);
      return 1;
    };
    try {
      const reply = await new OpenAiLlmClient({
        route: aRoute({ max_retries: 1, base_url: `http://127.0.0.1:${port}/v1` }),
        apiKey: KEY,
        random,
      }).complete(aRequest());
      expect(reply.content).toBe('back up');
      expect(revived).toBeDefined();
    } finally {
      await (await revived)?.close();
    }
  });
});

/** A chat server on a given port that answers "back up". */
async function startOn(port: number): Promise<ChatServer> {
  const { createServer } = await import('node:http');
  const raw = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id: 'c',
          object: 'chat.completion',
          created: 0,
          model: 'test-model',
          choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'back up', refusal: null } }],
        }),
      );
    });
  });
  await new Promise<void>((resolve) => raw.listen(port, '127.0.0.1', resolve));
  const close = (): Promise<void> =>
    new Promise<void>((resolve) => {
      raw.close(() => resolve());
      raw.closeAllConnections();
    });
  return { url: `http://127.0.0.1:${port}/v1`, requests: [], chatRequests: () => [], classifyRequests: [], close };
}

describe('OpenAiLlmClient: an endpoint that rejects response_format', () => {
  const verdict = (): LlmRequest => aRequest({ responseFormat: VERDICT_SCHEMA });
  const ok = '{"action":"proceed","confidence":0.8,"rationale":"ok"}';

  it('falls back json_schema → json_object once, says so on the reply, and keeps the fallback for later calls', async () => {
    handler = rejectingResponseFormat(['json_schema'], () => ({ content: ok }));
    const llm = clientFor({ max_retries: 0 });

    const first = await llm.complete(verdict());
    const second = await llm.complete(verdict());

    expect(first.content).toBe(ok);
    expect(first.notices).toEqual([{ kind: 'json_mode_fallback', route: 'local', from: 'json_schema', to: 'json_object', status: 400 }]);
    expect(second.notices).toBeUndefined();
    expect(server.requests.map((r) => r.body?.response_format?.type)).toEqual(['json_schema', 'json_object', 'json_object']);
  });

  it('falls back all the way to the prompt when no response_format is accepted', async () => {
    handler = rejectingResponseFormat(['json_schema', 'json_object'], () => ({ content: ok }));
    const reply = await clientFor({ stream: true }).complete(verdict());
    expect(reply.notices?.map((n) => `${n.from}→${n.to}`)).toEqual(['json_schema→json_object', 'json_object→prompt']);
    expect(server.requests.map((r) => r.body?.response_format?.type)).toEqual(['json_schema', 'json_object', undefined]);
  });

  it('a 400 that is not about the format still fails as bad_request once the prompt mode is reached', async () => {
    handler = () => ({
      status: 400,
      error: { message: 'context too long', type: 'invalid_request_error', code: 'context_length_exceeded' },
    });
    const error = await failureOf(clientFor().complete(verdict()));
    expect(error).toMatchObject({ kind: 'bad_request', status: 400 });
    expect(server.requests).toHaveLength(3);
  });
});

describe('OpenAiLlmClient: abort listeners', () => {
  it('leaves no listener on the run signal after many calls, streamed or not', async () => {
    const run = new AbortController();
    const added = vi.spyOn(run.signal, 'addEventListener');
    const removed = vi.spyOn(run.signal, 'removeEventListener');
    handler = (_body, n) => (n % 5 === 0 ? FAULTS.emptyChoices() : { content: `reply ${n}` });
    for (let i = 0; i < 15; i++) await quickRetriesFor({ stream: i % 2 === 0 }).complete(aRequest(), {}, run.signal);

    expect(added.mock.calls.length).toBeGreaterThan(0);
    expect(removed.mock.calls.length).toBe(added.mock.calls.length);
    expect(getEventListeners(run.signal, 'abort')).toHaveLength(0);
  });
});

describe('OpenAiLlmClient: cancellation', () => {
  it('cancels a call in flight and rethrows the abort reason, not an LlmError', async () => {
    handler = () => ({ delayMs: 5_000 });
    const controller = new AbortController();
    const reason = new Error('interrupted');
    setTimeout(() => controller.abort(reason), 100);
    const started = performance.now();

    const error = await clientFor()
      .complete(aRequest(), {}, controller.signal)
      .catch((e: unknown) => e);

    expect(error).toBe(reason);
    expect(performance.now() - started).toBeLessThan(1_500);
    await vi.waitFor(() => expect(server.requests[0]?.disconnected).toBe(true));
    expect(server.requests).toHaveLength(1);
  });

  it('cancels a stream mid-way', async () => {
    handler = () => ({ content: 'a b c d e f', chunkDelayMs: 150 });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 250);

    const error = await clientFor({ stream: true })
      .complete(aRequest(), {}, controller.signal)
      .catch((e: unknown) => e);

    expect(error).toBeInstanceOf(DOMException);
    expect((error as DOMException).name).toBe('AbortError');
  });

  it('does not call out when the signal is already aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(clientFor().complete(aRequest(), {}, controller.signal)).rejects.toMatchObject({ name: 'AbortError' });
    expect(server.requests).toHaveLength(0);
  });
});

describe('OpenAiLlmClient: logging', () => {
  it('writes nothing to stdout, stderr or the console, even with OPENAI_LOG=debug', async () => {
    vi.stubEnv('OPENAI_LOG', 'debug');
    const writes = [
      vi.spyOn(process.stdout, 'write'),
      vi.spyOn(process.stderr, 'write'),
      ...(['log', 'info', 'debug', 'warn', 'error'] as const).map((m) => vi.spyOn(console, m)),
    ];
    handler = (_body, n) => (n === 1 ? { status: 500, error: { message: 'boom' }, headers: FAST_RETRY } : { content: 'fine' });
    try {
      const llm = clientFor({ max_retries: 1 });
      await llm.complete(aRequest());
      await clientFor({ stream: true }).complete(aRequest());
      handler = () => ({ status: 400, error: { message: 'bad' } });
      await llm.complete(aRequest()).catch(() => undefined);
    } finally {
      vi.unstubAllEnvs();
    }
    for (const spy of writes) expect(spy).not.toHaveBeenCalled();
  });
});
