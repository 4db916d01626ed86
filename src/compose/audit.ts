import { listAuditRuns, listCheckpointedRuns, readAuditRun } from '../adapters/fs/audit-store.js';
import type { WorkspacePaths } from '../adapters/fs/workspace-paths.js';
import { loadWorkspaceConfig, resolveEngineUrl } from '../config.js';

/** Where a workspace's audit logs are: its files, or its engine. Each run reads as the two files would. */
export interface AuditSource {
  /** For messages: the folder, or the engine's URL without its password. */
  readonly label: string;
  list(): Promise<string[]>;
  read(runId: string): Promise<{
    runId: string;
    log: string | undefined;
    head: string | undefined;
    notes?: readonly string[];
    /** The run has a checkpoint, so it had a log. */
    checkpoint?: boolean;
  }>;
  close(): Promise<void>;
}

/**
 * The workspace's audit logs: its engine when it has one (`engine.url` or MAESTRO_ENGINE_URL), else its
 * `.maestro/audit/` files. Chosen here, once; the engine's client is loaded only when there is one.
 */
export async function openAuditSource(paths: WorkspacePaths, env: Readonly<Record<string, string | undefined>>): Promise<AuditSource> {
  const url = resolveEngineUrl(await loadWorkspaceConfig(paths.config), env);
  if (url) {
    const { openEngine } = await import('./engine.js');
    const { listPgAuditRuns, readPgAuditRun } = await import('../adapters/pg/audit-log.js');
    const { redactUrl } = await import('../adapters/pg/engine.js');
    const engine = await openEngine(url, 'maestro audit');
    return {
      label: `the engine ${redactUrl(url)}`,
      list: () => listPgAuditRuns(engine),
      read: (runId) => readPgAuditRun(engine, runId),
      close: () => engine.close(),
    };
  }
  return {
    label: paths.relative(paths.audit) || paths.audit,
    // A run whose checkpoint is here had a log: one gone with its head is missing, not absent.
    list: async () => [...new Set([...(await listAuditRuns(paths)).map((e) => e.runId), ...(await listCheckpointedRuns(paths))])].sort(),
    read: (runId) => readAuditRun(paths, runId),
    close: async () => undefined,
  };
}
