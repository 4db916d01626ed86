import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../fakes/cli.js';
import { councilHandler, startChatServer, type ChatHandler, type ChatServer } from '../fakes/chat-server.js';
import {
  type CliProcess,
  waitFor,
  dropCommand,
  listDir,
  readAuditLogs,
  readRunState,
  task,
  useWatchScope,
  watch,
} from '../helpers/watch-workspace.js';

// Issue 25: the endpoint goes down while the watcher runs, then comes back.
const { workspace, started, defer } = useWatchScope();

async function configure(ws: string, url: string, extra: Record<string, unknown> = {}): Promise<void> {
  const route = { provider: 'openai', model: 'test-model', base_url: url, max_retries: 0, timeout_ms: 3000 };
  await writeFile(path.join(ws, 'maestro.config.json'), JSON.stringify({ default_route: 'local', routes: { local: route }, ...extra }));
}

/** The council proceeds, except on the task that names VENDOR-DOUBT: there it escalates (a pause that judges the task). */
const proceeds = councilHandler();
const doubts = councilHandler({ verdict: { action: 'escalate', confidence: 0.9, rationale: 'a person must choose the vendor' } });
const handler: ChatHandler = (body, n, request) =>
  (JSON.stringify(body.messages).includes('VENDOR-DOUBT') ? doubts : proceeds)(body, n, request);

async function endpoint(port?: number): Promise<ChatServer> {
  const server = await startChatServer(handler, port === undefined ? {} : { port });
  defer(() => server.close());
  return server;
}

/** Commands dropped once the endpoint is down: the first is paused by the outage, the others wait queued behind it. */
const COMMANDS = 4;

const finishedOf = (w: CliProcess, prefix: string) =>
  w.events.filter((e) => e.kind === 'finished' && String(e.source).startsWith(prefix)) as Array<Record<string, unknown>>;

async function statusJson(ws: string): Promise<Record<string, unknown>> {
  return JSON.parse((await runCli(['status', '--json', '--workspace', ws])).stdout) as Record<string, unknown>;
}

/** How often the watcher's breaker probed the route since it went down (`.maestro/route-health.json`). */
async function probesOf(ws: string, route: string): Promise<number> {
  const health = JSON.parse(await readFile(path.join(ws, '.maestro', 'route-health.json'), 'utf8')) as {
    down: Record<string, { probes: number }>;
  };
  return health.down[route]?.probes ?? 0;
}

describe('a route that goes down and comes back (circuit breaker, end to end)', () => {
  it('keeps commands queued while the endpoint is down, runs them all when it is back, and resumes only the run its outage paused', async () => {
    const ws = await workspace();
    const first = await endpoint();
    const port = Number(new URL(first.url).port);
    await configure(ws, first.url);
    const watcher = started(watch(ws));
    await watcher.waitForEvent('the watcher to start', (e) => e.kind === 'started');

    // A pause that judges the task (not an outage): it must still wait for a person afterwards.
    await dropCommand(ws, 'unclear.json', task('Decide the vendor for VENDOR-DOUBT'));
    const judged = await watcher.waitForEvent('the judgement pause', (e) => e.kind === 'finished' && e.source === 'unclear.json');
    expect(judged.status).toBe('paused');

    await first.close();
    for (let i = 1; i <= COMMANDS; i++)
      await dropCommand(ws, `c${String(i).padStart(2, '0')}.json`, task(`Choose the cache for service ${i}`));
    const outage = await watcher.waitForEvent('the outage pause', (e) => e.kind === 'finished' && String(e.source).startsWith('c'));
    expect(outage.status).toBe('paused');
    const outageRun = String(outage.run_id);
    expect(((await readRunState(ws, outageRun)) as { pause?: unknown }).pause).toMatchObject({
      outage: { route: 'local', failure: 'network' },
    });

    // While it is down: nothing else is claimed, even once the watcher probed it again and found it
    // still down (1 s after the outage), and status says which route, since when, and what waits.
    await waitFor('a failed probe', async () => (await probesOf(ws, 'local')) >= 1);
    expect(finishedOf(watcher, 'c')).toHaveLength(1);
    expect(watcher.events.filter((e) => e.kind === 'claimed' && String(e.source).startsWith('c'))).toHaveLength(1);
    expect(await listDir(path.join(ws, 'commands'))).toHaveLength(COMMANDS - 1);
    const status = await statusJson(ws);
    const down = (status.routes_down as Array<Record<string, unknown>>)[0];
    expect(down).toMatchObject({ route: 'local', failure: 'network' });
    expect(typeof down?.since).toBe('string');
    expect(down?.queued).toHaveLength(COMMANDS - 1);
    expect((status.paused as Array<Record<string, unknown>>).filter((p) => p.outage_route === 'local')).toHaveLength(1);

    // Back where it was: every command runs once, the outage's pause resumes on its own.
    await endpoint(port);
    await waitFor(
      'every command completed',
      () =>
        new Set(
          finishedOf(watcher, 'c')
            .filter((e) => e.status === 'completed')
            .map((e) => e.source),
        ).size === COMMANDS || undefined,
      90_000,
    ).catch((error: unknown) => {
      throw new Error(`${(error as Error).message}\n${watcher.lines.join('\n')}\n${watcher.stderr.join('')}`);
    });
    const done = finishedOf(watcher, 'c');
    expect(
      done.filter((e) => e.status === 'paused'),
      JSON.stringify(done.map((e) => [e.source, e.status, e.reason_code])),
    ).toHaveLength(1);
    expect(done.filter((e) => e.status === 'completed')).toHaveLength(COMMANDS);
    expect(done.find((e) => e.run_id === outageRun && e.status === 'completed')).toBeDefined();
    expect(await listDir(path.join(ws, 'commands'))).toEqual([]);
    const decided = (await readAuditLogs(ws)).get(outageRun)?.find((r) => r.event === 'OUTAGE_RESUMED');
    expect(decided).toMatchObject({ final_decider: 'SYSTEM', reason_code: 'ROUTE_RECOVERED' });
    // The watcher says the run resumed after the outage, not that a person decided it.
    expect(watcher.events.filter((e) => e.kind === 'claimed' && e.run_id === outageRun).at(-1)).toMatchObject({ resume: 'outage' });

    // The judgement pause still waits for a person.
    expect((await readRunState(ws, String(judged.run_id))).status).toBe('paused');
    expect(((await statusJson(ws)).routes_down as unknown[]).length).toBe(0);
    watcher.kill('SIGTERM');
    expect((await watcher.exited).code).toBe(0);
  }, 150_000);
});
