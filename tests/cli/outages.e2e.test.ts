import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { councilHandler, HARMLESS, startChatServer, type ChatHandler, type ChatServer } from '../fakes/chat-server.js';
import { runCli } from '../fakes/cli.js';
import { tempWorkspace } from '../fakes/fixtures.js';

// Issue 10 item 4: an outage is not the council's doubt.
let ws: Awaited<ReturnType<typeof tempWorkspace>>;
const servers: ChatServer[] = [];
beforeEach(async () => {
  ws = await tempWorkspace();
});
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
  await ws.cleanup();
});

const down: ChatHandler = () => ({
  status: 503,
  error: { message: 'down', type: 'server_error', code: 'unavailable' },
  headers: { 'retry-after-ms': '1' },
});
/** A server whose handler can be swapped, like an endpoint that comes back. A server that is down is down for every request, the mediator's classification too. */
async function endpoint(handler: ChatHandler): Promise<{ server: ChatServer; set: (h: ChatHandler) => void }> {
  let current = handler;
  const server = await startChatServer((body, n, request) => current(body, n, request), {
    classify: (body, n, request) => (current === down ? down(body, n, request) : HARMLESS(body, n, request)),
  });
  servers.push(server);
  return { server, set: (h) => (current = h) };
}
async function configure(routes: Record<string, string>, fallback?: string): Promise<void> {
  await writeFile(
    path.join(ws.dir, 'maestro.config.json'),
    JSON.stringify({
      default_route: Object.keys(routes)[0],
      routes: Object.fromEntries(
        Object.entries(routes).map(([id, url]) => [
          id,
          { provider: 'openai', model: 'test-model', base_url: url, max_retries: 0, timeout_ms: 5000 },
        ]),
      ),
    }),
  );
  if (!fallback) return;
  for (const name of await readdir(path.join(ws.dir, 'personas'))) {
    const file = path.join(ws.dir, 'personas', name);
    await writeFile(file, (await readFile(file, 'utf8')).replace(/^weight: 1$/m, `weight: 1\nfallback_route: ${fallback}`));
  }
}
const run = async (task: Record<string, unknown>) => {
  await writeFile(path.join(ws.dir, 'task.json'), JSON.stringify(task));
  const r = await runCli(['run', 'task.json', '--json'], { cwd: ws.dir });
  return { code: r.code, out: JSON.parse(r.stdout), stderr: r.stderr };
};
const records = async (file: string) =>
  (await readFile(file, 'utf8'))
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));

describe("an outage is not the council's doubt", () => {
  it('five outages on one task never advance the loop policy; when the endpoint is back the task completes', async () => {
    const e = await endpoint(down);
    await configure({ local: e.server.url });
    const task = { task_description: 'Choose the cache for the billing service', config: { max_rounds: 1, conflict_key: 'cache-choice' } };
    for (let i = 0; i < 5; i++) {
      const r = await run(task);
      expect(r.code, r.stderr).toBe(3);
      const log = await records(r.out.audit_log);
      expect(log.find((x) => x.event === 'HITL_REQUESTED')?.details.pause_class).toBe('outage');
      expect(log.some((x) => x.reason_code === 'ACC_END_SESSION_AFTER_4_HITL' || x.event.startsWith('LOOP'))).toBe(false);
    }
    // An outage's pause says it resumes by itself once its route answers (resume_after_outage, on by default).
    const last = await runCli(['hitl', 'show', (await run(task)).out.run_id], { cwd: ws.dir });
    expect(last.stdout).toContain('On its own this pause resumes by itself once route "local" answers again');
    e.set(councilHandler());
    const healthy = await run(task);
    expect(healthy.code).toBe(0);
    expect(healthy.out.status).toBe('completed');
  });

  it('through maestro watch --once: an outage pauses one run, never counted, and the other commands wait; back up, all complete', async () => {
    const e = await endpoint(down);
    await configure({ local: e.server.url });
    const task = (n: number) => ({
      task_description: `Choose the cache for the billing service (try ${n})`,
      config: { max_rounds: 1, conflict_key: 'cache-choice' },
    });
    const watchOnce = async () => {
      const r = await runCli(['watch', '--once', '--json'], { cwd: ws.dir });
      expect(r.code, r.stderr).toBe(0);
      return r.stdout
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .filter((x) => x.kind === 'finished');
    };
    for (let n = 1; n <= 5; n++) await writeFile(path.join(ws.dir, 'commands', `c${n}.json`), JSON.stringify(task(n)));
    // Issue 25: the route's breaker opens on the first outage; the other commands are not claimed into paused runs.
    const outages = await watchOnce();
    expect(outages.map((x) => [x.source, x.status])).toEqual([['c1.json', 'paused']]);
    expect((await readdir(path.join(ws.dir, 'commands'))).sort()).toEqual(['c2.json', 'c3.json', 'c4.json', 'c5.json']);
    const log = await records(String(outages[0]?.audit_log));
    expect(log.find((r) => r.event === 'HITL_REQUESTED')?.details.pause_class).toBe('outage');
    expect(
      log.some((r) => r.reason_code === 'ACC_END_SESSION_AFTER_4_HITL' || r.event.startsWith('LOOP') || r.event.startsWith('K_')),
    ).toBe(false);
    const session = JSON.parse((await runCli(['session', 'show', '--json'], { cwd: ws.dir })).stdout);
    expect(session.conflicts).toEqual([]);

    // Back up: the paused run resumes on its own, the waiting commands and a new one complete.
    e.set(councilHandler());
    await writeFile(path.join(ws.dir, 'commands', 'c6.json'), JSON.stringify(task(6)));
    const after = await watchOnce();
    expect(after.map((x) => x.status)).toEqual(Array(6).fill('completed'));
    expect(new Set(after.map((x) => x.source))).toEqual(new Set([1, 2, 3, 4, 5, 6].map((n) => `c${n}.json`)));
  });

  it('after one REROUTE the fallback serves the rest of the run for every persona on the dead route', async () => {
    const dead = await endpoint(down);
    const backup = await endpoint(councilHandler());
    await configure({ primary: dead.server.url, backup: backup.server.url }, 'backup');
    const r = await run({ task_description: 'Choose the cache for the billing service', config: { max_rounds: 2 } });
    expect(r.code, r.stderr).toBe(0);
    const log = await records(r.out.audit_log);
    expect(log.filter((x) => x.event === 'REROUTE')).toHaveLength(1);
    // The first call of the run is the mediator's classification: it fails on the dead route and is rerouted like any persona's.
    expect(dead.server.classifyRequests).toHaveLength(1);
    expect(backup.server.classifyRequests).toHaveLength(1);
    expect(dead.server.chatRequests()).toHaveLength(0); // nobody asks the dead route again
    expect(backup.server.chatRequests()).toHaveLength(3 * 2 + 3 + 1);
  });

  it('after a REROUTE mid-run, runs, runs --json and show name which route and model served which calls', async () => {
    const council = councilHandler();
    // The primary answers the first two council calls, then goes down.
    const flaky = await endpoint((body, n, request) => (n <= 2 ? council(body, n, request) : down(body, n, request)));
    const backup = await endpoint(councilHandler());
    await configure({ primary: flaky.server.url, backup: backup.server.url }, 'backup');
    const r = await run({ task_description: 'Choose the cache for the billing service', config: { max_rounds: 1 } });
    expect(r.code, r.stderr).toBe(0);
    const listed = JSON.parse((await runCli(['runs', '--json'], { cwd: ws.dir })).stdout) as Array<Record<string, unknown>>;
    const row = listed.find((x) => x.run_id === r.out.run_id);
    // The primary served the mediator's classification (a model call like any other) and the first two council calls.
    expect(flaky.server.classifyRequests).toHaveLength(1);
    expect(row?.served_by).toEqual([
      { route: 'primary', model: 'primary/test-model', calls: 3 },
      { route: 'backup', model: 'backup/test-model', calls: 5 },
    ]);
    expect(row?.calls).toBe(8);
    const label = 'primary/test-model (3 calls) → backup/test-model (5 calls)';
    expect(row?.model).toBe(label);
    expect((await runCli(['runs'], { cwd: ws.dir })).stdout).toContain(label);
    const shown = (await runCli(['show', r.out.run_id, '--raw'], { cwd: ws.dir })).stdout;
    expect(shown).toContain(`- Model: ${label}`);
  });

  it('a refused connection on the primary: the fallback takes the classification and the council (issue 10: 0 of 9 runs completed before)', async () => {
    const backup = await endpoint(councilHandler());
    await configure({ primary: 'http://127.0.0.1:9/v1', backup: backup.server.url }, 'backup');
    const r = await run({ task_description: 'Choose the cache for the billing service', config: { max_rounds: 1 } });
    expect(r.code, r.stderr).toBe(0);
    expect(backup.server.classifyRequests).toHaveLength(1);
    expect(backup.server.chatRequests()).toHaveLength(3 + 3 + 1);
  });
});
