import path from 'node:path';
import type { Command } from 'commander';
import { ExitError } from '../domain/errors.js';
import { WORKSPACE_OPTION, type Io } from './io.js';
import { openWorkspaceAt } from './open-workspace.js';
import { chalkFor } from './style.js';

/** `maestro requeue`: rejected commands back into `commands/`, once what rejected them is fixed. */
export function registerRequeue(program: Command, io: Io): void {
  program
    .command('requeue')
    .description('move rejected commands (.maestro/rejected/) back into commands/ once fixed; without arguments, list them')
    .argument('[files...]', 'rejected command files, by name (as listed) or path')
    .option('--all', 'every rejected command (all or none: one that still does not read moves nothing)')
    .option('--json', 'one JSON object: {rejected: [{name, reason_code, message}]} when listing, {requeued: [{name, to}]} when requeuing')
    .option(...WORKSPACE_OPTION)
    .addHelpText('after', '\nThe watcher picks a requeued command up again and checks it afresh; its old error report is removed.')
    .action(async (files: string[], opts: { all?: boolean; json?: boolean; workspace?: string }) => {
      const workspace = await openWorkspaceAt(io, opts.workspace);
      const rejected = await workspace.rejected.list();
      const c = chalkFor(io);
      if (!opts.all && files.length === 0) {
        if (opts.json) {
          const listed = rejected.map((r) => ({ name: r.name, reason_code: r.reason_code ?? null, message: r.message ?? null }));
          io.stdout.write(`${JSON.stringify({ rejected: listed })}\n`);
          return;
        }
        if (rejected.length === 0) io.stdout.write('nothing was rejected in this workspace\n');
        // The whole reason: its first line ends with ':' when the problems follow on the next lines.
        for (const r of rejected) {
          const [first = '', ...more] = (r.message ?? '').split('\n');
          io.stdout.write(`${r.name}  ${c.dim(r.reason_code ?? '')} ${first}\n${more.map((l) => `    ${l.trim()}\n`).join('')}`);
        }
        if (rejected.length > 0) io.stdout.write(c.dim(`\nrequeue with: maestro requeue <file…> | --all\n`));
        return;
      }
      if (opts.all && files.length > 0) throw new ExitError(2, 'maestro requeue: give file names or --all, not both');
      const known = new Set(rejected.map((r) => r.name));
      // A name, or a path to the file in this workspace's .maestro/rejected/ (another folder's path is not one of them).
      const nameOf = (f: string) =>
        path.dirname(f) === '.' || path.resolve(io.cwd, path.dirname(f)) === workspace.paths.rejected ? path.basename(f) : f;
      const names = opts.all ? [...known] : files.map(nameOf);
      const missing = names.filter((n) => !known.has(n));
      if (missing.length > 0) {
        throw new ExitError(
          2,
          `maestro requeue: not in .maestro/rejected/: ${missing.join(', ')}${known.size > 0 ? ` (rejected: ${[...known].join(', ')})` : ' (nothing was rejected)'}`,
          'refused',
        );
      }
      // All or none: one that still does not read refuses the lot before anything moves (exit 2: nothing changed).
      const requeued = (await workspace.rejected.requeue(names)).map((m) => ({ name: m.name, to: `commands/${m.to}` }));
      if (!opts.json) for (const m of requeued) io.stdout.write(`${c.green('↺')} ${m.name} → ${m.to}\n`);
      if (opts.json) io.stdout.write(`${JSON.stringify({ requeued })}\n`);
      else if (names.length === 0) io.stdout.write('nothing was rejected in this workspace\n');
    });
}
