import { readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Command } from 'commander';
import { resolveWorkspace } from '../config.js';
import { ExitError } from '../domain/errors.js';
import type { ConsoleBackend } from '../compose/console.js';
import { cliAuthor } from './decision-author.js';
import { WORKSPACE_OPTION, type Io } from './io.js';
import type { ConsolePerson } from './ui/access.js';
import { listenProblem } from './ui/listen-problem.js';

interface UiFlags {
  readonly host: string;
  readonly port: string;
  /** Refused: a token in argv is shown to every user of the machine (`ps`). */
  readonly token?: string;
  readonly tokenFile?: string;
  readonly tokenTtl?: string;
  readonly tlsCert?: string;
  readonly tlsKey?: string;
  readonly insecureHttp?: boolean;
  readonly workspace?: string;
}

/** Interfaces only this machine reaches. */
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1']);
const DEFAULT_TTL = '12h';

/** A running console: where it answers (with the printed token, if it has one), and how to stop it. */
export interface RunningConsole {
  readonly url: string;
  close(): Promise<void>;
}

/** `maestro ui`: a web console over this workspace, for people who decide (runs, live, decisions, queue). */
export function registerUi(program: Command, io: Io): void {
  const ui = program
    .command('ui')
    .description('serve a web console for this workspace: runs, a live view, decisions on paused runs, the queue')
    .option('--host <address>', 'the interface to listen on (another than 127.0.0.1 needs TLS, or --insecure-http)', '127.0.0.1')
    .option('--port <port>', 'the port (0: any free port)', '0')
    .option('--token-file <file>', 'a file only you can read holding the token (or $MAESTRO_UI_TOKEN); default: a random one, printed')
    .option('--token <secret>', 'refused: every user of this machine would see it (ps); use --token-file or $MAESTRO_UI_TOKEN')
    .option('--token-ttl <age>', `how long the token and each sign-in last: 30m, 12h, 7d (default ${DEFAULT_TTL})`)
    .option('--tls-cert <file>', 'serve HTTPS with this certificate (PEM; with --tls-key)')
    .option('--tls-key <file>', 'the private key of --tls-cert (PEM)')
    .option('--insecure-http', 'on another interface than 127.0.0.1, serve plain HTTP anyway (tokens then cross the network in clear)')
    .option(...WORKSPACE_OPTION)
    .addHelpText(
      'after',
      '\nOpen the printed address (it carries the token; with ui.tokens_file each person signs in with their own). Ctrl-C stops the console; runs are not affected.',
    )
    .action(async (opts: UiFlags) => {
      const console = await startConsole(io, opts);
      io.stdout.write(`maestro ui: ${console.url}\n`);
      if (!LOOPBACK.has(opts.host)) io.stdout.write(`(from another machine: this machine's name or address in place of ${opts.host})\n`);
      await untilStopped();
      await console.close();
    });
  ui.command('add-person')
    .description('give a person a token of their own for the console (kept in ui.tokens_file as its hash; printed once)')
    .argument('<name>', 'the name their decisions are recorded under')
    .option('--expires <date>', 'when the token stops working (an ISO date or time)')
    .option('--replace', 'give someone already listed a new token (the old one stops working)')
    .option(...WORKSPACE_OPTION)
    // `--workspace` after `add-person`, or before it where `ui` itself takes it ("maestro ui --workspace ws add-person …").
    .action(async (name: string, opts: { expires?: string; replace?: boolean; workspace?: string }, command: Command) => {
      const workspace = opts.workspace ?? (command.parent?.opts() as { workspace?: string } | undefined)?.workspace;
      await (await import('./ui/add-person.js')).addPerson(io, name, { ...opts, ...(workspace ? { workspace } : {}) });
    });
}

/** Starts the console (tests call it in-process) once its flags hold together; refuses what would leave it open to others. */
export async function startConsole(io: Io, opts: UiFlags): Promise<RunningConsole> {
  const settings = await checkFlags(io, opts);
  const { openConsole } = await import('../compose/console.js');
  const backend = await openConsole({
    workspace: resolveWorkspace(opts.workspace, io.env, io.cwd),
    env: io.env,
    onProblem: (message) => io.stderr.write(`maestro ui: ${message}\n`),
  });
  try {
    return await serveConsole(io, backend, { ...settings, host: opts.host });
  } catch (error) {
    await backend.close();
    throw error;
  }
}

interface Settings {
  readonly port: number;
  readonly ttlMs: number;
  readonly given: string | undefined;
  readonly tls: { cert: string; key: string } | undefined;
}

async function checkFlags(io: Io, opts: UiFlags): Promise<Settings> {
  if (opts.token !== undefined) {
    throw new ExitError(
      2,
      'maestro ui: --token is refused: every user of this machine can read it (ps, /proc); put the token in a file only you can read and pass --token-file FILE, or set $MAESTRO_UI_TOKEN',
    );
  }
  const port = Number(opts.port);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new ExitError(2, `maestro ui: --port takes 0–65535, not "${opts.port}"`);
  const ttlMs = parseTtl(opts.tokenTtl ?? DEFAULT_TTL);
  if ((opts.tlsCert === undefined) !== (opts.tlsKey === undefined))
    throw new ExitError(2, 'maestro ui: --tls-cert and --tls-key go together');
  if (!LOOPBACK.has(opts.host) && opts.tlsCert === undefined && !opts.insecureHttp) {
    throw new ExitError(
      2,
      `maestro ui: listening on ${opts.host} needs TLS (--tls-cert FILE --tls-key FILE), since tokens would cross the network in clear; --insecure-http serves plain HTTP anyway`,
    );
  }
  const { readTokenFile, tokenProblem } = await import('./ui/people.js');
  const fromEnv = io.env.MAESTRO_UI_TOKEN || undefined;
  if (fromEnv !== undefined && opts.tokenFile !== undefined)
    throw new ExitError(2, 'maestro ui: choose --token-file or $MAESTRO_UI_TOKEN, not both');
  const problem = fromEnv === undefined ? undefined : tokenProblem(fromEnv);
  if (problem) throw new ExitError(2, `maestro ui: $MAESTRO_UI_TOKEN ${problem}`);
  const given = opts.tokenFile !== undefined ? await readTokenFile(path.resolve(io.cwd, opts.tokenFile)) : fromEnv;
  const tls = opts.tlsCert !== undefined && opts.tlsKey !== undefined ? await readTls(io, opts.tlsCert, opts.tlsKey) : undefined;
  return { port, ttlMs, given, tls };
}

/** `--token-ttl`: `30m`, `12h`, `7d`, `2w`, from a minute to a year. */
function parseTtl(text: string): number {
  const match = /^(\d+)(m|h|d|w)$/.exec(text.trim());
  const minutes = match ? Number(match[1]) * { m: 1, h: 60, d: 1440, w: 10_080 }[match[2] as 'm' | 'h' | 'd' | 'w'] : 0;
  if (minutes < 1 || minutes > 525_600)
    throw new ExitError(2, `maestro ui: --token-ttl takes an age from 1m to 52w, such as 30m, 12h or 7d, not "${text}"`);
  return minutes * 60_000;
}

async function readTls(io: Io, certFile: string, keyFile: string): Promise<{ cert: string; key: string }> {
  const read = (file: string, flag: string) =>
    readFile(path.resolve(io.cwd, file), 'utf8').catch((error: Error) => {
      throw new ExitError(2, `maestro ui: ${flag} ${file} cannot be read (${error.message})`);
    });
  return { cert: await read(certFile, '--tls-cert'), key: await read(keyFile, '--tls-key') };
}

/** Who may sign in: the people of `ui.tokens_file`, or one person (who started the console) with the token set or drawn. */
async function consolePeople(
  io: Io,
  backend: ConsoleBackend,
  settings: Settings & { host: string },
): Promise<{ people: () => Promise<readonly ConsolePerson[]>; printed?: string; closed?: () => boolean }> {
  const { TokensFile, personWithToken, randomToken } = await import('./ui/people.js');
  const file = backend.app.config.ui.tokens_file;
  if (file !== undefined) {
    if (settings.given !== undefined) {
      throw new ExitError(
        2,
        `maestro ui: ui.tokens_file (${file}) gives each person a token; --token-file and $MAESTRO_UI_TOKEN do not go with it`,
      );
    }
    const tokens = await new TokensFile(path.resolve(backend.app.root, file), (m) => io.stderr.write(`${m}\n`)).open();
    return { people: () => tokens.people(), closed: () => tokens.broken };
  }
  if (!LOOPBACK.has(settings.host) && settings.given === undefined) {
    throw new ExitError(
      2,
      `maestro ui: listening on ${settings.host} needs a token you set (--token-file or $MAESTRO_UI_TOKEN) or one per person (ui.tokens_file), since others can reach it`,
    );
  }
  const token = settings.given ?? randomToken();
  const people = [personWithToken(cliAuthor().name, token, Date.now() + settings.ttlMs)];
  return { people: async () => people, printed: token };
}

async function serveConsole(io: Io, backend: ConsoleBackend, settings: Settings & { host: string }): Promise<RunningConsole> {
  const { people, printed, closed } = await consolePeople(io, backend, settings);
  const [{ serve }, { getConnInfo }, { createServer }, { consoleServer }, { ConsoleAccess }] = await Promise.all([
    import('@hono/node-server'),
    import('@hono/node-server/conninfo'),
    import('node:https'),
    import('./ui/server.js'),
    import('./ui/access.js'),
  ]);
  const { host, tls } = settings;
  let bound = 0;
  const hostPart = host.includes(':') ? `[${host}]` : host;
  const hosts = () => (LOOPBACK.has(host) ? ['127.0.0.1', 'localhost', '[::1]'].map((h) => `${h}:${bound}`) : undefined);
  const access = new ConsoleAccess({ people, sessionTtlMs: settings.ttlMs, now: Date.now, ...(closed ? { closed } : {}) });
  const machine = cliAuthor().from;
  const app = consoleServer({
    backend,
    access,
    hosts,
    scheme: tls ? 'https' : 'http',
    // Where a decision came from: never the address itself (the audit log keeps no host address).
    placeOf: (c) => (isLoopback(getConnInfo(c).remote.address) ? machine : `another machine (the console runs on ${machine})`),
  });
  const server = await new Promise<ReturnType<typeof serve>>((resolve, reject) => {
    const s = tls
      ? serve({ fetch: app.fetch, port: settings.port, hostname: host, createServer, serverOptions: tls }, () => resolve(s))
      : serve({ fetch: app.fetch, port: settings.port, hostname: host }, () => resolve(s));
    s.once('error', (error) => reject(listenProblem(error, host, settings.port)));
  });
  bound = (server.address() as AddressInfo).port;
  return {
    url: `${tls ? 'https' : 'http'}://${hostPart}:${bound}/${printed ? `#token=${printed}` : ''}`,
    close: async () => {
      // Live views hold their connections open: they are ended with the console.
      (server as { closeAllConnections?: () => void }).closeAllConnections?.();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await backend.close();
    },
  };
}

function isLoopback(address: string | undefined): boolean {
  return address !== undefined && (/^(::ffff:)?127\./.test(address) || address === '::1');
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
