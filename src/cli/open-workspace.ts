import { openWorkspace as open, type Workspace, type WorkspacePaths } from '../compose/workspace.js';
import { loadWorkspaceConfig, resolveEngineUrl, resolveWorkspace } from '../config.js';
import type { Io } from './io.js';

/**
 * The workspace a subcommand reads (`--workspace`, `$MAESTRO_WORKSPACE`, else the current folder),
 * refused with the same "not a maestro workspace … maestro init" message as `run` and `watch` give:
 * a read-only command in the wrong folder must say so, not report an empty workspace.
 */
export async function openWorkspaceAt(io: Io, flag: string | undefined): Promise<Workspace> {
  const workspace = await open(resolveWorkspace(flag, io.env, io.cwd));
  // With an engine, runs and their retention are read in the engine too (a config that does not read
  // is reported by the commands that need it).
  const config = await loadWorkspaceConfig(workspace.paths.config).catch(() => undefined);
  const url = config ? resolveEngineUrl(config, io.env) : undefined;
  return url ? (await import('../compose/engine-runs.js')).withEngineRuns(workspace, url) : workspace;
}

/** The paths of the workspace, as `openWorkspaceAt` checks it. */
export async function openWorkspace(io: Io, flag: string | undefined): Promise<WorkspacePaths> {
  return (await openWorkspaceAt(io, flag)).paths;
}
