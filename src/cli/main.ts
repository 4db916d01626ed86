import { Command, CommanderError } from 'commander';
import { AppError, ExitError, InternalError, InvalidInputError } from '../domain/errors.js';
import { registerAudit } from './audit.js';
import { registerHitl } from './hitl.js';
import { registerInit } from './init.js';
import { registerRun } from './run.js';
import { registerSchema } from './schema.js';
import { registerSession } from './session.js';
import { registerStatus } from './status.js';
import { registerValidate } from './validate.js';
import { registerWatch } from './watch.js';
import { defaultIo, type Io } from './io.js';
import { readPackageVersion } from './package-info.js';

/** Exit codes, as DESIGN.md fixes them. */
export const EXIT = { completed: 0, error: 1, invalid: 2, paused: 3, stopped: 4, interrupted: 130 } as const;

export function buildProgram(io: Io): Command {
  const program = new Command('maestro')
    .description('A council of LLM personas that works on tasks dropped into a folder, and fails closed.')
    .version(readPackageVersion(), '-V, --version')
    .showHelpAfterError('(run "maestro --help" for usage)')
    .configureOutput({ writeOut: (s) => io.stdout.write(s), writeErr: (s) => io.stderr.write(s) })
    .exitOverride();
  registerRun(program, io);
  registerValidate(program, io);
  registerSchema(program, io);
  registerInit(program, io);
  registerHitl(program, io);
  registerSession(program, io);
  registerWatch(program, io);
  registerStatus(program, io);
  registerAudit(program, io);
  return program;
}

/** Runs the CLI and returns the exit code; `bin/maestro.js` is the only caller that exits. */
export async function main(argv: string[], io: Io = defaultIo()): Promise<number> {
  const program = buildProgram(io);
  try {
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
