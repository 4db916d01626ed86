import { timingSafeEqual } from 'node:crypto';
import { Hono, type Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { getCookie, setCookie } from 'hono/cookie';
import { streamSSE } from 'hono/streaming';
import { HitlRefusedError } from '../../app/hitl.js';
import type { LiveEvent } from '../../app/live-runs.js';
import type { ConsoleBackend } from '../../compose/console.js';
import { SHOWN_RUN_STATUSES } from '../../domain/run-liveness.js';
import { screenText } from '../../domain/screen.js';
import { renderTranscript } from '../../domain/transcript.js';
import { pausedRuns, showDetails } from '../hitl.js';
import { TranscriptFeed } from '../transcript-feed.js';
import { APP_CSS, APP_JS } from './assets.js';
import { AddForm, commandOf, DecisionForm, readForm, RequeueForm } from './forms.js';
import { decisionsPage, type findingsBlock, layout, livePage, problemPage, queuePage, runPage, runsPage, type Notice } from './pages.js';
import type { SafeHtml } from './html.js';

export interface ConsoleServerOptions {
  readonly backend: ConsoleBackend;
  /** The secret every request must carry (the `?token=` of the printed URL, then a cookie). */
  readonly token: string;
  /**
   * `host:port` values a request may name (anything else may be a DNS rebinding: refused); undefined
   * when the console listens beyond this machine, where people reach it by names it cannot know (the
   * token, which they set, still guards it).
   */
  readonly hosts: () => readonly string[] | undefined;
}

const COOKIE = 'maestro_ui';
const RUN_ID = /^[A-Za-z0-9_.-]{1,200}$/;
/** What a page says after a write, by a fixed key (never text from the request). */
const DONE: Readonly<Record<string, string>> = {
  continue:
    'Decided: continue. A running watcher (maestro watch) or, with an engine, a worker resumes the run from its checkpoint; ' +
    'with neither, resume it with maestro run --resume and its run id.',
  stop: 'Decided: stop. The run ended as STOPPED, with an artifact that records the stop.',
  requeued: 'Requeued: the command is back in commands/ and will be checked afresh.',
  added: 'Added: the command is in commands/ and waits for a watcher.',
};
const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy': [
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'",
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  ].join('; '),
  'X-Content-Type-Options': 'nosniff',
  // Not `no-referrer`: with it a browser sends `Origin: null` on a form's POST, and writes need the origin.
  'Referrer-Policy': 'same-origin',
  'Cache-Control': 'no-store',
  'X-Frame-Options': 'DENY',
};

function sameSecret(given: string | undefined, token: string): boolean {
  if (given === undefined) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * The console's HTTP surface (`maestro ui`). Every request is checked: its Host (a name the console
 * listens on), its token (the printed URL's `?token=`, kept as a same-site cookie), and for writes
 * its origin (this console's own pages only). Pages are server-rendered; every text is screened.
 */
export function consoleServer(options: ConsoleServerOptions): Hono {
  const app = new Hono();
  app.use('*', async (c, next) => {
    await guard(c, options, next);
    for (const [k, v] of Object.entries(SECURITY_HEADERS)) c.header(k, v);
  });
  app.use(
    '*',
    bodyLimit({
      maxSize: 512 * 1024,
      onError: (c) => c.html(page(c, options, 'Too large', problemPage('The request is larger than 512 KB.')), 413),
    }),
  );
  app.get('/static/app.css', (c) => c.body(APP_CSS, 200, { 'Content-Type': 'text/css; charset=utf-8' }));
  app.get('/static/app.js', (c) => c.body(APP_JS, 200, { 'Content-Type': 'text/javascript; charset=utf-8' }));
  app.get('/', (c) => c.redirect('/runs', 303));
  app.get('/favicon.ico', (c) => c.body(null, 204));
  registerRuns(app, options);
  registerDecisions(app, options);
  registerQueue(app, options);
  registerLive(app, options);
  app.notFound((c) => c.html(page(c, options, 'Not found', problemPage('There is no such page.')), 404));
  app.onError((error, c) => {
    const message = error instanceof Error ? error.message : String(error);
    return c.html(page(c, options, 'Error', problemPage(`The console could not do this: ${screenText(message)}`)), 500);
  });
  return app;
}

async function guard(c: Context, options: ConsoleServerOptions, next: () => Promise<void>): Promise<Response | undefined> {
  const host = c.req.header('host') ?? '';
  const allowed = options.hosts();
  if (allowed && !allowed.includes(host)) return void (c.res = c.text(`this console does not answer to the host "${host}"`, 421));
  const url = new URL(c.req.url);
  const query = url.searchParams.get('token') ?? undefined;
  if (c.req.method === 'GET' && sameSecret(query, options.token)) {
    // The token leaves the address bar (and the history) at once; the cookie carries it from now on.
    setCookie(c, COOKIE, options.token, { httpOnly: true, sameSite: 'Strict', path: '/' });
    url.searchParams.delete('token');
    return void (c.res = c.redirect(`${url.pathname}${url.search}`, 303));
  }
  if (!sameSecret(getCookie(c, COOKIE), options.token)) {
    return void (c.res = c.text('maestro ui: open the address `maestro ui` printed (it carries the token)', 401));
  }
  if (c.req.method !== 'GET' && c.req.method !== 'HEAD') {
    const origin = c.req.header('origin');
    const site = c.req.header('sec-fetch-site');
    if (origin !== `http://${host}` || (site !== undefined && site !== 'same-origin')) {
      return void (c.res = c.text('maestro ui: a change is accepted only from the console’s own pages (same origin)', 403));
    }
  }
  await next();
  return undefined;
}

function page(c: Context, options: ConsoleServerOptions, title: string, body: SafeHtml, notice?: Notice): string {
  const active = `/${c.req.path.split('/')[1] ?? ''}`;
  return layout({ title, active, workspace: options.backend.label, body, ...(notice ? { notice } : {}) });
}

function doneNotice(c: Context): Notice | undefined {
  const key = c.req.query('done');
  const text = key === undefined ? undefined : DONE[key];
  return text ? { kind: 'ok', text } : undefined;
}

function registerRuns(app: Hono, options: ConsoleServerOptions): void {
  const { backend } = options;
  app.get('/runs', async (c) => {
    const wanted = c.req.query('status') || undefined;
    if (wanted !== undefined && !(SHOWN_RUN_STATUSES as readonly string[]).includes(wanted)) {
      return c.html(page(c, options, 'Runs', problemPage(`"${wanted}" is not a status: ${SHOWN_RUN_STATUSES.join(', ')}`)), 400);
    }
    const runs = (await backend.runs()).filter((r) => !wanted || r.status === wanted);
    return c.html(page(c, options, 'Runs', runsPage(runs, wanted)));
  });
  app.get('/runs/:id', async (c) => {
    const runId = c.req.param('id');
    const unknown = () => c.html(page(c, options, 'Unknown run', problemPage(`There is no run "${runId}" in this workspace.`)), 404);
    if (!RUN_ID.test(runId)) return unknown();
    const [run, audit] = await Promise.all([backend.run(runId), backend.audit(runId)]);
    if (!run) {
      if (!audit) return unknown();
      const body = problemPage(`Run ${runId} has no checkpoint (it ended before one was kept); its audit log: maestro audit show ${runId}`);
      return c.html(page(c, options, runId, body), 200);
    }
    const details = await showDetails({ app: backend.app, runId, state: run.state });
    const transcript = renderTranscript(run.state, run.status, backend.app.deps.config.prices);
    const artifact = await backend.artifact(run.state);
    const body = runPage({ ...run, transcript, artifact, audit, details });
    return c.html(page(c, options, runId, body, doneNotice(c)));
  });
  app.get('/runs/:id/pictures/:file', async (c) => {
    const runId = c.req.param('id');
    const run = RUN_ID.test(runId) ? await backend.run(runId) : undefined;
    const svg = run ? await backend.picture(run.state, c.req.param('file')) : undefined;
    if (svg === undefined) return c.text('no such picture', 404);
    return c.body(svg, 200, {
      'Content-Type': 'image/svg+xml',
      'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'",
    });
  });
}

async function decisionRows(backend: ConsoleBackend) {
  const rows = await pausedRuns(backend.app);
  const out = [];
  for (const row of rows) {
    const state = await backend.app.deps.ledger.load(row.run_id).catch(() => undefined);
    if (state) out.push({ row, details: await showDetails({ app: backend.app, runId: row.run_id, state }) });
  }
  return out;
}

function registerDecisions(app: Hono, options: ConsoleServerOptions): void {
  const { backend } = options;
  app.get('/decisions', async (c) => c.html(page(c, options, 'Decisions', decisionsPage(await decisionRows(backend)), doneNotice(c))));
  app.post('/decisions/:id', async (c) => {
    const runId = c.req.param('id');
    const refuse = async (text: string, status: 404 | 409 | 400) =>
      c.html(page(c, options, 'Decisions', decisionsPage(await decisionRows(backend)), { kind: 'refused', text }), status);
    // A decision is always bound to the pause the page showed: without one it could decide a later pause.
    const form = readForm(DecisionForm, await c.req.parseBody().catch(() => undefined));
    if (!form.ok) return refuse(`Refused: ${form.problem}; nothing changed. Reload the page and decide again.`, 400);
    if (!RUN_ID.test(runId)) return refuse(`Refused: there is no run "${runId}" in this workspace; nothing changed.`, 404);
    const { decision, pause_id: pauseId } = form.value;
    try {
      const note = form.value.note?.trim();
      await backend.decide({ runId, decision, pauseId, ...(note ? { note } : {}) });
    } catch (error) {
      if (error instanceof HitlRefusedError) return refuse(`Refused: ${error.message}`, 409);
      throw error;
    }
    return c.redirect(`/runs/${encodeURIComponent(runId)}?done=${decision}`, 303);
  });
}

function registerQueue(app: Hono, options: ConsoleServerOptions): void {
  const { backend } = options;
  app.get('/queue', async (c) => c.html(page(c, options, 'Queue', queuePage(await backend.queue()), doneNotice(c))));
  app.post('/queue/requeue', async (c) => {
    const form = readForm(RequeueForm, await c.req.parseBody().catch(() => undefined));
    const name = form.ok ? form.value.name : '';
    const known = (await backend.queue()).rejected.some((r) => r.name === name);
    if (!known) {
      const notice: Notice = { kind: 'refused', text: `Refused: "${name}" is not in .maestro/rejected/; nothing changed.` };
      return c.html(page(c, options, 'Queue', queuePage(await backend.queue()), notice), 404);
    }
    await backend.requeue(name);
    return c.redirect('/queue?done=requeued', 303);
  });
  app.post('/queue/add', async (c) => {
    const form = readForm(AddForm, await c.req.parseBody().catch(() => undefined));
    if (!form.ok) {
      const notice: Notice = { kind: 'refused', text: `Refused: ${form.problem}; nothing was written.` };
      return c.html(page(c, options, 'Queue', queuePage(await backend.queue()), notice), 400);
    }
    const { name, text } = await commandOf(form.value);
    const again = async (notice: Notice, findings: Parameters<typeof findingsBlock>[0] | undefined, status: 200 | 422) =>
      c.html(
        page(c, options, 'Queue', queuePage(await backend.queue(), { name, text, ...(findings ? { findings } : {}) }), notice),
        status,
      );
    if (!text.trim())
      return again({ kind: 'refused', text: 'Refused: paste a command or choose a file; nothing was written.' }, undefined, 422);
    if (form.value.action === 'check') {
      const findings = await backend.check(text);
      const ok = findings.length === 0;
      return again(
        {
          kind: ok ? 'ok' : 'refused',
          text: ok
            ? 'Checked: every gate would let it run (nothing written yet).'
            : 'Checked: it would not run unattended (nothing written).',
        },
        findings,
        ok ? 200 : 422,
      );
    }
    const result = await backend.add(name || `ui-${Date.now()}.json`, text);
    if (result.added) return c.redirect('/queue?done=added', 303);
    const why = result.problem ?? 'it would not run unattended';
    return again({ kind: 'refused', text: `Refused: ${why}; nothing was written into commands/.` }, result.findings, 422);
  });
}

/** A value with every string in it screened. */
function screenedDeep(value: unknown): unknown {
  if (typeof value === 'string') return screenText(value);
  if (Array.isArray(value)) return value.map(screenedDeep);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, screenedDeep(v)]));
  return value;
}

function registerLive(app: Hono, options: ConsoleServerOptions): void {
  app.get('/live', (c) => c.html(page(c, options, 'Live', livePage())));
  app.get('/live/events', (c) =>
    streamSSE(c, async (stream) => {
      let chain = Promise.resolve();
      // Every string leaves screened, whatever its record (a checkpoint kept raw by an older maestro too).
      const send = (event: string, data: unknown) => {
        chain = chain.then(() => stream.writeSSE({ event, data: JSON.stringify(screenedDeep(data)) })).catch(() => undefined);
      };
      // The same feed as `run --follow`: every string in an event has been through the detector.
      const feed = new TranscriptFeed((e) => send('transcript', e));
      const listener = (e: LiveEvent) => {
        if (e.kind === 'progress') feed.onProgress(e.event);
        else send('status', e);
      };
      const stop = await options.backend.live.subscribe(listener);
      send('ready', {});
      await new Promise<void>((resolve) => {
        const ping = setInterval(() => send('ping', {}), 15_000);
        stream.onAbort(() => {
          clearInterval(ping);
          stop();
          resolve();
        });
      });
    }),
  );
}
