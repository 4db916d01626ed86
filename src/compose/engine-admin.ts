import { WorkspacePaths } from '../adapters/fs/workspace-paths.js';
import { loadWorkspaceConfig, resolveEngineUrl } from '../config.js';

/** The engine's schema, as `maestro engine migrate|status` manage it. */
export interface EngineAdmin {
  /** The engine's URL without its password, for messages. */
  readonly label: string;
  /** The schema version this maestro needs. */
  readonly needed: number;
  /** Applies the migrations not applied yet (safe to run again, and from several machines at once). */
  migrate(): Promise<readonly { version: number; name: string }[]>;
  schemaVersion(): Promise<number>;
  /** The tables of this maestro's schema the engine lacks (dropped by hand), and what to do about it. */
  missingTables(): Promise<{ tables: string[]; fix: string }>;
  /** `synchronous_commit` as the engine's connections see it (intake and workers refuse `off`). */
  synchronousCommit(): Promise<string>;
  close(): Promise<void>;
}

/** The engine URL of the workspace at `dir` (config, else MAESTRO_ENGINE_URL), or undefined. */
export async function engineUrlOf(dir: string, env: Readonly<Record<string, string | undefined>>): Promise<string | undefined> {
  return resolveEngineUrl(await loadWorkspaceConfig(new WorkspacePaths(dir).config), env);
}

/** The engine's client is loaded here, not where the CLI starts: a workspace on files never loads it. */
export async function openEngineAdmin(url: string, name: string): Promise<EngineAdmin> {
  const { PgEngine, redactUrl, missingTablesText } = await import('../adapters/pg/engine.js');
  const { SCHEMA_VERSION } = await import('../adapters/pg/migrations.js');
  const pg = PgEngine.open(url, { name });
  return {
    label: redactUrl(url),
    needed: SCHEMA_VERSION,
    migrate: () => pg.migrate(),
    schemaVersion: () => pg.schemaVersion(),
    missingTables: async () => {
      const tables = await pg.missingTables();
      return { tables, fix: missingTablesText(tables) };
    },
    synchronousCommit: () => pg.synchronousCommit(),
    close: () => pg.close(),
  };
}
