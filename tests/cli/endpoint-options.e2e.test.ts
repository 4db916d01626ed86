import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startChatServer, type ChatServer } from '../fakes/chat-server.js';
import { runCli } from '../fakes/cli.js';
import { tempWorkspace } from '../fakes/fixtures.js';

// Issue 10 item 8: the route options the README's endpoint examples rely on.
let ws: Awaited<ReturnType<typeof tempWorkspace>>;
let server: ChatServer;
beforeEach(async () => {
  ws = await tempWorkspace();
  server = await startChatServer();
});
afterEach(async () => {
  await server.close();
  await ws.cleanup();
});

const KEY = 'azure-test-key-3f9a1c';
const run = async (route: Record<string, unknown>, env: Record<string, string> = {}) => {
  await writeFile(
    path.join(ws.dir, 'maestro.config.json'),
    JSON.stringify({
      default_route: 'r',
      routes: { r: { provider: 'openai', model: 'test-model', base_url: server.url, max_retries: 0, ...route } },
    }),
  );
  await writeFile(
    path.join(ws.dir, 'task.json'),
    JSON.stringify({ task_description: 'Review the rollout plan', config: { max_rounds: 1 } }),
  );
  return runCli(['run', 'task.json', '--json'], { cwd: ws.dir, env });
};

describe('endpoint options', () => {
  it('Azure OpenAI style: api-version on every request and the key in the api-key header', async () => {
    const r = await run(
      { default_query: { 'api-version': '2024-10-21' }, api_key_env: 'AZURE_OPENAI_API_KEY', api_key_header: 'api-key' },
      { AZURE_OPENAI_API_KEY: KEY },
    );
    expect(r.code, r.stderr).toBe(0);
    for (const req of server.chatRequests()) {
      expect(req.query).toContain('api-version=2024-10-21');
      expect(req.headers['api-key']).toBe(KEY);
    }
  });

  it('a local server needs no key', async () => {
    const r = await run({}, { OPENAI_API_KEY: '' });
    expect(r.code, r.stderr).toBe(0);
  });

  it.each(['unix:/run/llm.sock', 'ftp://127.0.0.1/v1'])(
    'a base_url that is not http(s) (%s) is refused as invalid config (exit 2), naming it, before any call',
    async (url) => {
      const r = await run({ base_url: url });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`route "r": its base_url (${url}) is not an http:// or https:// address`);
      expect(server.chatRequests()).toHaveLength(0);
    },
  );

  it('an invalid route option is refused as invalid config (exit 2), before any call', async () => {
    const r = await run({ default_query: { 'api version!': 'x' } });
    expect(r.code).toBe(2);
    expect(server.chatRequests()).toHaveLength(0);
  });
});
