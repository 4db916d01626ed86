import { mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FsWatcherRegistry } from '../../src/adapters/fs/watcher-registry.js';
import { LiveRuns } from '../../src/app/live-runs.js';
import { openConsole, type ConsoleBackend } from '../../src/compose/console.js';
import { startConsole } from '../../src/cli/ui.js';
import { markdownHtml } from '../../src/cli/ui/html.js';
import { consoleServer } from '../../src/cli/ui/server.js';
import { runCli } from '../fakes/cli.js';
import { REPO_ROOT, tempWorkspace } from '../fakes/fixtures.js';
import { signedInConsole } from '../helpers/console.js';

// Issue 29: the console's HTTP surface, in-process (the browser test drives the same pages in chromium).
const TOKEN = 'test-token-0123456789abcdefghijkl';
const HOST = '127.0.0.1:4000';
const ORIGIN = `http://${HOST}`;
const GITHUB_TOKEN = `ghp_${'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8'}`;
const EMAIL = 'jane.doe@example.com';

let ws: Awaited<ReturnType<typeof tempWorkspace>>;
let backend: ConsoleBackend;
let ui: Awaited<ReturnType<typeof signedInConsole>>;
const ids = { paused: '', secret: '', pii: '', done: '', legacy: '', card: '' };
/** What the console said of runs it carries on and could not (`maestro ui` writes it to its terminal). */
const problems: string[] = [];

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
  await mkdir(path.join(ws.dir, 'docs'), { recursive: true });
  await writeFile(path.join(ws.dir, 'docs', 'plan.md'), '# Plan\n\nMove billing events to a queue.\n');
  ids.card = await runCommand('card.json', {
    task_description:
      'The requirements are unclear: choose the message queue for billing.\nWeigh Kafka against RabbitMQ.\nThe last line of the task.',
    input_artifacts: ['docs/plan.md'],
  });
  ids.done = await runCommand('clear.json', { task_description: 'Choose the message queue for billing', config: { mode: 'parallel' } });
  // A checkpoint kept raw by an older maestro (version 2): its task holds an e-mail, its note a phone number.
  const legacy = await readFile(path.join(REPO_ROOT, 'tests/fixtures/run-state/v2-paused-pii.json'), 'utf8');
  ids.legacy = (JSON.parse(legacy) as { run_id: string }).run_id;
  await mkdir(path.join(ws.dir, '.maestro', 'runs', ids.legacy), { recursive: true });
  await writeFile(path.join(ws.dir, '.maestro', 'runs', ids.legacy, 'state.json'), legacy);
  backend = await openConsole({ workspace: ws.dir, env: {}, onProblem: (m) => problems.push(m) });
  ui = await signedInConsole(backend, { host: HOST, token: TOKEN, extra: { placeOf: () => 'this machine' } });
}, 60_000);
afterAll(async () => {
  await backend.close();
  await ws.cleanup();
});

const get = (p: string, headers: Record<string, string> = {}) => ui.get(p, headers);
const post = (p: string, form: Record<string, string> | [string, string][], headers: Record<string, string> = {}) =>
  ui.post(p, form, headers);
const commandsDir = async () => (await readdir(path.join(ws.dir, 'commands'))).filter((n) => !n.startsWith('.'));

describe('maestro ui: who may ask', () => {
  it('gives a request without a session the sign-in page and nothing of the workspace; trades a token for a session of one tab', async () => {
    const attempts: Record<string, string>[] = [
      { host: HOST },
      { host: HOST, cookie: `maestro_ui=${TOKEN}` },
      { host: HOST, authorization: `Bearer ${TOKEN}` },
    ];
    for (const headers of attempts) {
      const res = await ui.server.request(`${ORIGIN}/runs`, { headers });
      expect(res.status).toBe(401);
      const text = await res.text();
      expect(text).toContain('id="sign-in"');
      expect(text).not.toContain(ids.paused);
      expect(text).not.toContain(ws.dir);
    }
    expect((await ui.signIn('wrong-token-0123456789abcdefgh')).status).toBe(401);
    // The sign-in form sent without the page's script (a form body): the right token is not called wrong.
    const formSent = await ui.server.request(`${ORIGIN}/session`, {
      method: 'POST',
      body: new URLSearchParams({ token: TOKEN }),
      headers: { host: HOST, origin: ORIGIN, 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(formSent.status).toBe(400);
    expect(await formSent.text()).toContain('Signing in needs JavaScript on for this page: the token was not checked');
    const signed = await ui.signIn(TOKEN);
    expect(signed.status).toBe(200);
    expect(signed.headers.get('set-cookie')).toBeNull();
    const { session, name } = (await signed.json()) as { session: string; name: string };
    expect(name).toBe('tester');
    expect(session).not.toContain(TOKEN);
    const page = await ui.server.request(`${ORIGIN}/runs`, { headers: { host: HOST, authorization: `Bearer ${session}` } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain(ids.paused);
    // A sign-in from another site is refused like any change: only the console's own page may ask.
    const foreign = await ui.server.request(`${ORIGIN}/session`, {
      method: 'POST',
      body: JSON.stringify({ token: TOKEN }),
      headers: { host: HOST, origin: 'http://127.0.0.1:9999', 'content-type': 'application/json' },
    });
    expect(foreign.status).toBe(403);
    const out = await ui.server.request(`${ORIGIN}/session`, {
      method: 'DELETE',
      headers: { host: HOST, origin: ORIGIN, authorization: `Bearer ${session}` },
    });
    expect(out.status).toBe(204);
    expect((await ui.server.request(`${ORIGIN}/runs`, { headers: { host: HOST, authorization: `Bearer ${session}` } })).status).toBe(401);
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

  it('listens on another interface only with a token a person set, and only over TLS unless told', async () => {
    const io = { stdout: process.stdout, stderr: process.stderr, env: {}, cwd: ws.dir };
    await expect(startConsole(io, { host: '0.0.0.0', port: '0', workspace: ws.dir })).rejects.toThrow(/needs TLS/);
    await expect(startConsole(io, { host: '0.0.0.0', port: '0', insecureHttp: true, workspace: ws.dir })).rejects.toThrow(
      /needs a token you set/,
    );
    const short = { ...io, env: { MAESTRO_UI_TOKEN: 'short' } };
    await expect(startConsole(short, { host: '0.0.0.0', port: '0', insecureHttp: true, workspace: ws.dir })).rejects.toThrow(/at least/);
    const local = await startConsole(io, { host: '127.0.0.1', port: '0', workspace: ws.dir });
    try {
      expect(local.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/#token=[A-Za-z0-9_-]{24,}$/);
      const res = await fetch(local.url);
      expect(res.status).toBe(401);
      expect(await res.text()).toContain('id="sign-in"');
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
    // A parallel run's assessments are its verdicts: drawn too.
    const parallelRadar = /<figure class="radar">[\s\S]*?<\/figure>/.exec(page)?.[0] ?? '';
    expect(parallelRadar.match(/<circle /g)).toHaveLength(3);
    const img = /<img data-src="([^"]+\.svg)"/.exec(page)?.[1];
    expect(img).toBeDefined();
    const svg = await get(img as string);
    expect(svg.headers.get('content-type')).toBe('image/svg+xml');
    expect(await svg.text()).toContain('<svg');
    expect((await get(`/runs/${ids.done}/pictures/..%2F..%2Fmaestro.config.json`)).status).toBe(404);
    expect((await get('/runs?status=bogus')).status).toBe(400);
    expect((await get('/runs/no-such-run')).status).toBe(404);
  });

  it('a run whose command did not validate has a page that says so and names the fields, with no terminal command', async () => {
    const id = await runCommand('typo.json', { task_description: 'Review the plan', config: { max_round: 2 } });
    const text = await (await get(`/runs/${id}`)).text();
    expect(text).toContain(`Run ${id} ended invalid, SPEC_INVALID_INPUT: its command file did not validate`);
    expect(text).toContain('config');
    expect(text).not.toContain('maestro audit show');
  });

  it('finds past runs by task words, run id or file name, by date in the viewer’s time zone, and pages through them', async () => {
    const found = async (q: string) => [...(await (await get(`/runs?${q}`)).text()).matchAll(/<tr data-run="([^"]+)"/g)].map((m) => m[1]);
    expect(await found('q=kafka+rabbitmq')).toEqual([ids.card]);
    expect(await found(`q=${ids.done.slice(-6)}`)).toEqual([ids.done]);
    expect(await found('q=card.json')).toEqual([ids.card]);
    expect(await found('q=docs%2Fplan.md')).toEqual([ids.card]);
    const today = new Date().toISOString().slice(0, 10);
    expect(await found(`from=${today}&to=${today}`)).toContain(ids.card);
    // Seen from UTC+14 (an offset of -840 minutes) the run falls on the local day of its start there, not on the day before.
    const started = Date.parse((await backend.app.deps.ledger.load(ids.card))?.created_at as string);
    const local = (shift: number) => new Date(started + 840 * 60_000 + shift).toISOString().slice(0, 10);
    expect(await found(`from=${local(0)}&to=${local(0)}&tz=-840`)).toContain(ids.card);
    expect(await found(`from=${local(-86_400_000)}&to=${local(-86_400_000)}&tz=-840`)).not.toContain(ids.card);
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    expect(await (await get(`/runs?from=${tomorrow}`)).text()).toContain('No runs match.');
    expect((await get('/runs?from=yesterday')).status).toBe(400);
    expect((await get('/runs?from=2026-11-31')).status).toBe(400); // not on the calendar
    // Sixty more runs (copies of one that ended): pages of fifty, newest first.
    const runsDir = path.join(ws.dir, '.maestro', 'runs');
    const source = await readFile(path.join(runsDir, ids.done, 'state.json'), 'utf8');
    const copies: string[] = [];
    for (let i = 0; i < 60; i++) {
      const id = `19990101T0000${String(i).padStart(2, '0')}Z-copy${String(i).padStart(2, '0')}`;
      await mkdir(path.join(runsDir, id), { recursive: true });
      await writeFile(
        path.join(runsDir, id, 'state.json'),
        source.replaceAll(ids.done, id).replaceAll(/"created_at":\s*"[^"]+"/g, '"created_at":"1999-01-01T00:00:00.000Z"'),
      );
      copies.push(id);
    }
    try {
      const first = await (await get('/runs')).text();
      expect(first).toMatch(/Runs 1–50 of \d+\./);
      expect(first).toContain('href="/runs?tz=0&amp;page=2">Older runs</a>');
      const second = await found('page=2');
      expect(second.length).toBeGreaterThan(0);
      // A page past the end shows the last one, and says so.
      expect(await (await get('/runs?page=9')).text()).toContain('There is no page 9: this is the last, page 2.');
      expect(second.every((id) => copies.includes(id as string))).toBe(true);
      expect(await found('q=copy07')).toEqual([copies[7]]);
    } finally {
      for (const id of copies) await rm(path.join(runsDir, id), { recursive: true });
    }
    expect(await found('q=copy07')).toEqual([]);
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
    const res = await ui.server.request(`${ORIGIN}/live/events`, { headers: ui.auth, signal: controller.signal });
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
    const leaky = consoleServer({ backend: { ...backend, live: new LiveRuns(reader) }, access: ui.access, hosts: () => [HOST] });
    const controller = new AbortController();
    const res = await leaky.request(`${ORIGIN}/live/events`, { headers: ui.auth, signal: controller.signal });
    const body = (res.body as ReadableStream<Uint8Array>).getReader();
    let text = '';
    while (!text.includes('event: ready')) text += new TextDecoder().decode((await body.read()).value);
    controller.abort();
    await body.cancel().catch(() => undefined);
    expect(text).toContain('Write to [REDACTED:EMAIL]');
    expect(text).not.toContain(EMAIL);
  });

  it('leads no decider with a terminal command: a paused run is decided on its page', async () => {
    for (const p of ['/decisions', `/runs/${ids.paused}`]) {
      const text = await (await get(p)).text();
      expect(text, p).not.toMatch(/maestro (hitl decide|run --resume)/);
    }
    expect(await (await get(`/runs/${ids.paused}`)).text()).toContain('decide it at the top of this page');
  });

  it('shows a sealed run as sealed, and offers no decision on it', async () => {
    const page = await (await get(`/runs/${ids.secret}`)).text();
    expect(page).toContain('Sealed');
    expect(page).toContain('ETHICS_SECRET_DETECTED');
    expect(page).not.toContain('class="decide-form"');
  });

  it('shows on a decision card what a decider needs: the whole task, its inputs, what the council said, what each choice does', async () => {
    const page = await (await get('/decisions')).text();
    const card = new RegExp(`<article class="paused" data-run="${ids.card}"[\\s\\S]*?</article>`).exec(page)?.[0] ?? '';
    expect(card).toContain('Weigh Kafka against RabbitMQ.\nThe last line of the task.');
    expect(card).toContain('Input files: <code>docs/plan.md</code>');
    expect(
      card.match(/<li><strong>(coordinator|strategist|auditor)<\/strong>: <span class="verdict v-investigate">investigate<\/span>/g),
    ).toHaveLength(3);
    expect(card).toContain('the request is not settled enough to act on');
    expect(card).toMatch(/<dt>Continue<\/dt><dd>[^<]+<\/dd><dt>Stop<\/dt><dd>end the run as STOPPED/);
    expect(card).toContain(`aria-label="Continue run ${ids.card}"`);
    expect(card).toContain(`aria-label="Stop run ${ids.card}"`);
    expect(card).toMatch(/<textarea name="note"[^>]*required>/);
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
    // Not a valid command is said as such, not as a task that would not run unattended.
    expect(body).toContain('Refused: it is not a valid command; nothing was written');
    expect(body).not.toContain('would not run unattended');
    const broken = await post('/queue/add', { name: 'broken.json', text: '{"task_description": "x",', action: 'check' });
    expect(await broken.text()).toContain('Checked: it is not a valid command (nothing written).');
    const pii = await post('/queue/add', { name: 'pii2.json', text: JSON.stringify({ task_description: `Mail ${EMAIL}` }), action: 'add' });
    expect(pii.status).toBe(422);
    const piiPage = await pii.text();
    expect(piiPage).not.toContain(EMAIL);
    // Never sent back altered ([REDACTED:EMAIL] in the form would change the command when sent again): left out, and said so.
    expect(piiPage).toMatch(/<textarea name="text"[^>]*><\/textarea>/);
    expect(piiPage).toContain('The command you sent is not shown again');
    const piiName = await post('/queue/add', { name: `${EMAIL}.json`, text: '{"task_description":"Choose the queue"}', action: 'add' });
    expect(piiName.status).toBe(422);
    expect(await piiName.text()).toContain('The file name you typed is not shown again');
    expect(await commandsDir()).toEqual(before);
    const badName = await post('/queue/add', { name: '../escape.json', text: '{"task_description":"Choose the queue"}', action: 'add' });
    expect(badName.status).toBe(422);
    // A refusal for any other reason gives the text back as typed.
    expect(await badName.text()).toContain('{&quot;task_description&quot;:&quot;Choose the queue&quot;}</textarea>');
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

  it('never lets a command added here replace an earlier run’s artifact, a workspace file, or what another run will write', async () => {
    const done = (await backend.app.deps.ledger.load(ids.done))?.plan?.output_path as string;
    const before = await readFile(path.join(ws.dir, done), 'utf8');
    const add = (name: string, output: string) =>
      post('/queue/add', {
        name,
        text: JSON.stringify({ task_description: 'Choose the message queue for billing', output_artifact_path: output }),
        action: 'add',
      });
    for (const [name, output, why] of [
      ['over-run.json', done, /already holds a file .*never replaces one/],
      ['over-file.json', 'docs/plan.md', /already holds a file/],
      [
        'over-paused.json',
        (await backend.app.deps.ledger.load(ids.card))?.plan?.output_path as string,
        /run .* \(paused\) will write its artifact/,
      ],
    ] as const) {
      const res = await add(name, output);
      expect(res.status, name).toBe(422);
      expect(await res.text(), name).toMatch(why);
      expect(await commandsDir()).not.toContain(name);
    }
    expect(await readFile(path.join(ws.dir, done), 'utf8')).toBe(before);
    expect((await add('first.json', 'outputs/shared-name.md')).status).toBe(303);
    const second = await add('second.json', 'outputs/shared-name.md');
    expect(await second.text()).toContain('first.json, waiting in commands/, will write outputs/shared-name.md');
    await rm(path.join(ws.dir, 'commands', 'first.json'));
  });

  it('says so on a run’s page when its artifact no longer has the bytes its audit log recorded', async () => {
    const file = path.resolve(ws.dir, (await backend.app.deps.ledger.load(ids.done))?.artifact as string);
    const text = await readFile(file, 'utf8');
    expect(await (await get(`/runs/${ids.done}`)).text()).toContain('Its bytes match the hash its audit log recorded');
    await writeFile(file, `${text}\nA line someone added later.\n`);
    try {
      const page = await (await get(`/runs/${ids.done}`)).text();
      expect(page).toContain('This file was changed after the run wrote it');
      expect(page).toContain('but the artifact on disk is not the one it records');
      expect(page).not.toContain('<p class="chain ok">');
    } finally {
      await writeFile(file, text);
    }
  });

  it('shows a large artifact in parts and as a screened download, and keeps answering other pages meanwhile', async () => {
    const file = path.resolve(ws.dir, (await backend.app.deps.ledger.load(ids.done))?.artifact as string);
    const text = await readFile(file, 'utf8');
    const line = `| billing | kafka | 12000 msg/s | ok | contact ${EMAIL} |\n`;
    await writeFile(file, `# Big\n\n${line.repeat(Math.floor((3 * 1_048_576 - 100) / line.length))}THE-LAST-LINE\n`);
    try {
      const first = await (await get(`/runs/${ids.done}`)).text();
      expect(first).toMatch(/This artifact is 3\.0 MB: too large to show whole/);
      expect((await stat(file)).size).toBeLessThanOrEqual(6 * 524_288);
      expect(first).toContain('Part 1 of 6');
      expect(first).toContain(`href="/runs/${ids.done}?part=2">next part</a>`);
      expect(first).not.toContain(EMAIL);
      expect(first.length).toBeLessThan(1_048_576);
      const last = await (await get(`/runs/${ids.done}?part=6`)).text();
      expect(last).toContain('THE-LAST-LINE');
      expect(last).toContain('previous part');
      // A download goes part after part: another page is answered before it is read at all.
      const download = await get(`/runs/${ids.done}/artifact`);
      expect(download.headers.get('content-disposition')).toMatch(/^attachment; filename=".+\.md"$/);
      expect((await get('/runs')).status).toBe(200);
      const body = await download.text();
      const written = Math.floor((3 * 1_048_576 - 100) / line.length);
      expect(body.split('\n').filter((l) => l.startsWith('| billing'))).toHaveLength(written);
      expect(body).not.toContain(EMAIL);
      expect(body.endsWith('THE-LAST-LINE\n')).toBe(true);
      expect(
        body
          .split('\n')
          .filter((l) => l.startsWith('| billing'))
          .every((l) => l.endsWith('[REDACTED:EMAIL] |')),
      ).toBe(true);
    } finally {
      await writeFile(file, text);
    }
  });

  it('answers a malformed form with a message, changes nothing and keeps serving', async () => {
    const before = await commandsDir();
    const garbled = await ui.server.request(`${ORIGIN}/queue/add`, {
      method: 'POST',
      body: '--x\r\nContent-Disposition: form-data; name="text"\r\n\r\n{"task',
      headers: { ...ui.auth, origin: ORIGIN, 'content-type': 'multipart/form-data; boundary=zzz' },
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
    // No watcher runs here (watch --once has ended): the page says nothing in commands/ is taken up.
    expect(queue).toContain('No watcher runs on this workspace');
    expect(queue).toMatch(/<code>SPEC_[A-Z_]+<\/code>/);
    expect(queue).toContain('task_description');
    expect((await post('/queue/requeue', { name: 'nothing-such.json' })).status).toBe(404);
    // Still broken: refused, saying why; once fixed in .maestro/rejected/, it goes back.
    const still = await post('/queue/requeue', { name: 'broken.json' });
    expect(still.status).toBe(409);
    expect(await still.text()).toContain('it would be rejected again');
    await writeFile(path.join(ws.dir, '.maestro', 'rejected', 'broken.json'), '{"task_description": "Review the plan"}');
    expect((await post('/queue/requeue', { name: 'broken.json' })).status).toBe(303);
    expect(await commandsDir()).toContain('broken.json');
    expect(await (await get('/queue')).text()).not.toContain('data-rejected="broken.json"');
  });

  it('refuses a page left open on a pause the run has since left for a later one', async () => {
    const ghost = { task_description: 'Review the plan', config: { max_rounds: 1, personas: ['coordinator', 'ghost'] } };
    const id = await runCommand('ghost.json', ghost);
    const first = (await backend.app.deps.ledger.load(id))?.pause?.pause_id as string;
    const continued = await post(`/decisions/${id}`, { decision: 'continue', pause_id: first });
    expect(continued.status).toBe(303);
    // No watcher runs here: the console carries the run on itself, and it pauses again on the missing persona.
    expect(continued.headers.get('location')).toBe(`/runs/${id}?done=continue-console`);
    await expect.poll(async () => (await backend.app.deps.ledger.load(id))?.pause?.pause_id ?? first, { timeout: 20_000 }).not.toBe(first);
    const later = (await backend.app.deps.ledger.load(id))?.pause?.pause_id;
    expect(later).toBeDefined();
    expect(later).not.toBe(first);
    const stale = await post(`/decisions/${id}`, { decision: 'stop', pause_id: first, note: 'too late' });
    expect(stale.status).toBe(409);
    expect(await stale.text()).toMatch(
      // The time in a <time> element, which the page shows in the reader's own zone.
      /decided this pause first \(continue, at <time>\d{4}-[^<]+<\/time>\)\. Your decision was not recorded\. The run has paused again since/,
    );
    expect((await backend.app.deps.ledger.load(id))?.status).toBe('paused');
  });

  it('offers a run nobody runs any more a Resume button, never a terminal command, and carries it on to its end', async () => {
    const id = await runCommand('leftover.json', { task_description: 'The requirements are unclear: pick a cache for the session store' });
    // Continued from a terminal with no watcher to take it: nobody runs it now.
    expect((await runCli(['hitl', 'decide', id, 'continue'], { cwd: ws.dir })).code).toBe(0);
    const page = await (await get(`/runs/${id}`)).text();
    expect(page).toContain('badge s-continued');
    expect(page).toContain('A person chose continue; no watcher has taken it up yet.');
    expect(page).toContain('<strong>Resume</strong> at the top of this page');
    expect(page).toContain(`Resume run ${id}</button>`);
    expect(page).not.toContain('maestro run --resume');
    const resumed = await post(`/runs/${id}/resume`, {});
    expect(resumed.headers.get('location')).toBe(`/runs/${id}?done=resumed`);
    await expect.poll(async () => (await backend.app.deps.ledger.load(id))?.status, { timeout: 20_000 }).toBe('completed');
    expect((await post(`/runs/${id}/resume`, {})).status).toBe(409);
    // The trail names who resumed it, as it names who decided.
    expect(await (await get(`/runs/${id}`)).text()).toMatch(/RUN_RESUMED<\/td>(?:(?!<\/tr>)[\s\S])*tester \(via the console\)/);
  });

  it('says so when a run it carries on cannot go on for another reason than a stop or another process', async () => {
    const id = await runCommand('fails-on.json', { task_description: 'The requirements are unclear: pick a job runner' });
    const resume = backend.app.resume;
    backend.app.resume = async () => {
      throw new Error('the disk is full');
    };
    try {
      const pauseId = (await backend.app.deps.ledger.load(id))?.pause?.pause_id as string;
      const continued = await post(`/decisions/${id}`, { decision: 'continue', pause_id: pauseId });
      expect(continued.headers.get('location')).toBe(`/runs/${id}?done=continue-console`);
      await expect.poll(() => problems.join('\n'), { timeout: 10_000 }).toContain(`run ${id} could not go on: the disk is full`);
      expect(backend.isCarrying(id)).toBe(false);
    } finally {
      backend.app.resume = resume;
    }
  });

  it('leaves a continued run to a running watcher when there is one', async () => {
    const id = await runCommand('watched.json', { task_description: 'The requirements are unclear: pick a log store' });
    const registry = new FsWatcherRegistry(path.join(ws.dir, '.maestro', 'watchers'));
    const self = FsWatcherRegistry.newIdentity(process.pid);
    await registry.register({ ...self, started_at: new Date().toISOString(), once: false, version: 'test' });
    try {
      const pauseId = (await backend.app.deps.ledger.load(id))?.pause?.pause_id as string;
      const continued = await post(`/decisions/${id}`, { decision: 'continue', pause_id: pauseId });
      expect(continued.headers.get('location')).toBe(`/runs/${id}?done=continue-watcher`);
      const page = await (await get(`/runs/${id}?done=continue-watcher`)).text();
      expect(page).toContain('The running watcher takes the run up');
      expect(page).toContain(`data-follow="${id}"`);
      expect(backend.isCarrying(id)).toBe(false);
    } finally {
      await registry.unregister(self);
    }
  });

  it('counts a process resuming one run (run --resume, a console) as no watcher: it carries a continued run itself, and status says so', async () => {
    const id = await runCommand('resumer.json', { task_description: 'The requirements are unclear: pick a metrics store' });
    const registry = new FsWatcherRegistry(path.join(ws.dir, '.maestro', 'watchers'));
    const self = FsWatcherRegistry.newIdentity(process.pid);
    await registry.register({ ...self, started_at: new Date().toISOString(), once: true, version: 'test', resuming: 'R-other' });
    try {
      const status = await runCli(['status'], { cwd: ws.dir });
      expect(status.stdout).toContain('watcher    not running');
      expect(status.stdout).toContain(`pid ${process.pid} is resuming run R-other only (it takes no command from commands/)`);
      const pauseId = (await backend.app.deps.ledger.load(id))?.pause?.pause_id as string;
      const continued = await post(`/decisions/${id}`, { decision: 'continue', pause_id: pauseId });
      expect(continued.headers.get('location')).toBe(`/runs/${id}?done=continue-console`);
      await expect.poll(async () => (await backend.app.deps.ledger.load(id))?.status, { timeout: 20_000 }).not.toBe('continued');
    } finally {
      await registry.unregister(self);
    }
  });

  it('decides a selection at once with one note, each run bound to the pause its card showed, and lists what came of each', async () => {
    const a = await runCommand('many-a.json', { task_description: 'The requirements are unclear: pick a search engine' });
    const b = await runCommand('many-b.json', { task_description: 'The requirements are unclear: pick a message bus' });
    const reason = (await backend.app.deps.ledger.load(a))?.pause?.reason_code as string;
    const page = await (await get(`/decisions?select=${reason}`)).text();
    expect(page).toContain('Decide several at once');
    const picks = [...page.matchAll(/name="pick" form="decide-many" value="([^"]+)" checked>/g)].map((m) => m[1] as string);
    expect(picks.some((p) => p.startsWith(`${a} `))).toBe(true);
    expect(picks.some((p) => p.startsWith(`${b} `))).toBe(true);
    const pickOf = (id: string) => picks.find((p) => p.startsWith(`${id} `)) as string;
    const many = (form: URLSearchParams) =>
      ui.server.request(`${ORIGIN}/decisions`, {
        method: 'POST',
        body: form,
        headers: { ...ui.auth, origin: ORIGIN, 'content-type': 'application/x-www-form-urlencoded' },
      });
    const bare = new URLSearchParams([
      ['decision', 'stop'],
      ['pick', pickOf(a)],
      ['pick', pickOf(b)],
    ]);
    const refused = await many(bare);
    expect(refused.status).toBe(400);
    // The refused selection comes back as it was left: both runs still ticked.
    const ticked = [...(await refused.text()).matchAll(/name="pick" form="decide-many" value="([^"]+)" checked>/g)].map((m) => m[1]);
    expect(ticked).toEqual(expect.arrayContaining([pickOf(a), pickOf(b)]));
    const noPick = await many(
      new URLSearchParams([
        ['decision', 'stop'],
        ['note', 'typed before ticking'],
      ]),
    );
    expect(await noPick.text()).toContain('typed before ticking</textarea>');
    expect((await backend.app.deps.ledger.load(a))?.status).toBe('paused');
    const stale = `${b} ${b}-p9`;
    const form = new URLSearchParams([
      ['decision', 'stop'],
      ['note', 'both are out of scope'],
      ['pick', pickOf(a)],
      // The same run ticked twice is one decision, not a second one told that someone decided first.
      ['pick', pickOf(a)],
      ['pick', stale],
    ]);
    const res = await many(form);
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain('Decided 1 of 2 selected run(s)');
    expect(text).not.toContain('decided this pause first');
    expect(text).toMatch(new RegExp(`data-run="${a}"><a [^>]+>${a}</a>: stop — stopped`));
    expect(text).toMatch(new RegExp(`class="refused" data-run="${b}">.*not decided`));
    expect((await backend.app.deps.ledger.load(a))?.status).toBe('stopped');
    expect((await backend.app.deps.ledger.load(a))?.hitl.at(-1)).toMatchObject({ note: 'both are out of scope', by: { name: 'tester' } });
    expect((await backend.app.deps.ledger.load(b))?.status).toBe('paused');
  });

  it('decides the pause the page showed, and refuses the same page again (stale) or a decision with no pause', async () => {
    const page = await (await get('/decisions')).text();
    const pauseId = new RegExp(`name="pause_id" value="(${ids.paused}[^"]*)"`).exec(page)?.[1] as string;
    expect(pauseId).toBeDefined();
    expect((await post(`/decisions/${ids.paused}`, { decision: 'continue' })).status).toBe(400);
    expect((await post(`/decisions/${ids.paused}`, { decision: 'maybe', pause_id: pauseId })).status).toBe(409);
    // A pause the run never had is refused for what it is, not as "paused again since".
    const unknown = await post(`/decisions/${ids.paused}`, { decision: 'continue', pause_id: `${ids.paused}-p9` });
    expect(unknown.status).toBe(409);
    expect(await unknown.text()).not.toContain('paused again since');
    // A form that names two decisions is refused, never decided by whichever came last.
    const twice: [string, string][] = [
      ['decision', 'stop'],
      ['decision', 'continue'],
      ['pause_id', pauseId],
      ['note', 'both'],
    ];
    const both = await post(`/decisions/${ids.paused}`, twice);
    expect(both.status).toBe(400);
    expect(await both.text()).toContain('the form names more than one decision');
    // Stop asks why: without a reason nothing changes.
    const bare = await post(`/decisions/${ids.paused}`, { decision: 'stop', pause_id: pauseId });
    expect(bare.status).toBe(400);
    expect(await bare.text()).toContain('Say why you stop the run');
    const decided = await post(`/decisions/${ids.paused}`, { decision: 'stop', pause_id: pauseId, note: 'not this quarter' });
    expect(decided.status).toBe(303);
    // After a decision, the next pause waiting for a person is offered.
    const after = await (await get(decided.headers.get('location') as string)).text();
    expect(after).toMatch(/Next waiting for a person: <a href="\/runs\/[^"]+">/);
    // The person who loses the race reads who won, in a plain sentence, and keeps what they typed.
    const stale = await post(`/decisions/${ids.paused}`, { decision: 'continue', pause_id: pauseId, note: 'ship it, budget approved' });
    expect(stale.status).toBe(409);
    const lost = await stale.text();
    expect(lost).toMatch(
      /tester via the console from this machine decided this pause first \(stop, at [^)]+\)\. Your decision was not recorded\./,
    );
    expect(lost).toContain('ship it, budget approved</textarea>');
    const audit = await runCli(['audit', 'show', ids.paused], { cwd: ws.dir });
    expect(audit.stdout).toContain('HITL_STOP by USER');
    expect(audit.stdout).not.toContain('HITL_CONTINUE');
    // Who decided, how and from where: in the trail, on the run's page and in `hitl show`.
    expect(audit.stdout).toContain('decided_by=tester from=this machine');
    const log = await readFile(path.join(ws.dir, '.maestro', 'audit', `${ids.paused}.jsonl`), 'utf8');
    const record = log.split('\n').find((l) => l.includes('"HITL_DECIDED"')) ?? '';
    expect(JSON.parse(record).details).toMatchObject({ decided_by: 'tester', via: 'console', from: 'this machine' });
    const run = await (await get(`/runs/${ids.paused}`)).text();
    expect(run).toContain('by <strong class="author">tester via the console from this machine</strong> — not this quarter');
    expect(run).toContain('USER · tester (via the console)');
    // A gate's record that carries another gate's decision says so, not "SYSTEM · ethics ()".
    expect(run).not.toMatch(/SYSTEM · [a-z_]+ \(\)/);
    // Only an open pause offers a decision: the stopped run offers none, anywhere.
    expect(run).not.toContain('Paused for a person');
    expect(run).not.toContain('class="decide-form"');
    expect(await (await get('/decisions')).text()).not.toContain(`data-run="${ids.paused}"`);
    const show = await runCli(['hitl', 'show', ids.paused], { cwd: ws.dir });
    expect(show.stdout).toContain('by tester via the console from this machine — not this quarter');
  });
});
