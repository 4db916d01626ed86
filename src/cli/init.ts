import path from 'node:path';
import type { Command } from 'commander';
import { initWorkspace, type ScaffoldReport } from '../compose/use-cases.js';
import { checkWorkspaceConfig } from '../config.js';
import { ExitError } from '../domain/errors.js';
import type { Io } from './io.js';
import { invocation, PACKAGE_ROOT } from '../package-info.js';
import { chalkFor } from './style.js';

const HELP = `
In a new folder it writes everything. In an existing project (a git repository, a folder with its own
files) it adds only what is missing and overwrites nothing: a file already there is kept as it is, and
the lines that keep maestro's runtime data out of git (.maestro/, outputs/, persona memory and its
archive, locks, corrupt and temporary files) are appended to an existing .gitignore, under a comment,
leaving its own lines, their order and its line endings as they were. It prints one line per file:
created (+), merged (~) or kept (=). Running it again changes nothing and says so.

Exit codes: 0 ready · 1 a write failed midway (run it again to add the rest) · 2 refused, nothing
changed (the target is a file, or a folder it needs is not writable), or the maestro.config.json it
kept is not valid (what it added stays; fix the config and the workspace is ready).
`;

export function registerInit(program: Command, io: Io): void {
  program
    .command('init')
    .description(
      'set up a workspace, new or in an existing project: the triad personas, commands/, session_states/, an example, ' +
        'a config, and .gitignore lines for the runtime data; adds what is missing, overwrites nothing',
    )
    .argument('[dir]', 'folder to set up (created if missing)', '.')
    .addHelpText('after', HELP)
    .action(async (dir: string) => {
      const target = path.resolve(io.cwd, dir);
      const report = await scaffoldWorkspace(target);
      // A config kept as it was may not read: the workspace is then not ready, whatever was added.
      const problems = report.skipped.includes(CONFIG) ? await checkWorkspaceConfig(path.join(target, CONFIG)) : [];
      if (problems.length > 0) {
        io.stdout.write(renderReport(target, report, io, false));
        throw new ExitError(
          2,
          `maestro init: the ${CONFIG} already there is not valid; fix it and the workspace is ready:\n  ${problems.join('\n  ')}`,
        );
      }
      io.stdout.write(renderReport(target, report, io));
      const example = JSON.stringify(path.join(target, 'examples', 'review-migration.json'));
      io.stdout.write(`\nTry it:  ${invocation(io.env)} run --workspace ${JSON.stringify(target)} ${example}\n`);
    });
}

/**
 * Sets up `target` as a workspace (see `maestro init --help`) and returns what it did; throws an
 * `ExitError` (2: refused, nothing changed; 1: a write failed midway) otherwise.
 */
export async function scaffoldWorkspace(target: string): Promise<ScaffoldReport> {
  const result = await initWorkspace(target, PACKAGE_ROOT);
  if (result.ok) return result.report;
  if (result.kind === 'refused') throw new ExitError(2, `maestro init: ${result.reason}. Nothing was changed.`);
  const done =
    result.created.length === 0 ? 'nothing was written' : `written before it:\n${result.created.map((f) => `  + ${f}`).join('\n')}`;
  throw new ExitError(1, `maestro init: ${result.reason}; ${done}\nOnce that is fixed, run it again: it adds only what is missing.`);
}

const CONFIG = 'maestro.config.json';

function renderReport(target: string, report: ScaffoldReport, io: Io, ready = true): string {
  const c = chalkFor(io);
  const changed = report.created.length + report.merged.length > 0;
  const title = !ready
    ? `${c.red('✖')} ${target} is not ready: its ${CONFIG} is not valid`
    : changed
      ? `${c.green('✔')} workspace ready in ${target}`
      : `${c.green('✔')} nothing to do: ${target} already has everything maestro init adds; nothing was changed`;
  const lines = [
    ...report.created.map((f) => `  + ${f}  created`),
    ...report.merged.map((m) => `  ~ ${m.file}  merged ${m.lines.length} line(s): ${m.lines.join('  ')}`),
    ...report.skipped.map((f) => c.dim(`  = ${f}  already there, kept as it is`)),
  ];
  return `${title}\n${lines.join('\n')}\n`;
}
