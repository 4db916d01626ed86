import { listAuditRuns, readAuditRun } from '../adapters/fs-audit-store.js';
import { loadWorkspaceConfig, resolveEngineUrl } from '../config.js';
import { isSafeRunId } from '../domain/audit-retention.js';
import { ExitError } from '../domain/errors.js';
import type { WorkspacePaths } from '../adapters/workspace-paths.js';
import type { Io } from './io.js';
import { openWorkspace } from './open-workspace.js';

export { WORKSPACE_OPTION } from './io.js';

export function workspacePaths(io: Io, flag: string | undefined): Promise<WorkspacePaths> {
  return openWorkspace(io, flag);
}

/** Run ids name files; anything else (a path, `..`) is refused before it touches the disk. */
export function checkRunId(runId: string): string {
  if (!isSafeRunId(runId)) throw new ExitError(2, `maestro audit: "${runId}" is not a run id (letters, digits, ".", "_" and "-" only)`);
  return runId;
}

/** Where a workspace's audit logs are: its files, or its engine. Each run reads as the two files would. */
export interface AuditSource {
  /** For messages: the folder, or the engine's URL without its password. */
  readonly label: string;
  list(): Promise<string[]>;
  read(runId: string): Promise<{ runId: string; log: string | undefined; head: string | undefined; notes?: readonly string[] }>;
  close(): Promise<void>;
}

/** The workspace's engine when it has one (`engine.url` or MAESTRO_ENGINE_URL), else its `.maestro/audit/` files. */
export async function auditSource(io: Io, flag: string | undefined): Promise<AuditSource> {
  const paths = await workspacePaths(io, flag);
  const url = resolveEngineUrl(await loadWorkspaceConfig(paths.config), io.env);
  if (url) {
    const { openEngine } = await import('../compose-engine.js');
    const { listPgAuditRuns, readPgAuditRun } = await import('../adapters/pg-audit-log.js');
    const { redactUrl } = await import('../adapters/pg-engine.js');
    const engine = await openEngine(url, 'maestro audit');
    return { label: `the engine ${redactUrl(url)}`, list: () => listPgAuditRuns(engine), read: (runId) => readPgAuditRun(engine, runId), close: () => engine.close() };
  }
  return {
    label: paths.relative(paths.audit) || paths.audit,
    list: async () => (await listAuditRuns(paths)).map((e) => e.runId),
    read: (runId) => readAuditRun(paths, runId),
    close: async () => undefined,
  };
}
