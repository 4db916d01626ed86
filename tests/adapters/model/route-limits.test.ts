import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { OpenAiLlmClient } from '../../../src/adapters/model/openai-llm-client.js';
import { RouteLimiter } from '../../../src/adapters/model/route-limiter.js';
import type { LlmRequest, RouteWait } from '../../../src/domain/ports.js';
import { Route, type ResolvedRoute } from '../../../src/domain/route.js';
import { failureOf } from '../../helpers/llm-failure.js';
import { type ChatHandler, type ChatReply, type ChatServer, startChatServer } from '../../fakes/chat-server.js';

// Route limits, counted where they matter: at a real chat-completions server on 127.0.0.1.

let server: ChatServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A server that answers after `delayMs`, noting when each request arrived and the most it had in hand at once. */
async function countingServer(delayMs: number, first?: (...args: Parameters<ChatHandler>) => ChatReply | undefined) {
  const seen = { arrivals: [] as number[], inFlight: 0, peak: 0 };
  server = await startChatServer(async (body, n, request) => {
    seen.arrivals.push(Date.now());
    const special = first ? await first(body, n, request) : undefined;
    if (special) return special;
    seen.inFlight += 1;
    seen.peak = Math.max(seen.peak, seen.inFlight);
    await sleep(delayMs);
    seen.inFlight -= 1;
    return { content: 'fine', usage: { prompt_tokens: 10, completion_tokens: 5 } };
  });
  return seen;
}

function route(overrides: Partial<Route>): ResolvedRoute {
  const parsed = Route.parse({ provider: 'openai', model: 'm', base_url: server?.url, max_retries: 2, timeout_ms: 5_000, ...overrides });
  return { ...parsed, id: 'local', locality: 'local' };
}

const request: LlmRequest = { messages: [{ role: 'user', content: 'Give your analysis of the plan.' }] };

/** The most requests that arrived within any `windowMs` (the server's own count). */
function mostInAnyWindow(arrivals: number[], windowMs: number): number {
  const sorted = [...arrivals].sort((a, b) => a - b);
  let most = 0;
  for (let i = 0; i < sorted.length; i++) {
    let j = i;
    while (j < sorted.length && (sorted[j] as number) - (sorted[i] as number) < windowMs) j++;
    most = Math.max(most, j - i);
  }
  return most;
}

describe('route limits at a real endpoint', () => {
  it('never has more than max_concurrency calls in flight at the server, across clients of the route', async () => {
    const seen = await countingServer(60);
    const r = route({ max_concurrency: 3 });
    const limiter = new RouteLimiter(r.id, { maxConcurrency: 3 });
    // Two clients (two runs) of the same route share its limiter.
    const clients = [
      new OpenAiLlmClient({ route: r, apiKey: undefined, limiter }),
      new OpenAiLlmClient({ route: r, apiKey: undefined, limiter }),
    ];
    const waits: RouteWait[] = [];
    const replies = await Promise.all(
      Array.from({ length: 12 }, (_, i) => clients[i % 2]?.complete(request, { onWait: (w) => w && waits.push(w) })),
    );
    expect(replies.every((reply) => reply?.content === 'fine')).toBe(true);
    expect(seen.arrivals).toHaveLength(12);
    expect(seen.peak).toBe(3);
    expect(waits.length).toBeGreaterThan(0);
    expect(waits.every((w) => w.route === 'local' && w.limit === 'max_concurrency')).toBe(true);
  });

  it('never sends more than requests_per_minute in any window, counted at the server', async () => {
    const seen = await countingServer(20);
    const r = route({ requests_per_minute: 4 });
    const limiter = new RouteLimiter(r.id, { requestsPerMinute: 4, windowMs: 400 });
    const llm = new OpenAiLlmClient({ route: r, apiKey: undefined, limiter });
    const started = Date.now();
    await Promise.all(Array.from({ length: 10 }, () => llm.complete(request, {})));
    expect(seen.arrivals).toHaveLength(10);
    expect(mostInAnyWindow(seen.arrivals, 400)).toBe(4);
    // Ten requests at four a window need at least two more windows after the first.
    expect(Date.now() - started).toBeGreaterThanOrEqual(800);
  });

  it('counts tokens_per_minute as prompt plus max_output_tokens before a call, then as the endpoint says', async () => {
    const seen = await countingServer(10);
    const r = route({ tokens_per_minute: 40, max_output_tokens: 5 });
    const limiter = new RouteLimiter(r.id, { tokensPerMinute: 40, windowMs: 300 });
    const llm = new OpenAiLlmClient({ route: r, apiKey: undefined, limiter });
    // Each call is reserved ~16 tokens and uses 15 by the server's count: two fit a window, the third waits.
    const started = Date.now();
    await Promise.all(Array.from({ length: 6 }, () => llm.complete(request, {})));
    expect(seen.arrivals).toHaveLength(6);
    expect(mostInAnyWindow(seen.arrivals, 300)).toBe(2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(600);
  });

  it('fails a call that could never fit tokens_per_minute, without sending it', async () => {
    const seen = await countingServer(10);
    const llm = new OpenAiLlmClient({ route: route({ tokens_per_minute: 5 }), apiKey: undefined });
    const failure = await failureOf(llm.complete(request, {}));
    expect(failure).toMatchObject({ kind: 'bad_request' });
    expect(failure.message).toContain('tokens_per_minute (5)');
    expect(seen.arrivals).toEqual([]);
  });

  it("slows the whole route after a 429's retry-after, not only the call that got it", async () => {
    const pauseMs = 500;
    const seen = await countingServer(10, (_b, n) =>
      n === 1
        ? { status: 429, error: { message: 'slow down', type: 'rate_limit' }, headers: { 'retry-after-ms': String(pauseMs) } }
        : undefined,
    );
    const r = route({});
    const limiter = new RouteLimiter(r.id, {});
    const first = new OpenAiLlmClient({ route: r, apiKey: undefined, limiter });
    const other = new OpenAiLlmClient({ route: r, apiKey: undefined, limiter });
    const firstCall = first.complete(request, {});
    while (seen.arrivals.length === 0) await sleep(2);
    await sleep(50);
    // Another run's call, after the 429: it waits out the same pause.
    const waits: RouteWait[] = [];
    await Promise.all([firstCall, other.complete(request, { onWait: (w) => w && waits.push(w) })]);
    const [refused, ...after] = seen.arrivals as [number, ...number[]];
    expect(after).toHaveLength(2);
    for (const t of after) expect(t - refused).toBeGreaterThanOrEqual(pauseMs - 5);
    expect(waits[0]).toMatchObject({ route: 'local', limit: 'retry_after' });
  });

  it('gives up waiting when the run is stopped, sending nothing', async () => {
    const seen = await countingServer(300);
    const r = route({ max_concurrency: 1 });
    const llm = new OpenAiLlmClient({ route: r, apiKey: undefined });
    const busy = llm.complete(request, {});
    const stop = new AbortController();
    const waiting = llm.complete(request, {}, stop.signal);
    await sleep(50);
    stop.abort(new Error('the watcher is stopping'));
    await expect(waiting).rejects.toThrow('the watcher is stopping');
    await busy;
    expect(seen.arrivals).toHaveLength(1);
  });
});
