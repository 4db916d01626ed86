import path from 'node:path';
import { Command, CommanderError } from 'commander';
import { AppError, ExitError, InternalError, InvalidInputError } from '../domain/errors.js';
import { defaultIo, type Io } from './io.js';
import { PACKAGE_ROOT, readPackageVersion } from '../package-info.js';
import { describeInvalid } from './invalid-input.js';

/** Exit codes, as DESIGN.md fixes them; the README's table says which subcommand uses which. */
export const EXIT = { completed: 0, error: 1, invalid: 2, paused: 3, stopped: 4, guardrail_stopped: 5, interrupted: 130 } as const;

/**
 * Each subcommand's module, loaded only when needed: `maestro run …` loads `run` alone, `--version`
 * loads none, and help (or anything unrecognised) loads them all so commander can list and check them.
 */
const SUBCOMMANDS: Record<string, () => Promise<(program: Command, io: Io) => void>> = {
  run: async () => (await import('./run.js')).registerRun,
  ask: async () => (await import('./ask.js')).registerAsk,
  outcome: async () => (await import('./outcome.js')).registerOutcome,
  validate: async () => (await import('./validate.js')).registerValidate,
  doctor: async () => (await import('./doctor.js')).registerDoctor,
  schema: async () => (await import('./schema.js')).registerSchema,
  init: async () => (await import('./init.js')).registerInit,
  hitl: async () => (await import('./hitl.js')).registerHitl,
  session: async () => (await import('./session.js')).registerSession,
  watch: async () => (await import('./watch.js')).registerWatch,
  status: async () => (await import('./status.js')).registerStatus,
  audit: async () => (await import('./audit.js')).registerAudit,
  runs: async () => (await import('./runs.js')).registerRuns,
  show: async () => (await import('./runs.js')).registerShow,
  requeue: async () => (await import('./requeue.js')).registerRequeue,
  worker: async () => (await import('./worker.js')).registerWorker,
  engine: async () => (await import('./engine.js')).registerEngine,
  eval: async () => (await import('./eval.js')).registerEval,
  ui: async () => (await import('./ui.js')).registerUi,
};

function subcommandsFor(argv: readonly string[] | undefined): string[] {
  const first = argv?.[2];
  if (first !== undefined && Object.hasOwn(SUBCOMMANDS, first)) return [first];
  if (first === '-V' || first === '-v' || first === '--version') return [];
  return Object.keys(SUBCOMMANDS);
}

/** What `maestro --help` ends with: examples, the exit codes, the environment, where the README is. */
const ROOT_HELP = `
Examples:
  maestro init my-council                     a workspace with the triad, an example and a config
  maestro run examples/review-migration.json  run one command file now (offline rehearsal model)
  maestro run - < task.json --json            the command from stdin; one JSON object on stdout
  maestro watch                               run every file dropped into commands/
  maestro hitl list                           runs paused for a person; then maestro hitl decide <run_id> continue|stop

Exit codes (every subcommand): 0 done · 1 an error of the environment (a full disk, an engine or endpoint
out of reach) or a bug · 2 invalid input, a usage error, or refused (a run id not found, a run held or
sealed) · 3 paused for a person · 4 stopped · 5 stopped by a guardrail · 130 interrupted.
With --json, stdout holds one JSON object whatever the way out (NDJSON for --follow, watch, worker).

Environment:
  MAESTRO_WORKSPACE     the workspace (default: the current folder); --workspace overrides it
  MAESTRO_ENGINE_URL    PostgreSQL engine for workers on many machines (overrides engine.url)
  OPENAI_BASE_URL, OPENAI_API_KEY   an OpenAI-compatible endpoint and its key (a route's api_key_env names another)
  NO_COLOR              no colour (as --no-color); FORCE_COLOR forces it
  OTEL_EXPORTER_OTLP_ENDPOINT       OpenTelemetry traces (see the README, "Traces")

Documentation: ${path.join(PACKAGE_ROOT, 'README.md')}
`;

/** The program with the subcommands `argv` needs (all of them without `argv`). */
export async function buildProgram(io: Io, argv?: readonly string[]): Promise<Command> {
  const program = new Command('maestro')
    .description('A council of LLM personas that works on tasks dropped into a folder, and fails closed.')
    .version(readPackageVersion(), '-v, --version')
    .option('--no-color', 'no colour in the output (as NO_COLOR=1 does); works with every subcommand')
    .addHelpText('after', ROOT_HELP)
    // A usage error is one line: what is wrong, and where the help is.
    .configureOutput({
      writeOut: (s) => io.stdout.write(s),
      writeErr: (s) => io.stderr.write(s),
      outputError: (s, write) =>
        write(
          `maestro: ${s
            .replace(/^error: /, '')
            .trim()
            .replace(/\s*\n\s*/g, ' ')} (see "maestro --help")\n`,
        ),
    })
    .exitOverride();
  for (const name of subcommandsFor(argv)) (await (SUBCOMMANDS[name] as () => Promise<(program: Command, io: Io) => void>)())(program, io);
  return program;
}

/**
 * Runs the CLI and returns the exit code; `bin/maestro.js` is the only caller that exits. With `--json`,
 * a way out that printed nothing on stdout (a usage error, a run id not found, an engine out of reach)
 * still prints one JSON object there: `{status, exit_code, message}`.
 */
export async function main(argv: string[], given: Io = defaultIo()): Promise<number> {
  const { io, args, wrote } = prepare(argv, given);
  const json = args.includes('--json');
  const code = await runProgram(args, io, (status, message) => {
    if (json && !wrote()) io.stdout.write(`${JSON.stringify({ status, exit_code: EXIT_OF[status], message })}\n`);
  });
  return code;
}

const EXIT_OF = { error: 1, invalid: 2, refused: 2 } as const;

/** `--no-color` (anywhere: it is every subcommand's) becomes NO_COLOR; `-V` stays the version; stdout is watched for --json. */
function prepare(argv: string[], given: Io): { io: Io; args: string[]; wrote: () => boolean } {
  let written = false;
  const stdout = new Proxy(given.stdout, {
    get(target, key) {
      if (key === 'write')
        return (...a: Parameters<NodeJS.WritableStream['write']>) => {
          written = true;
          return target.write(...a);
        };
      const value = Reflect.get(target, key) as unknown;
      return typeof value === 'function' ? (value as (...x: unknown[]) => unknown).bind(target) : value;
    },
  });
  const noColor = argv.slice(2).includes('--no-color');
  let args = argv.filter((a, i) => i < 2 || a !== '--no-color').map((a, i) => (i === 2 && a === '-V' ? '--version' : a));
  // "maestro --workspace ws runs": before the subcommand it goes after it, where the subcommand reads it.
  const before = args[2] === '--workspace' ? 2 : args[2]?.startsWith('--workspace=') ? 1 : 0;
  if (before > 0 && args.length > 2 + before) args = [...args.slice(0, 2), ...args.slice(2 + before), ...args.slice(2, 2 + before)];
  const env = noColor ? { ...given.env, NO_COLOR: '1', FORCE_COLOR: '' } : given.env;
  const io = { ...given, stdout, env };
  return { io, args, wrote: () => written };
}

async function runProgram(argv: string[], io: Io, failed: (status: keyof typeof EXIT_OF, message: string) => void): Promise<number> {
  try {
    const program = await buildProgram(io, argv);
    await program.parseAsync(argv);
    return 0;
  } catch (error) {
    if (error instanceof ExitError) {
      if (error.message) io.stderr.write(`${error.message}\n`);
      if (error.exitCode === 1 || error.exitCode === 2) failed(error.exitCode === 1 ? 'error' : error.status, error.message);
      return error.exitCode;
    }
    if (error instanceof CommanderError) {
      if (error.exitCode !== 0) failed('invalid', error.message.replace(/^error: /, ''));
      return error.exitCode === 0 ? 0 : EXIT.invalid;
    }
    if (error instanceof InvalidInputError) {
      const message = `maestro: ${describeInvalid(error)}`;
      io.stderr.write(`${message}\n`);
      failed('invalid', message);
      return EXIT.invalid;
    }
    if (error instanceof AppError && !(error instanceof InternalError)) {
      io.stderr.write(`maestro: ${error.message}\n`);
      failed('error', `maestro: ${error.message}`);
      return EXIT.error;
    }
    const detail = error instanceof Error ? (error.stack ?? error.message) : String(error);
    io.stderr.write(`maestro: internal error — this is a bug, please report it with the output below.\n${detail}\n`);
    failed('error', `maestro: internal error: ${error instanceof Error ? error.message : String(error)}`);
    return EXIT.error;
  }
}
