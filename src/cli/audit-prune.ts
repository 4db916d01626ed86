import type { Command } from 'commander';
import { loadWorkspaceConfig } from '../config.js';
import { parseAgeDays } from '../domain/audit-retention.js';
import { DURATION_UNITS } from '../domain/durations.js';
import { ExitError } from '../domain/errors.js';
import { WORKSPACE_OPTION } from './audit-options.js';
import { openWorkspaceAt } from './open-workspace.js';
import type { Io } from './io.js';
import { chalkFor } from './style.js';

export function registerAuditPrune(audit: Command, io: Io): void {
  audit
    .command('prune')
    .description(
      'delete the audit logs of runs last written longer ago than the retention period, and the checkpoints (.maestro/runs/) of those that ended: they then leave `maestro runs`',
    )
    .option('--older-than <age>', 'retention such as 30d, 12h, 2w or 90m (default: audit.retention_days in maestro.config.json, 30 days)')
    .option('--dry-run', 'say what would be deleted, delete nothing')
    .option(...WORKSPACE_OPTION)
    .addHelpText(
      'after',
      "\nA run's log and its .head file go together; a paused or running run's checkpoint is always kept. The watcher prunes by itself at start and once a day.\nExit codes: 0 done · 1 a file could not be deleted · 2 usage.",
    )
    .action(async (opts: { olderThan?: string; dryRun?: boolean; workspace?: string }) => {
      const workspace = await openWorkspaceAt(io, opts.workspace);
      const { paths } = workspace;
      let retentionDays: number;
      if (opts.olderThan !== undefined) {
        const parsed = parseAgeDays(opts.olderThan);
        if (parsed === undefined)
          throw new ExitError(
            2,
            `maestro audit prune: --older-than takes a duration such as 30d, 12h, 2w or 90m (units: ${DURATION_UNITS}), not "${opts.olderThan}"`,
          );
        retentionDays = parsed;
      } else {
        retentionDays = (await loadWorkspaceConfig(paths.config)).audit.retention_days;
      }
      const report = await workspace.pruneAudit({ retentionDays, dryRun: opts.dryRun === true });
      const c = chalkFor(io);
      const age = `last written before ${report.cutoff.toISOString()} (${formatDays(retentionDays)} ago)`;
      const verbNow = report.dryRun ? 'would delete' : 'deleted';
      if (report.checkpoints.length > 0) {
        io.stdout.write(
          `${report.dryRun ? c.yellow('dry run:') : c.green('✔')} ${verbNow} the checkpoints (.maestro/runs/) of ${report.checkpoints.length} ended run(s) ${age}: ${report.checkpoints.join(', ')}\n`,
        );
      }
      if (report.deleted.length === 0) {
        io.stdout.write(`nothing to prune: no audit log was ${age}; ${report.kept} kept\n`);
        return;
      }
      const verb = report.dryRun ? 'would delete' : 'deleted';
      io.stdout.write(
        `${report.dryRun ? c.yellow('dry run:') : c.green('✔')} ${verb} ${report.deleted.length} audit log(s) ${age}; ${report.kept} kept\n`,
      );
      for (const entry of report.deleted) {
        const files = entry.files.map((f) => (f.startsWith('engine:') ? f : paths.relative(f))).join(', ');
        io.stdout.write(
          `  ${report.dryRun ? '~' : '-'} ${entry.runId}  ${c.dim(`last written ${entry.lastWrite.toISOString()} · ${files}`)}\n`,
        );
      }
    });
}

function formatDays(days: number): string {
  if (days * 1440 < 1) return `${Math.max(1, Math.round(days * 86_400))} second(s)`;
  if (days * 24 < 1) return `${Math.round(days * 1440)} minute(s)`;
  return days < 1 ? `${Math.round(days * 24)} hour(s)` : `${Number(days.toFixed(2))} day(s)`;
}
