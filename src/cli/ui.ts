import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { Command } from 'commander';
import { resolveWorkspace } from '../config.js';
import { ExitError } from '../domain/errors.js';
import { WORKSPACE_OPTION, type Io } from './io.js';

interface UiFlags {
  readonly host: string;
  readonly port: string;
  readonly token?: string;
  readonly workspace?: string;
}

/** Interfaces only this machine reaches: the console listens there with a token of its own. */
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1']);
/** A token a person sets must be hard to guess: as long as the one the console draws by itself (in effect). */
const MIN_TOKEN = 24;
/** The smallest number of distinct characters a token set by a person has (a random one has about 20). */
const MIN_TOKEN_VARIETY = 8;

/** A running console: where it answers (with its token), and how to stop it. */
export interface RunningConsole {
  readonly url: string;
  close(): Promise<void>;
}

/** `maestro ui`: a web console over this workspace, for people who decide (runs, live, decisions, queue). */
export function registerUi(program: Command, io: Io): void {
  program
    .command('ui')
    .description('serve a web console for this workspace: runs, a live view, decisions on paused runs, the queue')
    .option('--host <address>', 'the interface to listen on (another than 127.0.0.1 needs --token)', '127.0.0.1')
    .option('--port <port>', 'the port (0: any free port)', '0')
    .option(
      '--token <secret>',
      `the token every request must carry (at least ${MIN_TOKEN} characters, ${MIN_TOKEN_VARIETY} different, URL-safe; also $MAESTRO_UI_TOKEN); default: a random one`,
    )
    .option(...WORKSPACE_OPTION)
    .addHelpText('after', '\nOpen the printed address (it carries the token). Ctrl-C stops the console; runs are not affected.')
    .action(async (opts: UiFlags) => {
      const console = await startConsole(io, opts);
      io.stdout.write(`maestro ui: ${console.url}\n`);
      if (!LOOPBACK.has(opts.host)) io.stdout.write(`(from another machine: this machine's name or address in place of ${opts.host})\n`);
      await untilStopped();
      await console.close();
    });
}

/** Starts the console (tests call it in-process); refuses a non-loopback interface without a token set by a person. */
export async function startConsole(io: Io, opts: UiFlags): Promise<RunningConsole> {
  const given = opts.token ?? io.env.MAESTRO_UI_TOKEN ?? undefined;
  const problem = given === undefined ? undefined : tokenProblem(given);
  if (problem) throw new ExitError(2, `maestro ui: --token ${problem}`);
  if (!LOOPBACK.has(opts.host) && given === undefined) {
    throw new ExitError(
      2,
      `maestro ui: listening on ${opts.host} needs a token you set (--token or $MAESTRO_UI_TOKEN), since others can reach it`,
    );
  }
  const port = Number(opts.port);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new ExitError(2, `maestro ui: --port takes 0–65535, not "${opts.port}"`);
  }
  const token = given ?? randomBytes(24).toString('base64url');
  const { openConsole } = await import('../compose/console.js');
  const backend = await openConsole({ workspace: resolveWorkspace(opts.workspace, io.env, io.cwd), env: io.env });
  const [{ serve }, { consoleServer }] = await Promise.all([import('@hono/node-server'), import('./ui/server.js')]);
  let bound = 0;
  const hostPart = opts.host.includes(':') ? `[${opts.host}]` : opts.host;
  const hosts = () => (LOOPBACK.has(opts.host) ? ['127.0.0.1', 'localhost', '[::1]'].map((h) => `${h}:${bound}`) : undefined);
  const app = consoleServer({ backend, token, hosts });
  const server = await new Promise<ReturnType<typeof serve>>((resolve, reject) => {
    const s = serve({ fetch: app.fetch, port, hostname: opts.host }, () => resolve(s));
    s.once('error', reject);
  });
  bound = (server.address() as AddressInfo).port;
  return {
    url: `http://${hostPart}:${bound}/?token=${token}`,
    close: async () => {
      // Live views hold their connections open: they are ended with the console.
      (server as { closeAllConnections?: () => void }).closeAllConnections?.();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await backend.close();
    },
  };
}

/**
 * Why a token a person set would guard the console poorly, if it would: too short, made of too few
 * characters (`aaaa…`, a pattern repeated, only spaces), or holding what the printed address or the
 * cookie would mangle (anything outside letters, digits, `-`, `_`, `.` and `~`).
 */
function tokenProblem(token: string): string | undefined {
  if (token.length < MIN_TOKEN) return `needs at least ${MIN_TOKEN} characters`;
  if (!/^[A-Za-z0-9._~-]+$/.test(token)) return 'takes only letters, digits, -, _, . and ~ (it goes into an address and a cookie)';
  if (new Set(token).size < MIN_TOKEN_VARIETY) return `needs at least ${MIN_TOKEN_VARIETY} different characters (it is easy to guess)`;
  return undefined;
}

/** Until Ctrl-C or SIGTERM. */
function untilStopped(): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      process.off('SIGINT', done);
      process.off('SIGTERM', done);
      resolve();
    };
    process.on('SIGINT', done);
    process.on('SIGTERM', done);
  });
}
