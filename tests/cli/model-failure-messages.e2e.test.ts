import { createServer } from 'node:net';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { startChatServer } from '../fakes/chat-server.js';
import { runCli } from '../fakes/cli.js';
import { workspaceAndServer } from '../helpers/server-workspace.js';

// Issue 10 item 5: every model failure names the route, the host, the status or errno, the attempts,
// and what to try; a refused connection is not a "server error".
const t = workspaceAndServer();

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as { port: number };
  await new Promise((r) => s.close(r));
  return port;
}
async function runAgainst(baseUrl: string, maxRetries = 1) {
  await writeFile(
    path.join(t.ws.dir, 'maestro.config.json'),
    JSON.stringify({
      default_route: 'local',
      routes: { local: { provider: 'openai', model: 'test-model', base_url: baseUrl, max_retries: maxRetries, timeout_ms: 5000 } },
    }),
  );
  await writeFile(
    path.join(t.ws.dir, 'task.json'),
    JSON.stringify({ task_description: 'Choose the cache for the billing service', config: { max_rounds: 1 } }),
  );
  const r = await runCli(['run', 'task.json', '--json'], { cwd: t.ws.dir });
  const out = JSON.parse(r.stdout);
  const log = (await readFile(out.audit_log, 'utf8'))
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  return { r, out, pause: log.find((x) => x.event === 'HITL_REQUESTED') };
}

describe('model failures a person can act on', () => {
  it('a refused connection: route, host:port, ECONNREFUSED, attempts, what to try — MODEL_UNREACHABLE, not a server error', async () => {
    const port = await freePort();
    const { r, out, pause } = await runAgainst(`http://127.0.0.1:${port}/v1`);
    expect(r.code).toBe(3);
    // The first call to fail is the mediator's classification, before any persona: the run pauses there.
    expect(out.reason_code).toBe('MEDIATOR_CLASSIFICATION_FAILED');
    expect(r.stderr).toContain('route "local"');
    expect(r.stderr).toContain(`127.0.0.1:${port}`);
    expect(r.stderr).toContain('ECONNREFUSED');
    expect(r.stderr).toMatch(/after 1 retry/);
    expect(r.stderr).toContain('is the server running');
    expect(r.stderr).not.toMatch(/server error/i);
    expect(pause.details).toMatchObject({ failure: 'network', route: 'local', pause_class: 'outage' });
  });

  it('an HTTP 503: the status, the attempts and the hint; the audit record carries the status, never a body', async () => {
    t.server = await startChatServer(() => ({
      status: 503,
      error: { message: 'upstream body text', type: 'server_error', code: 'unavailable' },
      headers: { 'retry-after-ms': '1' },
    }));
    const { r, pause } = await runAgainst(t.server.url, 2);
    expect(r.stderr).toMatch(/HTTP 503/);
    expect(r.stderr).toMatch(/after 2 retries/);
    expect(r.stderr).toContain('fallback_route');
    expect(pause.details).toMatchObject({ failure: 'server', http_status: 503, route: 'local' });
    expect(JSON.stringify(pause)).not.toContain('upstream body text');
  });
});
