import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OpenAiLlmClient } from '../../../src/adapters/model/openai-llm-client.js';
import { Route } from '../../../src/domain/route.js';
import { parseVerdict, VERDICT_SCHEMA } from '../../../src/domain/verdict.js';
import { startChatServer, type ChatServer } from '../../fakes/chat-server.js';
import { expectReading, REPLY_CORPUS } from '../../fixtures/reply-corpus.js';

// The corpus again, this time as the body of a real chat completion: through the openai SDK over
// HTTP (JSON and server-sent events) to the adapter, then the reader.

let server: ChatServer;
let reply = '';
beforeAll(async () => {
  server = await startChatServer(() => ({ content: reply }));
});
afterAll(async () => {
  await server.close();
});

function client(stream: boolean): OpenAiLlmClient {
  const route = Route.parse({ provider: 'openai', model: 'test-model', base_url: server.url, max_retries: 0, timeout_ms: 2_000, stream });
  return new OpenAiLlmClient({ route: { ...route, id: 'local', locality: 'local' }, apiKey: undefined });
}

describe.each([false, true])('the reply corpus through the real SDK (stream: %s)', (stream) => {
  it.each(REPLY_CORPUS.map((e) => [e.name, e] as const))('%s', async (_name, entry) => {
    reply = entry.reply;
    const answer = await client(stream).complete({
      responseFormat: VERDICT_SCHEMA,
      messages: [{ role: 'user', content: 'Give your verdict as ONE JSON object.' }],
    });
    expect(answer.content).toBe(entry.reply);
    expectReading(parseVerdict('auditor', answer.content), entry.reading);
    expect(server.requests.at(-1)?.body?.response_format?.type).toBe('json_schema');
  });
});
