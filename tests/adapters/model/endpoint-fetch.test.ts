import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { inspect } from 'node:util';
import { brotliCompressSync, deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { OpenAiLlmClient } from '../../../src/adapters/model/openai-llm-client.js';
import { failureOf } from '../../helpers/llm-failure.js';
import { Route } from '../../../src/domain/route.js';

// The HTTP layer under the SDK (src/adapters/model/endpoint-fetch.ts: undici), through the real SDK and real
// sockets on 127.0.0.1: what a person would notice of it, connections kept, redirects, encodings.

const KEY = ['sk', 'test', 'Hn3Wq9Lx2Rb7Tc5Vz1Pd8Mf4Kg6Js0Ya'].join('-');

interface Seen {
  readonly method: string;
  readonly path: string;
  readonly authorization: string | undefined;
  readonly body: string;
  readonly connection: number;
}

interface RawServer {
  readonly url: string;
  readonly origin: string;
  readonly seen: Seen[];
  /** Connections the server accepted. */
  connections(): number;
  close(): Promise<void>;
}

const servers: RawServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** A server whose handler answers each request by hand; it records every request and on which connection it came. */
async function rawServer(answer: (req: IncomingMessage, res: ServerResponse, n: number) => void): Promise<RawServer> {
  const seen: Seen[] = [];
  let connections = 0;
  const ids = new WeakMap<object, number>();
  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (d: Buffer) => parts.push(d));
    req.on('end', () => {
      seen.push({
        method: req.method ?? '',
        path: req.url ?? '',
        authorization: req.headers.authorization,
        body: Buffer.concat(parts).toString('utf8'),
        connection: ids.get(req.socket) ?? 0,
      });
      answer(req, res, seen.length);
    });
  });
  server.on('connection', (socket) => ids.set(socket, ++connections));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const handle: RawServer = {
    url: `${origin}/v1`,
    origin,
    seen,
    connections: () => connections,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
  servers.push(handle);
  return handle;
}

function completion(content: string): string {
  return JSON.stringify({
    id: 'chatcmpl-t',
    object: 'chat.completion',
    created: 0,
    model: 'm',
    choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content, refusal: null } }],
  });
}

function answerWith(content: string) {
  return (_req: IncomingMessage, res: ServerResponse): void => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(completion(content));
  };
}

function clientOf(url: string, maxRetries = 0): OpenAiLlmClient {
  const route = Route.parse({ provider: 'openai', model: 'm', base_url: url, max_retries: maxRetries, timeout_ms: 2_000 });
  return new OpenAiLlmClient({ route: { ...route, id: 'local', locality: 'local' }, apiKey: KEY });
}

const ask = (client: OpenAiLlmClient, text = 'Assess the plan.') => client.complete({ messages: [{ role: 'user', content: text }] });

describe('the HTTP layer under the SDK', () => {
  it('keeps its connections alive over a run of calls, and sends each body whole', async () => {
    const server = await rawServer(answerWith('fine'));
    const client = clientOf(server.url);
    const long = 'x'.repeat(200_000);
    for (let i = 0; i < 8; i++) expect((await ask(client, `${i} ${long}`)).content).toBe('fine');

    // undici's pool may open a second connection when a call follows the last one before that one is marked idle.
    expect(server.connections()).toBeLessThanOrEqual(2);
    expect(server.seen.map((s) => (JSON.parse(s.body) as { messages: { content: string }[] }).messages[0]?.content.length)).toEqual(
      Array(8).fill(200_002),
    );
  });

  it('assembles a reply that arrives in many pieces', async () => {
    const text = 'word '.repeat(5_000).trim();
    const body = completion(text);
    const server = await rawServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      let at = 0;
      const next = (): void => {
        if (at >= body.length) return void res.end();
        res.write(body.slice(at, (at += 1_000)));
        setTimeout(next, 1);
      };
      next();
    });
    expect((await ask(clientOf(server.url))).content).toBe(text);
  });

  it('never sends a request twice behind the route budget: a connection dropped after the endpoint took the request is retried only within max_retries', async () => {
    const server = await rawServer((req, res, n) => {
      if (n === 2 || n === 3) return void setTimeout(() => req.socket.resetAndDestroy(), 50);
      answerWith(`reply ${n}`)(req, res);
    });
    expect((await ask(clientOf(server.url, 0))).content).toBe('reply 1');
    const error = await failureOf(ask(clientOf(server.url, 0)));
    expect(error.message).toMatch(/^route "local" \(model "m" at http:\/\/127\.0\.0\.1:\d+\): could not connect \(ECONNRESET\)$/);
    expect(server.seen).toHaveLength(2);

    expect((await ask(clientOf(server.url, 1))).content).toBe('reply 4');
    expect(server.seen).toHaveLength(4);
  });

  it.each([false, true])('retries a reply cut off mid-body as a one-off, within max_retries (stream: %s)', async (stream) => {
    const chunk = (delta: object, finish: string | null): string =>
      `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 0, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    const server = await rawServer((req, res, n) => {
      if (n > 1 && !stream) return answerWith('whole this time')(req, res);
      if (n > 1) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        return void res.end(`${chunk({ role: 'assistant', content: 'whole this time' }, null)}${chunk({}, 'stop')}data: [DONE]\n\n`);
      }
      if (stream) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(chunk({ role: 'assistant', content: 'half' }, null));
      } else {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '400' });
        res.write('{"id":"c","object":');
      }
      setTimeout(() => res.socket?.destroy(), 30);
    });
    const route = Route.parse({ provider: 'openai', model: 'm', base_url: server.url, max_retries: 1, timeout_ms: 2_000, stream });
    const client = new OpenAiLlmClient({ route: { ...route, id: 'local', locality: 'local' }, apiKey: KEY });
    expect((await ask(client)).content).toBe('whole this time');
    expect(server.seen).toHaveLength(2);
  });

  it('does not retry a dropped first connection behind the route budget: max_retries 0 is one request', async () => {
    const server = await rawServer((req) => void req.socket.destroy());
    const error = await failureOf(ask(clientOf(server.url, 0)));
    expect(error).toMatchObject({ kind: 'network', retryable: true });
    expect(error.message).toMatch(
      /^route "local" \(model "m" at http:\/\/127\.0\.0\.1:\d+\): could not connect \(the endpoint closed the connection before it answered\)$/,
    );
    expect(server.seen).toHaveLength(1);
  });

  it('follows a 307 or 308 on the same host with the same method, body and key', async () => {
    const server = await rawServer((req, res) => {
      if (req.url === '/v1/chat/completions') return void res.writeHead(307, { location: '/v2/chat/completions' }).end();
      if (req.url === '/v2/chat/completions') return void res.writeHead(308, { location: `${server.origin}/v3/chat/completions` }).end();
      answerWith('moved')(req, res);
    });
    expect((await ask(clientOf(server.url), 'the plan')).content).toBe('moved');
    expect(server.seen.map((s) => `${s.method} ${s.path}`)).toEqual([
      'POST /v1/chat/completions',
      'POST /v2/chat/completions',
      'POST /v3/chat/completions',
    ]);
    expect(new Set(server.seen.map((s) => s.body)).size).toBe(1);
    expect(server.seen.every((s) => s.authorization === `Bearer ${KEY}`)).toBe(true);
  });

  it('never follows a redirect to another host (the key would go with it), and says where it points', async () => {
    const elsewhere = await rawServer(answerWith('should not be reached'));
    const server = await rawServer(
      (_req, res) => void res.writeHead(308, { location: `${elsewhere.origin}/v1/chat/completions?token=abc` }).end(),
    );
    const error = await failureOf(ask(clientOf(server.url, 2)));

    expect(elsewhere.seen).toHaveLength(0);
    expect(error).toMatchObject({ kind: 'bad_request', retryable: false, status: 308 });
    expect(error.message).toBe(
      `route "local": the endpoint redirects (HTTP 308 to ${elsewhere.origin}); set the route's base_url to the address it should call`,
    );
    expect(error.message).not.toContain('token');
  });

  it('never replays a POST as a GET on a 301, 302 or 303', async () => {
    for (const status of [301, 302, 303]) {
      const server = await rawServer((_req, res) => void res.writeHead(status, { location: '/elsewhere' }).end());
      const error = await failureOf(ask(clientOf(server.url)));
      expect(error).toMatchObject({ kind: 'bad_request', status });
      expect(server.seen.map((s) => s.method)).toEqual(['POST']);
    }
  });

  it.each([
    ['gzip', (b: string) => gzipSync(b)],
    ['deflate', (b: string) => deflateSync(b)],
    ['deflate', (b: string) => deflateRawSync(b)],
    ['br', (b: string) => brotliCompressSync(b)],
    ['gzip, br', (b: string) => brotliCompressSync(gzipSync(b))],
  ] as const)('reads a reply a server compressed (%s) without being asked', async (coding, compress) => {
    const server = await rawServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': coding });
      res.end(compress(completion('unzipped')));
    });
    expect((await ask(clientOf(server.url))).content).toBe('unzipped');
  });

  it('reads a reply that starts with a byte order mark, as the platform fetch does (a quota 429 included)', async () => {
    const bom = Buffer.from([0xef, 0xbb, 0xbf]);
    const ok = await rawServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(Buffer.concat([bom, Buffer.from(completion('after the mark'))]));
    });
    expect((await ask(clientOf(ok.url, 2))).content).toBe('after the mark');
    expect(ok.seen).toHaveLength(1);

    const quota = await rawServer((_req, res) => {
      res.writeHead(429, { 'content-type': 'application/json' });
      res.end(
        Buffer.concat([
          bom,
          Buffer.from(JSON.stringify({ error: { type: 'insufficient_quota', code: 'insufficient_quota', message: 'no' } })),
        ]),
      );
    });
    const error = await failureOf(ask(clientOf(quota.url, 2)));
    expect(error).toMatchObject({ kind: 'quota', retryable: false });
    expect(quota.seen).toHaveLength(1);
  });

  it('retries a 5xx whose body never arrives whole', async () => {
    const server = await rawServer((req, res, n) => {
      if (n > 1) return answerWith('second try')(req, res);
      res.writeHead(503, { 'content-type': 'application/json', 'content-length': '100', 'retry-after-ms': '1' });
      res.write('{"error":');
    });
    const route = Route.parse({ provider: 'openai', model: 'm', base_url: server.url, max_retries: 2, timeout_ms: 300 });
    const client = new OpenAiLlmClient({ route: { ...route, id: 'local', locality: 'local' }, apiKey: KEY });
    expect((await ask(client)).content).toBe('second try');
    expect(server.seen).toHaveLength(2);
  });

  it('streams a reply asked for as a stream even when the server does not label it text/event-stream', async () => {
    const event = (content: string, finish: string | null): string =>
      `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 0, model: 'm', choices: [{ index: 0, delta: { content }, finish_reason: finish }] })}\n\n`;
    const server = await rawServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      let i = 0;
      const next = (): void => {
        if (i === 4) return void res.end(`${event('', 'stop')}data: [DONE]\n\n`);
        res.write(event(`w${i++} `, null));
        setTimeout(next, 150);
      };
      next();
    });
    // Each piece comes well within the limit; the whole reply does not: only a stream gets through.
    const route = Route.parse({ provider: 'openai', model: 'm', base_url: server.url, max_retries: 0, timeout_ms: 400, stream: true });
    const client = new OpenAiLlmClient({ route: { ...route, id: 'local', locality: 'local' }, apiKey: KEY });
    const pieces: string[] = [];
    const reply = await client.complete({ messages: [{ role: 'user', content: 'go' }] }, { onText: (d) => pieces.push(d) });
    expect(reply.content).toBe('w0 w1 w2 w3 ');
    expect(pieces.length).toBeGreaterThanOrEqual(4);
  });

  it('says a redirect names no place, or only another path on the same host, without blaming the model', async () => {
    const nowhere = await rawServer((_req, res) => void res.writeHead(302).end());
    expect((await failureOf(ask(clientOf(nowhere.url)))).message).toBe(
      `route "local": the endpoint answered HTTP 302 without saying where to; check the route's base_url`,
    );
    const samehost = await rawServer((_req, res) => void res.writeHead(301, { location: '/v2/chat/completions' }).end());
    expect((await failureOf(ask(clientOf(samehost.url)))).message).toBe(
      `route "local": the endpoint redirects (HTTP 301 to another path on the same host); set the route's base_url to the address it should call`,
    );
  });

  it('never repeats a key that an error body puts in its code', async () => {
    const server = await rawServer((_req, res) => {
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after-ms': '1' });
      res.end(JSON.stringify({ error: { type: 'rate_limit', code: KEY, message: 'slow down' } }));
    });
    const error = await failureOf(ask(clientOf(server.url)));
    expect(error).toMatchObject({ kind: 'rate_limit' });
    expect(inspect(error, { depth: 10 })).not.toContain(KEY);
  });

  it('says so when the endpoint keeps redirecting to itself', async () => {
    const server = await rawServer((_req, res) => void res.writeHead(307, { location: '/v1/chat/completions' }).end());
    const error = await failureOf(ask(clientOf(server.url)));
    expect(error.message).toBe(`route "local": the endpoint keeps redirecting (HTTP 307, more than 5 times); check the route's base_url`);
    expect(server.seen).toHaveLength(6);
  });

  it('says an https base_url points at a plain-HTTP endpoint: a configuration error, not an outage (not retried)', async () => {
    const server = await rawServer(answerWith('never'));
    const error = await failureOf(ask(clientOf(server.url.replace('http:', 'https:'))));
    expect(error.message).toMatch(
      /^route "local": could not connect \([A-Z_]+: no TLS there; if the endpoint speaks plain HTTP, its base_url starts with http:\/\/\)$/,
    );
    expect(error).toMatchObject({ kind: 'bad_request', retryable: false });
  });
});
