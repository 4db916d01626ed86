import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LiveRuns } from '../../src/app/live-runs.js';
import { openConsole, type ConsoleBackend } from '../../src/compose/console.js';
import { startConsole } from '../../src/cli/ui.js';
import { markdownHtml } from '../../src/cli/ui/html.js';
import { consoleServer } from '../../src/cli/ui/server.js';
import { runCli } from '../fakes/cli.js';
import { REPO_ROOT, tempWorkspace } from '../fakes/fixtures.js';

// Issue 29: the console's HTTP surface, in-process (the browser test drives the same pages in chromium).
const TOKEN = 'test-token-0123456789abcdefghijkl';
const HOST = '127.0.0.1:4000';
const ORIGIN = `http://${HOST}`;
const GITHUB_TOKEN = `ghp_${'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8'}`;
const EMAIL = 'jane.doe@example.com';

let ws: Awaited<ReturnType<typeof tempWorkspace>>;
let backend: ConsoleBackend;
let server: ReturnType<typeof consoleServer>;
const ids = { paused: '', secret: '', pii: '', done: '', legacy: '' };

async function runCommand(name: string, command: Record<string, unknown>): Promise<string> {
  await writeFile(path.join(ws.dir, name), JSON.stringify(command));
  const r = await runCli(['run', name, '--json'], { cwd: ws.dir });
  return JSON.parse(r.stdout.trim().split('\n').at(-1) ?? '{}').run_id as string;
}

beforeAll(async () => {
  ws = await tempWorkspace();
  ids.paused = await runCommand('ambiguous.json', {
    task_description: 'The requirements are unclear: choose the message queue for billing',
  });
  ids.secret = await runCommand('secret.json', { task_description: `Choose the queue. Our key is ${GITHUB_TOKEN}` });
  ids.pii = await runCommand('pii.json', { task_description: `Draft a reply to ${EMAIL} about the refund` });
  ids.done = await runCommand('clear.json', { task_description: 'Choose the message queue for billing', config: { mode: 'parallel' } });
  // A checkpoint kept raw by an older maestro (version 2): its task holds an e-mail, its note a phone number.
  const legacy = await readFile(path.join(REPO_ROOT, 'tests/fixtures/run-state/v2-paused-pii.json'), 'utf8');
  ids.legacy = (JSON.parse(legacy) as { run_id: string }).run_id;
  await mkdir(path.join(ws.dir, '.maestro', 'runs', ids.legacy), { recursive: true });
  await writeFile(path.join(ws.dir, '.maestro', 'runs', ids.legacy, 'state.json'), legacy);
  backend = await openConsole({ workspace: ws.dir, env: {} });
  server = consoleServer({ backend, token: TOKEN, hosts: () => [HOST] });
}, 60_000);
afterAll(async () => {
  await backend.close();
  await ws.cleanup();
});

const cookie = `maestro_ui=${TOKEN}`;
const get = (p: string, headers: Record<string, string> = {}) =>
  server.request(`${ORIGIN}${p}`, { headers: { host: HOST, cookie, ...headers } });
const post = (p: string, form: Record<string, string>, headers: Record<string, string> = {}) =>
  server.request(`${ORIGIN}${p}`, {
    method: 'POST',
    body: new URLSearchParams(form),
    headers: { host: HOST, cookie, origin: ORIGIN, 'content-type': 'application/x-www-form-urlencoded', ...headers },
  });
const commandsDir = async () => (await readdir(path.join(ws.dir, 'commands'))).filter((n) => !n.startsWith('.'));

describe('maestro ui: who may ask', () => {
  it('refuses a request without the token, and trades the printed ?token= for a cookie, taking it out of the address', async () => {
    expect((await server.request(`${ORIGIN}/runs`, { headers: { host: HOST } })).status).toBe(401);
    expect((await server.request(`${ORIGIN}/runs`, { headers: { host: HOST, cookie: 'maestro_ui=wrong' } })).status).toBe(401);
    const first = await server.request(`${ORIGIN}/?token=${TOKEN}`, { headers: { host: HOST } });
    expect(first.status).toBe(303);
    expect(first.headers.get('location')).toBe('/');
    expect(first.headers.get('set-cookie')).toMatch(/maestro_ui=.*HttpOnly.*SameSite=Strict/i);
    expect((await get('/runs')).status).toBe(200);
  });

  it('refuses another Host (DNS rebinding) and any write that does not come from its own pages', async () => {
    expect((await get('/runs', { host: 'evil.example:4000' })).status).toBe(421);
    const before = await commandsDir();
    const form = { name: 'x.json', text: '{"task_description":"Choose the queue"}', action: 'add' };
    expect((await post('/queue/add', form, { origin: 'http://evil.example' })).status).toBe(403);
    expect((await post('/queue/add', form, { origin: '' })).status).toBe(403);
    expect((await post('/queue/add', form, { 'sec-fetch-site': 'cross-site' })).status).toBe(403);
    expect(await commandsDir()).toEqual(before);
  });

  it('listens on another interface only with a token a person set', async () => {
    const io = { stdout: process.stdout, stderr: process.stderr, env: {}, cwd: ws.dir };
    await expect(startConsole(io, { host: '0.0.0.0', port: '0', workspace: ws.dir })).rejects.toThrow(/needs a token you set/);
    await expect(startConsole(io, { host: '0.0.0.0', port: '0', token: 'short', workspace: ws.dir })).rejects.toThrow(/at least/);
    const local = await startConsole(io, { host: '127.0.0.1', port: '0', workspace: ws.dir });
    try {
      expect(local.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=[A-Za-z0-9_-]{24,}$/);
      const res = await fetch(local.url, { redirect: 'manual' });
      expect(res.status).toBe(303);
    } finally {
      await local.close();
    }
  });
});

describe('maestro ui: pages', () => {
  it('lists runs filtered by status, opens one with its audit chain verified and its heat map drawn', async () => {
    const paused = await (await get('/runs?status=paused')).text();
    expect(paused).toContain(ids.paused);
    expect(paused).not.toContain(ids.done);
    const page = await (await get(`/runs/${ids.done}`)).text();
    expect(page).toContain('The audit chain verifies');
    // Where its prompt tokens went, and what it cost (nothing, on the offline model).
    expect(page).toMatch(/Prompt tokens: instructions \d+ · memory \d+ · task and inputs \d+ · deliberation \d+ · cached 0/);
    expect(page).toContain('completion tokens · $0.0000');
    // The verdicts drawn in the page as a radar: one point per persona's verdict.
    const radar = /<figure class="radar">[\s\S]*?<\/figure>/.exec(await (await get(`/runs/${ids.paused}`)).text())?.[0] ?? '';
    expect(radar.match(/<circle /g)).toHaveLength(3);
    expect(radar).toContain('investigate');
    const img = /<img src="([^"]+\.svg)"/.exec(page)?.[1];
    expect(img).toBeDefined();
    const svg = await get(img as string);
    expect(svg.headers.get('content-type')).toBe('image/svg+xml');
    expect(await svg.text()).toContain('<svg');
    expect((await get(`/runs/${ids.done}/pictures/..%2F..%2Fmaestro.config.json`)).status).toBe(404);
    expect((await get('/runs?status=bogus')).status).toBe(400);
    expect((await get('/runs/no-such-run')).status).toBe(404);
  });

  it('shows a broken audit chain as broken', async () => {
    const log = path.join(ws.dir, '.maestro', 'audit', `${ids.pii}.jsonl`);
    const text = await readFile(log, 'utf8');
    await writeFile(log, text.replace('"seq":1,', '"seq":7,'));
    try {
      expect(await (await get(`/runs/${ids.pii}`)).text()).toContain('The audit chain does not verify');
    } finally {
      await writeFile(log, text);
    }
  });

  it('never shows a secret or personal datum, on any page: not from a task, an old raw checkpoint, or a file name', async () => {
    const named = path.join(ws.dir, 'commands', `${EMAIL}.json`);
    await writeFile(named, '{}');
    try {
      const pages = ['/runs', '/decisions', '/queue', '/live', ...Object.values(ids).map((id) => `/runs/${id}`)];
      for (const p of pages) {
        const text = await (await get(p)).text();
        for (const raw of [GITHUB_TOKEN, EMAIL, '415 555 0100']) expect(text, p).not.toContain(raw);
      }
      expect(await (await get(`/runs/${ids.pii}`)).text()).toContain('[REDACTED:');
      expect(await (await get(`/runs/${ids.legacy}`)).text()).toContain('Questions go to [REDACTED:EMAIL]');
    } finally {
      await rm(named);
    }
  });

  it('streams the runs still going as `run --follow` events, screened (an old raw checkpoint too)', async () => {
    const controller = new AbortController();
    const res = await server.request(`${ORIGIN}/live/events`, { headers: { host: HOST, cookie }, signal: controller.signal });
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    let text = '';
    while (!text.includes('event: ready')) text += new TextDecoder().decode((await reader.read()).value);
    controller.abort();
    await reader.cancel().catch(() => undefined);
    expect(text).toContain(`"kind":"step_finished","run_id":"${ids.legacy}"`);
    expect(text).toContain(`"run_id":"${ids.paused}"`);
    for (const raw of [EMAIL, '415 555 0100']) expect(text).not.toContain(raw);
  });

  it('screens what it streams even when a store hands it a raw reply', async () => {
    const state = await backend.app.deps.ledger.load(ids.paused);
    if (!state) throw new Error('no paused run');
    const raw = { ...state, steps: state.steps.map((st) => ({ ...st, reply: `${st.reply} Write to ${EMAIL}.` })) };
    const reader = { list: async () => [raw.run_id], load: async () => raw, readFile: async () => undefined };
    const leaky = consoleServer({ backend: { ...backend, live: new LiveRuns(reader) }, token: TOKEN, hosts: () => [HOST] });
    const controller = new AbortController();
    const res = await leaky.request(`${ORIGIN}/live/events`, { headers: { host: HOST, cookie }, signal: controller.signal });
    const body = (res.body as ReadableStream<Uint8Array>).getReader();
    let text = '';
    while (!text.includes('event: ready')) text += new TextDecoder().decode((await body.read()).value);
    controller.abort();
    await body.cancel().catch(() => undefined);
    expect(text).toContain('Write to [REDACTED:EMAIL]');
    expect(text).not.toContain(EMAIL);
  });

  it('shows a sealed run as sealed, and offers no decision on it', async () => {
    const page = await (await get(`/runs/${ids.secret}`)).text();
    expect(page).toContain('Sealed');
    expect(page).toContain('ETHICS_SECRET_DETECTED');
    expect(page).not.toContain('class="decide-form"');
  });

  it('renders model-written HTML as text and keeps only web links', () => {
    const out = markdownHtml(
      '<script>alert(1)</script>\n\nSee <img src=x onerror=alert(1)> [x](javascript:alert(1)) [y](https://example.com) ![p](evil.svg)',
    ).text;
    expect(out).not.toContain('<script>');
    expect(out).toContain('&lt;script&gt;');
    expect(out).not.toMatch(/href="javascript/i);
    expect(out).toContain('&lt;img src=x');
    expect(out).toContain('href="https://example.com"');
    expect(out).not.toContain('<img');
  });
});

describe('maestro ui: changes', () => {
  it('checks a command and refuses an invalid one with its findings, writing nothing; adds a valid one', async () => {
    const before = await commandsDir();
    const invalid = await post('/queue/add', { name: 'bad.json', text: '{"task_description": "", "surprise": 1}', action: 'add' });
    expect(invalid.status).toBe(422);
    const body = await invalid.text();
    expect(body).toContain('nothing was written');
    expect(body).toContain('surprise');
    const pii = await post('/queue/add', { name: 'pii2.json', text: JSON.stringify({ task_description: `Mail ${EMAIL}` }), action: 'add' });
    expect(pii.status).toBe(422);
    expect(await pii.text()).not.toContain(EMAIL);
    expect(await commandsDir()).toEqual(before);
    const badName = await post('/queue/add', { name: '../escape.json', text: '{"task_description":"Choose the queue"}', action: 'add' });
    expect(badName.status).toBe(422);
    const ok = await post('/queue/add', {
      name: 'fine.json',
      text: '{"task_description":"Choose the message queue for billing"}',
      action: 'add',
    });
    expect(ok.status).toBe(303);
    expect(await commandsDir()).toContain('fine.json');
    const again = await post('/queue/add', { name: 'fine.json', text: '{"task_description":"Something else"}', action: 'add' });
    expect(again.status).toBe(422);
    expect(await readFile(path.join(ws.dir, 'commands', 'fine.json'), 'utf8')).toContain('billing');
  });

  it('answers a malformed form with a message, changes nothing and keeps serving', async () => {
    const before = await commandsDir();
    const garbled = await server.request(`${ORIGIN}/queue/add`, {
      method: 'POST',
      body: '--x\r\nContent-Disposition: form-data; name="text"\r\n\r\n{"task',
      headers: { host: HOST, cookie, origin: ORIGIN, 'content-type': 'multipart/form-data; boundary=zzz' },
    });
    expect(garbled.status).toBe(400);
    expect(await garbled.text()).toContain('nothing was written');
    expect((await post('/queue/add', { text: '{"task_description":"Choose"}', action: 'launch' })).status).toBe(400);
    expect(await commandsDir()).toEqual(before);
    expect((await get('/queue')).status).toBe(200);
  });

  it('lists a rejected command with its reason and requeues it into commands/; an unknown name changes nothing', async () => {
    await writeFile(path.join(ws.dir, 'commands', 'broken.json'), '{"task_description": 42}');
    expect((await runCli(['watch', '--once'], { cwd: ws.dir })).code).not.toBeNull();
    const queue = await (await get('/queue')).text();
    expect(queue).toContain('data-rejected="broken.json"');
    expect(queue).toMatch(/<code>SPEC_[A-Z_]+<\/code>/);
    expect(queue).toContain('task_description');
    expect((await post('/queue/requeue', { name: 'nothing-such.json' })).status).toBe(404);
    expect((await post('/queue/requeue', { name: 'broken.json' })).status).toBe(303);
    expect(await commandsDir()).toContain('broken.json');
    expect(await (await get('/queue')).text()).not.toContain('data-rejected="broken.json"');
  });

  it('refuses a page left open on a pause the run has since left for a later one', async () => {
    const ghost = { task_description: 'Review the plan', config: { max_rounds: 1, personas: ['coordinator', 'ghost'] } };
    const id = await runCommand('ghost.json', ghost);
    const first = (await backend.app.deps.ledger.load(id))?.pause?.pause_id as string;
    expect((await post(`/decisions/${id}`, { decision: 'continue', pause_id: first })).status).toBe(303);
    const resumed = await runCli(['run', '--resume', id, '--json'], { cwd: ws.dir });
    expect(resumed.code, resumed.stderr).toBe(3);
    const later = (await backend.app.deps.ledger.load(id))?.pause?.pause_id;
    expect(later).toBeDefined();
    expect(later).not.toBe(first);
    const stale = await post(`/decisions/${id}`, { decision: 'stop', pause_id: first });
    expect(stale.status).toBe(409);
    expect(await stale.text()).toContain('nothing changed');
    expect((await backend.app.deps.ledger.load(id))?.status).toBe('paused');
  });

  it('decides the pause the page showed, and refuses the same page again (stale) or a decision with no pause', async () => {
    const page = await (await get('/decisions')).text();
    const pauseId = new RegExp(`name="pause_id" value="(${ids.paused}[^"]*)"`).exec(page)?.[1] as string;
    expect(pauseId).toBeDefined();
    expect((await post(`/decisions/${ids.paused}`, { decision: 'continue' })).status).toBe(400);
    expect((await post(`/decisions/${ids.paused}`, { decision: 'maybe', pause_id: pauseId })).status).toBe(409);
    const decided = await post(`/decisions/${ids.paused}`, { decision: 'stop', pause_id: pauseId, note: 'not this quarter' });
    expect(decided.status).toBe(303);
    const stale = await post(`/decisions/${ids.paused}`, { decision: 'continue', pause_id: pauseId });
    expect(stale.status).toBe(409);
    expect(await stale.text()).toContain('already decided');
    const audit = await runCli(['audit', 'show', ids.paused], { cwd: ws.dir });
    expect(audit.stdout).toContain('HITL_STOP by USER');
    expect(audit.stdout).not.toContain('HITL_CONTINUE');
  });
});
