import type { AuditSource } from '../compose/use-cases.js';
import { isSafeRunId } from '../domain/audit-retention.js';
import { ExitError } from '../domain/errors.js';
import type { Io } from './io.js';
import { openWorkspaceAt } from './open-workspace.js';

export { WORKSPACE_OPTION } from './io.js';

/** Run ids name files; anything else (a path, `..`) is refused before it touches the disk. */
export function checkRunId(runId: string): string {
  if (!isSafeRunId(runId))
    throw new ExitError(2, `maestro audit: "${runId}" is not a run id (letters, digits, ".", "_" and "-" only)`, 'refused');
  return runId;
}

/**
 * A run with neither an audit log nor its head nor a checkpoint: an unknown run id (refused with exit 2,
 * as everywhere). A run whose checkpoint is here had a log: its log is missing, not the run.
 */
export async function notFound(source: AuditSource, runId: string): Promise<boolean> {
  const files = await source.read(runId);
  return files.log === undefined && files.head === undefined && files.checkpoint !== true;
}

/** What a subcommand says of a run id it cannot find. */
export function noLog(subcommand: string, runId: string, where: string): string {
  return `maestro audit ${subcommand}: there is no audit log for run ${runId} in ${where} (list the runs with "maestro runs")`;
}

/** The workspace's audit logs, from its files or its engine. */
export async function auditSource(io: Io, flag: string | undefined): Promise<AuditSource> {
  return (await openWorkspaceAt(io, flag)).audit();
}
