import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { OpenAiLlmClient } from '../../src/adapters/openai-llm-client.js';
import { LlmError } from '../../src/domain/errors.js';
import { Route } from '../../src/domain/route.js';

// The HTTP layer under the SDK (src/adapters/endpoint-fetch.ts), through the real SDK and real
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
      seen.push({ method: req.method ?? '', path: req.url ?? '', authorization: req.headers.authorization, body: Buffer.concat(parts).toString('utf8'), connection: ids.get(req.socket) ?? 0 });
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
  return JSON.stringify({ id: 'chatcmpl-t', object: 'chat.completion', created: 0, model: 'm', choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content, refusal: null } }] });
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

async function failureOf(promise: Promise<unknown>): Promise<LlmError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(LlmError);
  return error as LlmError;
}

describe('the HTTP layer under the SDK', () => {
  it('keeps one connection for a run of calls, and sends each body whole', async () => {
    const server = await rawServer(answerWith('fine'));
    const client = clientOf(server.url);
    const long = 'x'.repeat(200_000);
    for (let i = 0; i < 5; i++) expect((await ask(client, `${i} ${long}`)).content).toBe('fine');

    expect(server.connections()).toBe(1);
    expect(server.seen.map((s) => (JSON.parse(s.body) as { messages: { content: string }[] }).messages[0]?.content.length)).toEqual(Array(5).fill(200_002));
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

  it('retries once on a new connection when the endpoint dropped the kept-alive one as the request went out', async () => {
    const server = await rawServer((req, res, n) => {
      if (n === 2) return void req.socket.destroy();
      answerWith(`reply ${n}`)(req, res);
    });
    const client = clientOf(server.url, 0);
    expect((await ask(client)).content).toBe('reply 1');
    expect((await ask(client)).content).toBe('reply 3');
    expect(server.connections()).toBe(2);
  });

  it('does not retry a dropped first connection behind the route budget: max_retries 0 is one request', async () => {
    const server = await rawServer((req) => void req.socket.destroy());
    const error = await failureOf(ask(clientOf(server.url, 0)));
    expect(error).toMatchObject({ kind: 'network', retryable: true });
    expect(error.message).toMatch(/^route "local": could not reach 127\.0\.0\.1:\d+ \(ECONNRESET\)$/);
    expect(server.seen).toHaveLength(1);
  });

  it('follows a 307 or 308 on the same host with the same method, body and key', async () => {
    const server = await rawServer((req, res) => {
      if (req.url === '/v1/chat/completions') return void res.writeHead(307, { location: '/v2/chat/completions' }).end();
      if (req.url === '/v2/chat/completions') return void res.writeHead(308, { location: `${server.origin}/v3/chat/completions` }).end();
      answerWith('moved')(req, res);
    });
    expect((await ask(clientOf(server.url), 'the plan')).content).toBe('moved');
    expect(server.seen.map((s) => `${s.method} ${s.path}`)).toEqual(['POST /v1/chat/completions', 'POST /v2/chat/completions', 'POST /v3/chat/completions']);
    expect(new Set(server.seen.map((s) => s.body)).size).toBe(1);
    expect(server.seen.every((s) => s.authorization === `Bearer ${KEY}`)).toBe(true);
  });

  it('never follows a redirect to another host (the key would go with it), and says where it points', async () => {
    const elsewhere = await rawServer(answerWith('should not be reached'));
    const server = await rawServer((_req, res) => void res.writeHead(308, { location: `${elsewhere.origin}/v1/chat/completions?token=abc` }).end());
    const error = await failureOf(ask(clientOf(server.url, 2)));

    expect(elsewhere.seen).toHaveLength(0);
    expect(error).toMatchObject({ kind: 'bad_request', retryable: false, status: 308 });
    expect(error.message).toBe(`route "local": the endpoint redirects elsewhere (HTTP 308 to ${elsewhere.origin}); set the route's base_url to the address it should call`);
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

  it('reads a compressed reply a server sends without being asked', async () => {
    const server = await rawServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      res.end(gzipSync(completion('unzipped')));
    });
    expect((await ask(clientOf(server.url))).content).toBe('unzipped');
  });
});
