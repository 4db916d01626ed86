import { PgEngine, redactUrl } from '../adapters/pg/engine.js';
import { SCHEMA_VERSION } from '../adapters/pg/migrations.js';
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
  /** `synchronous_commit` as the engine's connections see it (intake and workers refuse `off`). */
  synchronousCommit(): Promise<string>;
  close(): Promise<void>;
}

/** The engine URL of the workspace at `dir` (config, else MAESTRO_ENGINE_URL), or undefined. */
export async function engineUrlOf(dir: string, env: Readonly<Record<string, string | undefined>>): Promise<string | undefined> {
  return resolveEngineUrl(await loadWorkspaceConfig(new WorkspacePaths(dir).config), env);
}

export function openEngineAdmin(url: string, name: string): EngineAdmin {
  const pg = PgEngine.open(url, { name });
  return {
    label: redactUrl(url),
    needed: SCHEMA_VERSION,
    migrate: () => pg.migrate(),
    schemaVersion: () => pg.schemaVersion(),
    synchronousCommit: () => pg.synchronousCommit(),
    close: () => pg.close(),
  };
}
