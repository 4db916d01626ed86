import { lstat, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Command } from 'commander';
import { type CommandFinding, type CommandReview, openApp, schemaFinding } from '../compose/use-cases.js';
import { describeFloor } from '../domain/floor/describe.js';
import { resolveWorkspace } from '../config.js';
import { ExitError } from '../domain/errors.js';
import { isCommandFileName } from '../domain/queue.js';
import { WORKSPACE_OPTION, type Io } from './io.js';
import { chalkFor } from './style.js';

export function registerValidate(program: Command, io: Io): void {
  program
    .command('validate')
    .description('check a command file without running it: everything that would stop or pause a run before any model call')
    .argument('<command.json>', 'the command file to check')
    .option(...WORKSPACE_OPTION)
    .option('--json', 'print the findings as one JSON object')
    .addHelpText(
      'after',
      [
        '',
        'Runs the same check as `maestro run` and the watcher — the schema, persona files, model routes, paths,',
        'inputs, the detector and every policy gate — with no model call, and prints every finding as',
        '"path: message" with what it would do (stop, pause) and what moves it on. The mediator\'s model',
        'classification (real routes only) is not asked here.',
        'Exit codes: 0 the run would start · 2 it would not (invalid, or a gate would stop or pause it).',
      ].join('\n'),
    )
    .action(async (file: string, opts: { workspace?: string; json?: boolean }) => {
      // A finding may quote the file (an unknown key, a path): what is printed is screened (reviewCommand).
      const { findings, warnings, floor } = await validateCommandFile(
        path.resolve(io.cwd, file),
        resolveWorkspace(opts.workspace, io.env, io.cwd),
        io.env,
      );
      const c = chalkFor(io);
      if (opts.json) {
        io.stdout.write(`${JSON.stringify({ file, valid: findings.length === 0, findings, warnings, floor: floor ?? null })}\n`);
        if (findings.length > 0) throw new ExitError(2);
        return;
      }
      for (const w of warnings) io.stderr.write(`${chalkFor(io, 'stderr').yellow('!')} ${w}\n`);
      const read = floor
        ? `${c.dim('What the floor read in the task:')}\n${describeFloor(floor)
            .map((l) => `  ${l}`)
            .join('\n')}\n`
        : '';
      if (findings.length > 0) {
        const lines = findings.flatMap((f) => [...f.lines.map((l) => `  ${l}`), `    → ${effect(f)}: ${f.explanation}`]);
        // The report goes to stdout whatever it says (a script reads it in one place); the exit code says which.
        io.stdout.write(`${c.red('✖')} ${file} would not run unattended:\n${lines.join('\n')}\n${read}`);
        throw new ExitError(2);
      }
      io.stdout.write(`${c.green('✔')} ${file} is a valid command file; every gate would let it run\n${read}`);
    });
}

function effect(f: CommandFinding): string {
  if (f.effect === 'invalid') return 'invalid';
  return `${f.effect === 'pause' ? 'pauses for a person' : 'stops'} (${f.layer}: ${f.reason_code})`;
}

/** Every finding that would stop or pause the command before any model call (empty when it would run), and what the floor read. */
export async function validateCommandFile(file: string, workspace: string, env: NodeJS.ProcessEnv = process.env): Promise<CommandReview> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    const finding = schemaFinding([`(file): cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`]);
    return { findings: [{ ...finding, explanation: 'name a command file that exists and can be read' }], warnings: [] };
  }
  const review = await (await openApp({ workspace, env })).review(text);
  // In the drop folder, only `*.json` names are commands: anything else lies there and is never run.
  const name = path.basename(file);
  const dropped = path.dirname(file) === path.join(workspace, 'commands');
  // A link there is not run: the watcher moves it to rejected/ unread, whatever it points at.
  if (dropped && (await lstat(file)).isSymbolicLink()) {
    const finding = schemaFinding([
      `(file): commands/${name} is a symbolic link; the watcher runs only regular files and rejects it: put the file itself in commands/`,
    ]);
    return { ...review, findings: [finding, ...review.findings] };
  }
  if (dropped && !isCommandFileName(name)) {
    const as = `${name.replace(/\.[^.]*$/, '') || name}.json`;
    const warning = `commands/${name}: the watcher takes only *.json files (lowercase, not hidden), so it ignores this one; rename it to commands/${as}`;
    return { ...review, warnings: [warning, ...review.warnings] };
  }
  return review;
}
