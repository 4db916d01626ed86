import { Command, CommanderError } from 'commander';
import { AppError, ExitError, InternalError, InvalidInputError } from '../domain/errors.js';
import { defaultIo, type Io } from './io.js';
import { readPackageVersion } from '../package-info.js';

/** Exit codes, as DESIGN.md fixes them. */
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
  if (first === '-V' || first === '--version') return [];
  return Object.keys(SUBCOMMANDS);
}

/** The program with the subcommands `argv` needs (all of them without `argv`). */
export async function buildProgram(io: Io, argv?: readonly string[]): Promise<Command> {
  const program = new Command('maestro')
    .description('A council of LLM personas that works on tasks dropped into a folder, and fails closed.')
    .version(readPackageVersion(), '-V, --version')
    .showHelpAfterError('(run "maestro --help" for usage)')
    .configureOutput({ writeOut: (s) => io.stdout.write(s), writeErr: (s) => io.stderr.write(s) })
    .exitOverride();
  for (const name of subcommandsFor(argv)) (await (SUBCOMMANDS[name] as () => Promise<(program: Command, io: Io) => void>)())(program, io);
  return program;
}

/** Runs the CLI and returns the exit code; `bin/maestro.js` is the only caller that exits. */
export async function main(argv: string[], io: Io = defaultIo()): Promise<number> {
  try {
    const program = await buildProgram(io, argv);
    await program.parseAsync(argv);
    return 0;
  } catch (error) {
    if (error instanceof ExitError) {
      if (error.message) io.stderr.write(`${error.message}\n`);
      return error.exitCode;
    }
    if (error instanceof CommanderError) {
      return error.exitCode === 0 ? 0 : EXIT.invalid;
    }
    if (error instanceof InvalidInputError) {
      io.stderr.write(`maestro: ${error.file} is invalid:\n${error.issues.map((i) => `  ${i}`).join('\n')}\n`);
      return EXIT.invalid;
    }
    if (error instanceof AppError && !(error instanceof InternalError)) {
      io.stderr.write(`maestro: ${error.message}\n`);
      return EXIT.error;
    }
    const detail = error instanceof Error ? (error.stack ?? error.message) : String(error);
    io.stderr.write(`maestro: internal error — this is a bug, please report it with the output below.\n${detail}\n`);
    return EXIT.error;
  }
}
