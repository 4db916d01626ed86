import { readFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../fakes/cli.js';
import { tempWorkspace } from '../fakes/fixtures.js';

// Issue 38, point 7: every pause is posted to the workspace's webhook, recorded in the run's audit
// log; a webhook that fails never changes how the run ends.
let server: http.Server | undefined;
let ws: Awaited<ReturnType<typeof tempWorkspace>> | undefined;
afterEach(async () => {
  server?.close();
  await ws?.cleanup();
});

async function webhook(status: number): Promise<{ url: string; bodies: string[] }> {
  const bodies: string[] = [];
  server = http.createServer((req, res) => {
    let text = '';
    req.on('data', (d: Buffer) => (text += d.toString()));
    req.on('end', () => {
      bodies.push(text);
      res.statusCode = status;
      res.end();
    });
  });
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, bodies };
}

const TASK = 'The requirements are unclear: choose the message queue for the Zanzibar billing project';

async function pausedRun(config: Record<string, unknown>) {
  ws = await tempWorkspace({ 'maestro.config.json': JSON.stringify(config), 'task.json': JSON.stringify({ task_description: TASK }) });
  const run = await runCli(['run', 'task.json', '--json'], { cwd: ws.dir });
  const outcome = JSON.parse(run.stdout) as { run_id: string; status: string; audit_log: string };
  const records = (await readFile(outcome.audit_log, 'utf8'))
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { event: string; details?: Record<string, unknown> });
  return { run, outcome, records };
}

describe('notifications of pauses', () => {
  it('posts a pause to the webhook with the console link, and records the delivery in the run’s audit log', async () => {
    const hook = await webhook(204);
    const { run, outcome, records } = await pausedRun({ notify: { webhook_url: hook.url }, ui: { url: 'https://maestro.example.org/' } });
    expect(run.code).toBe(3);
    expect(hook.bodies).toHaveLength(1);
    const message = JSON.parse(hook.bodies[0] as string) as Record<string, unknown>;
    expect(message).toMatchObject({
      event: 'run_paused',
      run_id: outcome.run_id,
      link: `https://maestro.example.org/runs/${outcome.run_id}`,
    });
    expect(hook.bodies[0]).not.toContain('Zanzibar');
    expect(records.find((r) => r.event === 'NOTIFY_SENT')?.details).toMatchObject({ attempts: 1, status: 204 });
    expect((await runCli(['audit', 'verify', outcome.run_id], { cwd: ws?.dir })).code).toBe(0);
  });

  it('ends the run exactly as without a webhook when the webhook keeps failing, and records that it was not told', async () => {
    const hook = await webhook(500);
    const { run, outcome, records } = await pausedRun({ notify: { webhook_url: hook.url, attempts: 2, format: 'slack' } });
    expect(run.code).toBe(3);
    expect(outcome.status).toBe('paused');
    expect(hook.bodies).toHaveLength(2);
    expect(JSON.parse(hook.bodies[0] as string)).toEqual({ text: expect.stringContaining(`run ${outcome.run_id} waits for a person`) });
    expect(records.find((r) => r.event === 'NOTIFY_FAILED')?.details).toMatchObject({ attempts: 2, last: 'HTTP 500' });
  });
});
