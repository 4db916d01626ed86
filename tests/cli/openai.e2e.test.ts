import { readFileSync } from 'node:fs';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli, spawnCli } from '../fakes/cli.js';
import { councilHandler, startChatServer, type ChatHandler, type ChatServer, readingReply } from '../fakes/chat-server.js';

/** What the mediator's classification answers when it finds nothing to flag. */
const HARMLESS_ADVICE = readingReply();
import { REPO_ROOT, tempWorkspace } from '../fakes/fixtures.js';

const FIXTURES = path.join(REPO_ROOT, 'tests', 'fixtures');

const KEY = 'sk-test-Zq8XbN4mK2pL9vR7tY3wE6uI1oA5sD0f';
let ws: Awaited<ReturnType<typeof tempWorkspace>>;
const servers: ChatServer[] = [];
beforeEach(async () => {
  ws = await tempWorkspace();
});
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
  await ws.cleanup();
});

async function server(handler?: ChatHandler, options?: Parameters<typeof startChatServer>[1]): Promise<ChatServer> {
  const s = await startChatServer(handler, options);
  servers.push(s);
  return s;
}

interface RouteSpec {
  url: string;
  extra?: Record<string, unknown>;
}

async function configure(routes: Record<string, RouteSpec>, extra: Record<string, unknown> = {}, fallback?: string): Promise<void> {
  const config = {
    default_route: Object.keys(routes)[0],
    routes: Object.fromEntries(
      Object.entries(routes).map(([id, r]) => [
        id,
        { provider: 'openai', model: 'test-model', base_url: r.url, api_key_env: 'TEST_KEY', max_retries: 1, timeout_ms: 5000, ...r.extra },
      ]),
    ),
    ...extra,
  };
  await writeFile(path.join(ws.dir, 'maestro.config.json'), JSON.stringify(config, null, 2));
  if (fallback) {
    for (const name of await readdir(path.join(ws.dir, 'personas'))) {
      const file = path.join(ws.dir, 'personas', name);
      await writeFile(file, (await readFile(file, 'utf8')).replace(/^weight: 1$/m, `weight: 1\nfallback_route: ${fallback}`));
    }
  }
}

const task = (o: Record<string, unknown> = {}) =>
  writeFile(
    path.join(ws.dir, 'task.json'),
    JSON.stringify({ task_description: 'Choose the cache for the billing service', output_artifact_path: 'outputs/task.md', ...o }),
  );
const run = (...extra: string[]) => runCli(['run', 'task.json', '--json', ...extra], { cwd: ws.dir, env: { TEST_KEY: KEY } });
const audit = async (file: string) =>
  (await readFile(file, 'utf8'))
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);

async function everyFile(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => path.join(e.parentPath, e.name));
}

describe('the openai provider through the real SDK and a chat-completions server on 127.0.0.1', () => {
  it.each([false, true])('runs a full 3-persona council (stream: %s) with usage in the artifact and the audit log', async (stream) => {
    const usage = { prompt_tokens: 100, completion_tokens: 20 };
    const s = await server(councilHandler({ usage }), { classify: () => ({ content: HARMLESS_ADVICE, usage }) });
    await configure(
      { local: { url: s.url, extra: { stream } } },
      { prices: { 'test-model': { prompt_per_mtok: 1000, completion_per_mtok: 2000 } } },
    );
    await task();
    const r = await run();
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.status).toBe('completed');
    expect(s.chatRequests()).toHaveLength(13);
    expect(s.chatRequests().every((q) => q.headers.authorization === `Bearer ${KEY}`)).toBe(true);
    expect(s.chatRequests().every((q) => Boolean(q.body?.stream) === stream)).toBe(true);
    // Verdicts ask for JSON through response_format, with the verdict's JSON Schema.
    expect(s.chatRequests().filter((q) => q.body?.response_format?.type === 'json_schema')).toHaveLength(3);
    const artifact = await readFile(path.join(ws.dir, 'outputs', 'task.md'), 'utf8');
    expect(artifact).toContain('local/test-model');
    expect(artifact).not.toContain('OFFLINE REHEARSAL');
    // The mediator's classification is a model call like the council's: the report counts what the server saw.
    expect(s.classifyRequests).toHaveLength(1);
    // Calls, prompt tokens (then where they went: instructions, memory, task, deliberation), cached, completion, cost.
    expect(artifact).toMatch(/\| `\(mediator's classification\)` \| 1 \| 100 \| \d+ \| 0 \| \d+ \| 0 \| 0 \| 20 \| 0\.1400 \|/);
    expect(artifact).toMatch(/\| \*\*total\*\* \| 14 \| 1400 \| \d+ \| 0 \| \d+ \| \d+ \| 0 \| 280 \| 1\.9600 \|/);
    expect(artifact).toContain('| Model calls | 14 |');
    // Its gate names the model that classified, not the offline model.
    expect(artifact).toContain('MEDIATOR_ADVICE_CLEAR');
    expect(artifact).not.toContain('MEDIATOR_NO_ADVICE');
    const calls = (await audit(out.audit_log)).filter((x) => x.event === 'MODEL_CALL');
    expect(calls[0]?.details).toMatchObject({ model: 'local/test-model', prompt_tokens: 100, completion_tokens: 20 });
    const finished = (await audit(out.audit_log)).find((x) => x.event === 'RUN_FINISHED');
    expect(finished?.details).toMatchObject({
      status: 'completed',
      calls: 14,
      prompt_tokens: 1400,
      completion_tokens: 280,
      cost_usd: 1.96,
    });
  });

  it('reroutes to the fallback once when the route keeps failing with 500, and completes', async () => {
    const broken = await server(() => ({
      status: 500,
      error: { message: 'boom', type: 'server_error', code: 'server_error' },
      headers: { 'retry-after-ms': '1' },
    }));
    const backup = await server(councilHandler());
    await configure({ primary: { url: broken.url }, backup: { url: backup.url } }, {}, 'backup');
    await task({ config: { personas: ['coordinator'], max_rounds: 1 } });
    const r = await run();
    expect(r.code).toBe(0);
    const log = await audit(JSON.parse(r.stdout).audit_log);
    const reroutes = log.filter((x) => x.event === 'REROUTE');
    expect(reroutes).toHaveLength(1);
    expect(reroutes[0]).toMatchObject({
      decision: 'REROUTE',
      reason_code: 'MODEL_SERVER_ERROR',
      layer: 'reroute',
      details: { from_route: 'primary', to_route: 'backup' },
    });
    expect(broken.chatRequests()).toHaveLength(2); // max_retries 1: one call, one retry, then the reroute
    expect(backup.chatRequests()).toHaveLength(3); // turn, verdict, synthesis
  });

  it('pauses after the one allowed REROUTE when the fallback fails too', async () => {
    const fail: ChatHandler = () => ({
      status: 503,
      error: { message: 'down', type: 'server_error', code: 'unavailable' },
      headers: { 'retry-after-ms': '1' },
    });
    const a = await server(fail);
    const b = await server(fail);
    await configure({ primary: { url: a.url }, backup: { url: b.url } }, {}, 'backup');
    await task({ config: { personas: ['coordinator'], max_rounds: 1 } });
    const r = await run();
    expect(r.code).toBe(3);
    const out = JSON.parse(r.stdout);
    expect(out).toMatchObject({ status: 'paused', reason_code: 'REROUTE_NOT_ALLOWED' });
    const log = await audit(out.audit_log);
    expect(log.filter((x) => x.event === 'REROUTE')).toHaveLength(1);
    expect(log.find((x) => x.event === 'REROUTE_REFUSED')).toMatchObject({ details: { condition: 'reroute_limit' } });
    expect(r.stderr).toContain('REROUTE was refused (reroute_limit)');
  });

  it('honours the route timeout', async () => {
    const slow = await server(() => ({ delayMs: 10_000 }));
    await configure({ slow: { url: slow.url, extra: { timeout_ms: 300, max_retries: 0 } } });
    await task({ config: { personas: ['coordinator'], max_rounds: 1 } });
    const started = Date.now();
    const r = await run();
    expect(r.code).toBe(3);
    expect(JSON.parse(r.stdout).reason_code).toBe('REROUTE_NOT_ALLOWED');
    expect(r.stderr).toContain('MODEL_TIMEOUT');
    expect(Date.now() - started).toBeLessThan(9_000);
  });

  it('pauses at once on an exhausted quota: one request, no retry, no reroute', async () => {
    const broke = await server(() => ({
      status: 429,
      error: { message: 'You exceeded your current quota', type: 'insufficient_quota', code: 'insufficient_quota' },
    }));
    const backup = await server(councilHandler());
    await configure({ primary: { url: broke.url, extra: { max_retries: 3 } }, backup: { url: backup.url } }, {}, 'backup');
    await task();
    const r = await run();
    expect(r.code).toBe(3);
    expect(JSON.parse(r.stdout).reason_code).toBe('MODEL_QUOTA_EXCEEDED');
    expect(r.stderr).toContain('quota');
    expect(broke.chatRequests()).toHaveLength(1);
    expect(backup.chatRequests()).toHaveLength(0);
  });

  it('asks again once for a malformed verdict, then fails closed', async () => {
    const s = await server(
      councilHandler({
        verdict: (name) =>
          name === 'Auditor' ? '{"action": "proceed", "confidence": "high"}' : { action: 'proceed', confidence: 0.9, rationale: 'ok' },
      }),
    );
    await configure({ local: { url: s.url } });
    await task({ config: { max_rounds: 1, arbitration: 'escalate_on_conflict' } });
    const r = await run();
    expect(r.code).toBe(3);
    const verdictCalls = s.chatRequests().filter((q) => q.body?.response_format?.type === 'json_schema');
    expect(verdictCalls).toHaveLength(4); // coordinator, strategist, auditor, auditor again
    expect(JSON.stringify(verdictCalls[3]?.body?.messages?.at(-1))).toContain('That was not a valid verdict');
    const state = JSON.parse(
      await readFile(path.join(ws.dir, '.maestro', 'runs', JSON.parse(r.stdout).run_id, 'draft.md'), 'utf8').then((t) => JSON.stringify(t)),
    );
    expect(state).toContain('escalate (fail-closed)');
  });

  it('refuses a remote fallback for a local route (sealed: data would leave the machine)', async () => {
    const broken = await server(() => ({
      status: 500,
      error: { message: 'boom', type: 'server_error', code: 'x' },
      headers: { 'retry-after-ms': '1' },
    }));
    await configure({ local: { url: broken.url }, cloud: { url: 'https://api.example.invalid/v1' } }, {}, 'cloud');
    await task({ config: { personas: ['coordinator'], max_rounds: 1 } });
    const r = await run();
    expect(r.code).toBe(4);
    const out = JSON.parse(r.stdout);
    expect(out).toMatchObject({ status: 'stopped', reason_code: 'ACC_PRIVILEGE_ESCALATION' });
    const refused = (await audit(out.audit_log)).find((x) => x.event === 'REROUTE_REFUSED');
    expect(refused).toMatchObject({ layer: 'acc', sealed: true, details: { condition: 'local_to_remote' } });
  });

  it.each([
    [{ max_calls: 4 }, 4, 'max_calls'],
    [{ max_prompt_tokens: 250 }, 3, 'max_prompt_tokens'],
    [{ max_cost_usd: 0.05 }, 6, 'max_cost_usd'], // $0.01 a call: the 6th call crosses $0.05
  ])('pauses loudly when a budget trips (%j) at the right call', async (budget, calls, limit) => {
    const usage = { prompt_tokens: 100, completion_tokens: 10 };
    const s = await server(councilHandler({ usage }), { classify: () => ({ content: HARMLESS_ADVICE, usage }) });
    await configure({ local: { url: s.url } }, { prices: { 'test-model': { prompt_per_mtok: 100, completion_per_mtok: 0 } } });
    await task({ config: { budget } });
    const r = await run();
    expect(r.code).toBe(3);
    expect(JSON.parse(r.stdout).reason_code).toBe('BUDGET_EXCEEDED');
    // Reached before a call (none left: not "4 of 4 allowed" as if exceeded), or gone past after one.
    expect(r.stderr).toContain(limit === 'max_calls' ? 'budget limit reached — model calls: 4 used of 4, none left' : 'over the limit of');
    expect(r.stderr).toContain(`config.budget.${limit}`);
    // The mediator's classification is the first of the calls the budget counts.
    expect(s.classifyRequests).toHaveLength(1);
    expect(s.chatRequests()).toHaveLength(calls - 1);
  });

  it('fails closed on a cost budget with no price for the model, before any call', async () => {
    const s = await server(councilHandler());
    await configure({ local: { url: s.url } });
    await task({ config: { budget: { max_cost_usd: 1 } } });
    const r = await run();
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('no price for test-model');
    expect(s.chatRequests()).toHaveLength(0);
  });

  it('never writes the API key or a request/response body to a log, state file or artifact', async () => {
    const s = await server(councilHandler({ turn: (name) => `${name}: the distinctive-reply-marker is here` }));
    await configure({ local: { url: s.url } });
    await task();
    const r = await run('--record', 'cassette.json');
    expect(r.code).toBe(0);
    expect(r.stdout + r.stderr).not.toContain(KEY);
    for (const file of await everyFile(ws.dir)) {
      if (file.includes(`${path.sep}personas${path.sep}`) || file.includes(`${path.sep}examples${path.sep}`)) continue;
      const text = await readFile(file, 'utf8');
      expect(text, file).not.toContain(KEY);
      expect(text, file).not.toContain('"choices"');
      // Persona memory (session_states/) is the persistent council's history by design; it is not a request body.
      if (!file.includes(`${path.sep}session_states${path.sep}`)) expect(text, file).not.toMatch(/"messages"\s*:\s*\[\s*\{\s*"role"/);
    }
    const auditText = (await Promise.all((await everyFile(path.join(ws.dir, '.maestro', 'audit'))).map((f) => readFile(f, 'utf8')))).join(
      '\n',
    );
    expect(auditText).not.toContain('distinctive-reply-marker');
  });

  it('replays a recorded run with no network and reproduces the artifact (timestamps and run id aside)', async () => {
    const s = await server(councilHandler({ usage: { prompt_tokens: 50, completion_tokens: 5 } }));
    await configure({ local: { url: s.url } });
    await task();
    const cassette = path.join(ws.dir, 'cassette.json');
    expect((await run('--record', cassette)).code).toBe(0);
    const recorded = await readFile(path.join(ws.dir, 'outputs', 'task.md'), 'utf8');
    await s.close();

    const other = await tempWorkspace();
    try {
      await writeFile(path.join(other.dir, 'task.json'), await readFile(path.join(ws.dir, 'task.json')));
      const replay = await runCli(['run', 'task.json', '--json', '--replay', cassette], { cwd: other.dir });
      expect(replay.code).toBe(0);
      const replayed = await readFile(path.join(other.dir, 'outputs', 'task.md'), 'utf8');
      // A replay runs on the rules alone (the mediator's classification is not in a cassette): its call is not in the report.
      expect(recorded).toContain("(mediator's classification)");
      expect(replayed).not.toContain("(mediator's classification)");
      const normalise = (t: string) =>
        t
          .split('\n')
          .filter((l) => !/mediator's classification|\*\*total\*\*|\| Model calls \||MEDIATOR_/.test(l))
          .join('\n')
          .replace(/\d{8}T\d{6}Z-[0-9a-f]{6}/g, 'RUN')
          .replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, 'TS')
          .replace(/\| Duration \| [\d.]+ s \|/, '| Duration | D |');
      expect(normalise(replayed)).toBe(normalise(recorded));
    } finally {
      await other.cleanup();
    }

    // Replayed in the workspace it was recorded in, where the personas now remember the recorded run: the
    // cassette carries the memory the run was recorded with, so the replay asks the same and completes,
    // twice; it adds nothing to persona memory.
    const memory = async () =>
      Promise.all(
        (await readdir(path.join(ws.dir, 'session_states')))
          .sort()
          .map((f) => readFile(path.join(ws.dir, 'session_states', f), 'utf8').catch(() => '')),
      );
    const before = await memory();
    for (let i = 0; i < 2; i++) {
      const same = await runCli(['run', 'task.json', '--json', '--replay', cassette], { cwd: ws.dir });
      expect(same.code, same.stderr).toBe(0);
      expect(JSON.parse(same.stdout).status).toBe('completed');
    }
    expect(await memory()).toEqual(before);
  });
});

describe('an https endpoint', () => {
  const tls = {
    key: readFileSync(path.join(FIXTURES, 'tls', 'endpoint.key'), 'utf8'),
    cert: readFileSync(path.join(FIXTURES, 'tls', 'endpoint.crt'), 'utf8'),
  };

  it('is called over TLS when its private CA is trusted through NODE_EXTRA_CA_CERTS, and refused, saying why, when not', async () => {
    const s = await startChatServer(councilHandler(), { tls });
    servers.push(s);
    expect(s.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+\/v1$/);
    await configure({ local: { url: s.url, extra: { max_retries: 0 } } });
    await task({ config: { personas: ['coordinator'], max_rounds: 1 } });

    const trusted = await spawnCli(['run', 'task.json', '--json'], {
      cwd: ws.dir,
      env: { TEST_KEY: KEY, NODE_EXTRA_CA_CERTS: path.join(FIXTURES, 'tls', 'endpoint.crt') },
    });
    expect(trusted.stderr).toBe('');
    expect(trusted.code).toBe(0);
    expect(JSON.parse(trusted.stdout)).toMatchObject({ status: 'completed' });
    const served = s.chatRequests().length;
    expect(served).toBe(3); // turn, verdict, synthesis

    const untrusted = await spawnCli(['run', 'task.json', '--json'], { cwd: ws.dir, env: { TEST_KEY: KEY, NODE_EXTRA_CA_CERTS: '' } });
    expect(untrusted.code).toBe(3);
    expect(untrusted.stderr).toContain(
      "DEPTH_ZERO_SELF_SIGNED_CERT: its certificate is not trusted here; a private CA's certificate goes in NODE_EXTRA_CA_CERTS",
    );
    expect(s.chatRequests()).toHaveLength(served);
  });
});
