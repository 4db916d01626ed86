import { Hono, type Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { screenText } from '../../domain/screen.js';
import { bearerOf } from './access.js';
import { APP_CSS } from './assets.js';
import { APP_JS } from './client.js';
import { type ConsoleEnv, type ConsoleServerOptions, page, RUN_ID } from './context.js';
import { registerOutcome } from './outcome.js';
import { problemPage, signInPage } from './pages.js';
import { registerDecisions } from './routes-decisions.js';
import { registerQueue } from './routes-queue.js';
import { registerLive, registerRuns } from './routes-runs.js';

export type { ConsoleEnv, ConsoleServerOptions } from './context.js';

/** Served to anyone who reaches the console: the code of its pages, nothing of the workspace. */
const PUBLIC = new Set(['/static/app.css', '/static/app.js', '/favicon.ico']);
const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy': [
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob:; connect-src 'self'",
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  ].join('; '),
  'X-Content-Type-Options': 'nosniff',
  // Not `no-referrer`: with it a browser sends `Origin: null` on a POST, and writes need the origin.
  'Referrer-Policy': 'same-origin',
  'Cache-Control': 'no-store',
  'X-Frame-Options': 'DENY',
};

/**
 * The console's HTTP surface (`maestro ui`). Every request is checked: its Host (a name the console
 * listens on), its session (`Authorization: Bearer`, which only the console's own script in a tab
 * that signed in can add), and for writes its origin (this console's own pages only). Pages are
 * server-rendered; every text is screened. A request without a session gets the sign-in page and
 * nothing of the workspace.
 */
export function consoleServer(options: ConsoleServerOptions): Hono<ConsoleEnv> {
  const app = new Hono<ConsoleEnv>();
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
  app.get('/favicon.ico', (c) => c.body(null, 204));
  registerSession(app, options);
  app.get('/', (c) => c.redirect('/runs', 303));
  registerRuns(app, options);
  registerDecisions(app, options);
  registerQueue(app, options);
  registerLive(app, options);
  registerOutcome(app, {
    runId: RUN_ID,
    confirm: (input) => options.backend.app.confirmOutcome(input),
    person: (c) => c.get('session').name,
    ...(options.placeOf ? { placeOf: options.placeOf } : {}),
    page: (c, body) => page(c, options, 'Outcome', body),
  });
  app.notFound((c) => c.html(page(c, options, 'Not found', problemPage('There is no such page.')), 404));
  app.onError((error, c) => {
    const message = error instanceof Error ? error.message : String(error);
    return c.html(page(c, options, 'Error', problemPage(`The console could not do this: ${screenText(message)}`)), 500);
  });
  return app;
}

async function guard(c: Context<ConsoleEnv>, options: ConsoleServerOptions, next: () => Promise<void>): Promise<void> {
  const host = c.req.header('host') ?? '';
  const allowed = options.hosts();
  if (allowed && !allowed.includes(host)) return void (c.res = c.text(`this console does not answer to the host "${host}"`, 421));
  if (PUBLIC.has(c.req.path)) return next();
  if (c.req.method !== 'GET' && c.req.method !== 'HEAD') {
    const origin = c.req.header('origin');
    const site = c.req.header('sec-fetch-site');
    if (origin !== `${options.scheme ?? 'http'}://${host}` || (site !== undefined && site !== 'same-origin')) {
      return void (c.res = c.text('maestro ui: a change is accepted only from the console’s own pages (same origin)', 403));
    }
  }
  if (c.req.path === '/session') return next();
  const session = await options.access.session(bearerOf(c.req.header('authorization')));
  if (!session) return void (c.res = c.html(signInPage(), 401));
  c.set('session', session);
  await next();
}

/**
 * `POST /session` trades a person's token (the printed address's `#token=`, or typed in) for a
 * session of one tab; `DELETE /session` signs the tab out. A refusal says nothing of who exists.
 */
function registerSession(app: Hono<ConsoleEnv>, options: ConsoleServerOptions): void {
  app.post('/session', async (c) => {
    const body = (await c.req.json().catch(() => undefined)) as { token?: unknown } | undefined;
    // The page's script sends JSON; a form sent without it (JavaScript off or blocked) is not a wrong token.
    if (body === undefined)
      return c.json(
        { error: 'Signing in needs JavaScript on for this page: the token was not checked. Turn it on and sign in again.' },
        400,
      );
    const token = typeof body?.token === 'string' ? body.token.trim() : '';
    const session = token ? await options.access.signIn(token) : undefined;
    // Asked only when a token was tried: the tokens file is read again then, so the answer is current.
    if (!session && token && options.access.closed) {
      const why =
        'Nobody can sign in to this console now: its tokens file cannot be used. Whoever runs the console sees why in its terminal.';
      return c.json({ error: why }, 503);
    }
    if (!session) return c.json({ error: 'This token does not open this console (mistyped, expired, or for another console).' }, 401);
    return c.json({ session: session.id, name: session.name, expires_at: new Date(session.expiresAt).toISOString() });
  });
  app.delete('/session', (c) => {
    const id = bearerOf(c.req.header('authorization'));
    if (id) options.access.signOut(id);
    return c.body(null, 204);
  });
}
