import { readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { rejectingResponseFormat, startChatServer, type ChatHandler, type ChatServer } from '../fakes/chat-server.js';
import { runCli } from '../fakes/cli.js';
import { tempWorkspace } from '../fakes/fixtures.js';

// Issue 25 item 3: `maestro doctor` checks every route in use against its endpoint, one line a route.
let ws: Awaited<ReturnType<typeof tempWorkspace>>;
const servers: ChatServer[] = [];
beforeEach(async () => {
  ws = await tempWorkspace();
});
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
  await ws.cleanup();
});

const ok: ChatHandler = () => ({ content: '{"ok": true}' });
async function server(handler: ChatHandler, models?: string[]): Promise<ChatServer> {
  const s = await startChatServer(handler, { classify: handler, ...(models ? { models } : {}) });
  servers.push(s);
  return s;
}
async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as { port: number };
  await new Promise((r) => s.close(r));
  return port;
}
const route = (url: string, extra: Record<string, unknown> = {}) => ({
  provider: 'openai',
  model: 'good-model',
  base_url: url,
  max_retries: 0,
  timeout_ms: 3000,
  ...extra,
});
async function personaRoutes(routes: Record<string, { route: string; fallback?: string }>): Promise<void> {
  for (const [id, r] of Object.entries(routes)) {
    const file = path.join(ws.dir, 'personas', `${id}.md`);
    const extra = `route: ${r.route}${r.fallback ? `\nfallback_route: ${r.fallback}` : ''}`;
    await writeFile(file, (await readFile(file, 'utf8')).replace(/^weight: 1$/m, `weight: 1\n${extra}`));
  }
}
const doctor = (env: Record<string, string> = {}) => runCli(['doctor'], { cwd: ws.dir, env });
const lineOf = (out: string, routeId: string) => out.split('\n').find((l) => l.slice(2).startsWith(`${routeId} `)) ?? '';

describe('maestro doctor', () => {
  it('finds a wrong port, a wrong model name, a rejected key, an unsupported json_mode and a fallback that cannot serve, each on its own line', async () => {
    const good = await server(ok, ['good-model']);
    const keyed = await server((_b, _n, request) =>
      request.headers.authorization === 'Bearer right-key'
        ? { content: '{"ok": true}' }
        : { status: 401, error: { message: 'bad key', type: 'invalid_request_error', code: 'invalid_api_key' } },
    );
    const other = await server(ok, ['other-model', 'third-model']);
    const noSchema = await server(rejectingResponseFormat(['json_schema'], ok));
    const deadPort = await freePort();
    await writeFile(
      path.join(ws.dir, 'maestro.config.json'),
      JSON.stringify({
        default_route: 'schemaless',
        routes: {
          good: route(good.url),
          dead: route(`http://127.0.0.1:${deadPort}/v1`),
          badkey: route(keyed.url, { api_key_env: 'DOCTOR_TEST_KEY' }),
          nomodel: route(other.url, { model: 'missing-model' }),
          schemaless: route(noSchema.url),
        },
      }),
    );
    await personaRoutes({
      coordinator: { route: 'good', fallback: 'dead' },
      strategist: { route: 'badkey' },
      auditor: { route: 'nomodel' },
    });

    // validate keeps its promise: no model call, to any endpoint.
    await writeFile(path.join(ws.dir, 'task.json'), JSON.stringify({ task_description: 'Choose the cache', config: { max_rounds: 1 } }));
    await runCli(['validate', 'task.json'], { cwd: ws.dir });
    expect(servers.reduce((n, s) => n + s.requests.length + s.classifyRequests.length, 0)).toBe(0);

    const r = await doctor({ DOCTOR_TEST_KEY: 'wrong-key' });
    expect(r.code).toBe(1);
    expect(lineOf(r.stdout, 'good')).toMatch(/^✔ good .*answers, key accepted, model listed/);
    expect(lineOf(r.stdout, 'dead')).toMatch(
      new RegExp(`^✘ dead .*127\\.0\\.0\\.1:${deadPort}.*fallback of coordinator.*does not answer.*ECONNREFUSED`),
    );
    expect(lineOf(r.stdout, 'badkey')).toMatch(/^✘ badkey .*key is not accepted.*DOCTOR_TEST_KEY/);
    expect(lineOf(r.stdout, 'nomodel')).toMatch(
      /^✘ nomodel .*model "missing-model" is not on the endpoint \(it offers: other-model, third-model\)/,
    );
    expect(lineOf(r.stdout, 'schemaless')).toMatch(
      /^✘ schemaless .*json_mode "json_schema" is refused.*set the route's json_mode to "json_object"/,
    );
    expect(r.stdout).not.toContain('wrong-key');

    // Fixed: the right key, the model's name, the json_mode, a fallback that answers.
    const backup = await server(ok, ['good-model']);
    const config = JSON.parse(await readFile(path.join(ws.dir, 'maestro.config.json'), 'utf8'));
    config.routes.dead = route(backup.url);
    config.routes.nomodel.model = 'other-model';
    config.routes.schemaless.json_mode = 'json_object';
    await writeFile(path.join(ws.dir, 'maestro.config.json'), JSON.stringify(config));
    const fixed = await doctor({ DOCTOR_TEST_KEY: 'right-key' });
    expect(fixed.stdout).toContain('Every route in use works.');
    expect(fixed.code, fixed.stdout).toBe(0);
  });

  it('its advice matches the configuration: a fallback_route is not asked for when every persona on the route has one; TLS on a plain port is named as the run names it', async () => {
    const failing = await server(() => ({ status: 500, error: { message: 'boom', type: 'server_error' } }));
    const plain = await server(ok, ['good-model']);
    await writeFile(
      path.join(ws.dir, 'maestro.config.json'),
      JSON.stringify({
        default_route: 'offline',
        routes: { failing: route(failing.url), tls: route(plain.url.replace('http:', 'https:')) },
      }),
    );
    await personaRoutes({ coordinator: { route: 'failing', fallback: 'offline' }, strategist: { route: 'tls' } });
    const r = await doctor();
    expect(r.code).toBe(1);
    expect(lineOf(r.stdout, 'failing')).toMatch(
      /^✘ failing .*HTTP 500.*check its logs \(its personas' fallback_route takes over meanwhile\)/,
    );
    expect(r.stdout).not.toContain('give the personas a fallback_route');
    expect(lineOf(r.stdout, 'tls')).toMatch(/^✘ tls .*no TLS there; if the endpoint speaks plain HTTP, its base_url starts with http:\/\//);
    // Without a fallback on it, the advice offers one.
    await personaRoutes({ auditor: { route: 'failing' } });
    expect(lineOf((await doctor()).stdout, 'failing')).toContain('or give the personas a fallback_route');
  });

  it('says when a working fallback could never take over (local to remote), and the offline route needs no endpoint', async () => {
    const local = await server(ok, ['good-model']);
    await writeFile(
      path.join(ws.dir, 'maestro.config.json'),
      JSON.stringify({
        routes: {
          local: route(local.url, { timeout_ms: 60_000 }),
          // An endpoint that says it is remote (a tunnel, a proxy): data sent there counts as leaving the machine.
          remote: route(local.url, { timeout_ms: 60_000, locality: 'remote' }),
        },
      }),
    );
    await personaRoutes({ coordinator: { route: 'local', fallback: 'offline' } });
    const r = await doctor();
    expect(lineOf(r.stdout, 'offline')).toMatch(/^✔ offline .*no endpoint to check/);
    expect(r.code).toBe(0);
    await personaRoutes({ strategist: { route: 'local', fallback: 'remote' } });
    const remote = await doctor({ OPENAI_API_KEY: 'k' });
    expect(remote.code).toBe(1);
    expect(lineOf(remote.stdout, 'remote')).toMatch(
      /^✘ remote .*fallback of strategist.*cannot take over as strategist's fallback: .*remote/,
    );
  });

  it('a valid chat completion with no text (a tool call only) is not blamed on base_url: json_mode is the fix it names', async () => {
    const empty = await server(() => ({ content: '' }), ['good-model']);
    await writeFile(path.join(ws.dir, 'maestro.config.json'), JSON.stringify({ routes: { local: route(empty.url) } }));
    await personaRoutes({ coordinator: { route: 'local' } });
    const r = await doctor({ OPENAI_API_KEY: 'k' });
    expect(r.code).toBe(1);
    expect(lineOf(r.stdout, 'local')).toContain('try json_mode "json_object" or "prompt" on the route');
    expect(lineOf(r.stdout, 'local')).not.toContain('something that is not a chat completion');
  });

  it('a persona file that does not read (or no personas/) is a problem found: named with what is wrong, exit 1; the routes of the others are still checked', async () => {
    const good = await server(ok, ['good-model']);
    await writeFile(
      path.join(ws.dir, 'maestro.config.json'),
      JSON.stringify({ routes: { good: route(good.url), local: route(good.url) } }),
    );
    await personaRoutes({ coordinator: { route: 'good' } });
    const auditor = path.join(ws.dir, 'personas', 'auditor.md');
    await writeFile(auditor, '---\nid: auditor\nname: Auditor\norder: 3\nroute: local\nfocus_domains: [risk\n---\nYou audit.\n');
    const broken = await doctor();
    expect(broken.code, broken.stdout).toBe(1);
    expect(lineOf(broken.stdout, 'good')).toMatch(/^✔ good .*persona coordinator.*answers/);
    expect(broken.stdout).toMatch(/^✘ personas\/auditor\.md — line 6: not valid YAML/m);
    expect(broken.stdout).not.toContain('Every route in use works.');
    expect(broken.stdout).toContain('1 persona problem(s)');

    const json = await runCli(['doctor', '--json'], { cwd: ws.dir });
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout).map((r: { route: string }) => r.route)).toContain('good');
    expect(json.stderr).toMatch(/personas\/auditor\.md — line 6: not valid YAML/);

    await writeFile(auditor, '---\nid: auditor\nname: Auditor\norder: 3\nrout: down\n---\nYou audit.\n');
    const unknownKey = await doctor();
    expect(unknownKey.code).toBe(1);
    expect(unknownKey.stdout).toMatch(/^✘ personas\/auditor\.md — .*unknown key "rout".*did you mean "route"/m);

    await rm(path.join(ws.dir, 'personas'), { recursive: true });
    const none = await doctor();
    expect(none.code).toBe(1);
    expect(none.stdout).toMatch(/^✘ personas\/ — there is no personas\/ folder/m);
  });
});
