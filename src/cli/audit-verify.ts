import type { ChalkInstance } from 'chalk';
import type { Command } from 'commander';
import { auditDigest as sha256 } from '../compose/use-cases.js';
import { defaultSensitiveScanner } from '../domain/audit-sanitizer.js';
import { verifyAuditLog, type AuditVerification } from '../domain/audit-verify.js';
import { ExitError } from '../domain/errors.js';
import { auditSource, checkRunId, noLog, notFound, WORKSPACE_OPTION } from './audit-options.js';
import type { Io } from './io.js';
import { chalkFor } from './style.js';

export function registerAuditVerify(audit: Command, io: Io): void {
  audit
    .command('verify')
    .description("check a run's audit log (or every log): hash chain, order, truncation, schema, invariants I1–I7")
    .argument('[run_id]', 'the run to check')
    .option('--all', 'check every audit log in the workspace')
    .option(...WORKSPACE_OPTION)
    .addHelpText(
      'after',
      [
        '',
        'Prints OK, or the first broken record with its line number and what happened to it',
        '(edited, deleted, reordered, truncated, appended, invalid, breaks an invariant, holds sensitive content).',
        'A torn last line (a write cut short by a crash) is reported as such: it is not tampering.',
        'Exit codes: 0 every log verifies (torn last lines included) · 1 a log is broken, or missing beside its head · 2 usage, or no such run.',
      ].join('\n'),
    )
    .action(async (runId: string | undefined, opts: { all?: boolean; workspace?: string }) => {
      if ((runId === undefined) === (opts.all !== true)) throw new ExitError(2, 'maestro audit verify: name one run id, or pass --all');
      const source = await auditSource(io, opts.workspace);
      const results: AuditVerification[] = [];
      const c = chalkFor(io);
      try {
        const ids = runId !== undefined ? [checkRunId(runId)] : await source.list();
        if (runId !== undefined && (await notFound(source, runId))) throw new ExitError(2, noLog('verify', runId, source.label), 'refused');
        if (ids.length === 0) {
          io.stdout.write(`no audit logs in ${source.label}\n`);
          return;
        }
        for (const id of ids) {
          const files = await source.read(id);
          const result = withNotes(verifyAuditLog({ ...files, sha256, scanner: defaultSensitiveScanner }), files.notes ?? []);
          results.push(result);
          io.stdout.write(`${describeVerification(result, c)}\n`);
        }
      } finally {
        await source.close();
      }
      const broken = results.filter((r) => r.status === 'broken').length;
      if (opts.all) {
        const torn = results.filter((r) => r.status === 'torn').length;
        const summary = `${results.length} log(s): ${results.length - broken - torn} OK, ${torn} with a torn last line, ${broken} broken`;
        io.stdout.write(`${broken > 0 ? c.red(summary) : summary}\n`);
      }
      if (broken > 0) throw new ExitError(1);
    });
}

/** Notes from reading the files (records taken from the run's journal) join the verification's own. */
function withNotes(result: AuditVerification, notes: readonly string[]): AuditVerification {
  if (notes.length === 0 || result.status === 'broken') return result;
  return { ...result, notes: [...notes, ...result.notes] };
}

/** One verification as people read it (first line), plus notes indented below. */
export function describeVerification(result: AuditVerification, c: ChalkInstance): string {
  const notes = 'notes' in result ? result.notes.map((n) => `\n    ${c.dim(n)}`).join('') : '';
  switch (result.status) {
    case 'ok':
      return `${c.green('✔')} ${result.runId}: OK — ${result.records} record(s), chain and head intact${notes}`;
    case 'torn':
      return `${c.yellow('⚠')} ${result.runId}: torn last line (line ${result.line}): a write cut short by a crash, not tampering — the ${result.records} record(s) before it verify${notes}`;
    case 'broken': {
      const where = result.line === null ? '' : `line ${result.line}: `;
      return `${c.red('✖')} ${result.runId}: ${where}${c.bold(result.kind)} — ${result.message}`;
    }
  }
}
