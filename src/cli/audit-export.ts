import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { Command } from 'commander';
import { writeFileWhole } from '../compose/use-cases.js';
import { ExitError } from '../domain/errors.js';
import { auditSource, checkRunId, noLog, notFound, WORKSPACE_OPTION } from './audit-options.js';
import type { Io } from './io.js';

/**
 * `maestro audit export`: a run's log and head as the two files (`<run_id>.jsonl`, `<run_id>.head`),
 * byte for byte what was chained, from the workspace's files or its engine: to archive them, or to
 * check them elsewhere (`maestro audit verify` on a folder holding them).
 */
export function registerAuditExport(audit: Command, io: Io): void {
  audit
    .command('export')
    .description("write a run's audit log (or every log) as <run_id>.jsonl + <run_id>.head files, from the files or the engine")
    .argument('[run_id]', 'the run to export')
    .option('--all', 'export every audit log')
    .requiredOption('--out <dir>', 'the folder to write into (created, mode 0700; files 0600)')
    .option(...WORKSPACE_OPTION)
    .addHelpText(
      'after',
      '\nThe lines are exported exactly as written, so the chain and the head verify wherever they go.\nExit codes: 0 exported · 1 the folder or a file could not be written · 2 usage (--out names a file), or a run with no audit log (nothing is written).',
    )
    .action(async (runId: string | undefined, opts: { all?: boolean; out: string; workspace?: string }) => {
      if ((runId === undefined) === (opts.all !== true)) throw new ExitError(2, 'maestro audit export: name one run id, or pass --all');
      const out = path.resolve(io.cwd, opts.out);
      const source = await auditSource(io, opts.workspace);
      try {
        const ids = runId !== undefined ? [checkRunId(runId)] : await source.list();
        // A run id not found is refused before anything is written, as everywhere (exit 2).
        if (runId !== undefined && (await notFound(source, runId))) throw new ExitError(2, noLog('export', runId, source.label), 'refused');
        await mkdir(out, { recursive: true, mode: 0o700 }).catch((error: NodeJS.ErrnoException) => {
          // A file where the folder should be is a usage error; a folder that cannot be made is the environment's.
          if (error.code === 'EEXIST' || error.code === 'ENOTDIR')
            throw new ExitError(2, `maestro audit export: --out ${opts.out} is a file, not a folder`);
          throw new ExitError(1, `maestro audit export: cannot create ${out} (${error.code ?? error.message}); nothing was written`);
        });
        let written = 0;
        const gone: string[] = [];
        for (const id of ids) {
          const run = await source.read(checkRunId(id));
          if (run.log === undefined && run.head === undefined) {
            gone.push(id);
            continue;
          }
          const write = (name: string, text: string) =>
            writeFileWhole(path.join(out, name), text, 0o600).catch((error: NodeJS.ErrnoException) => {
              throw new ExitError(1, `maestro audit export: cannot write ${path.join(out, name)} (${error.code ?? error.message})`);
            });
          if (run.log !== undefined) await write(`${id}.jsonl`, run.log);
          if (run.head !== undefined) await write(`${id}.head`, run.head.endsWith('\n') ? run.head : `${run.head}\n`);
          written += 1;
        }
        io.stdout.write(`exported ${written} audit log(s) from ${source.label} to ${out}\n`);
        // A run with a checkpoint had a log: one that is gone is said, and is a failure (exit 1).
        for (const id of gone)
          io.stderr.write(`maestro audit export: run ${id} has a checkpoint but its audit log is gone; see maestro audit verify ${id}\n`);
        if (gone.length > 0) throw new ExitError(1);
      } finally {
        await source.close();
      }
    });
}
