import { openWorkspace as open, type Workspace, type WorkspacePaths } from '../compose/workspace.js';
import { resolveWorkspace } from '../config.js';
import type { Io } from './io.js';

/**
 * The workspace a subcommand reads (`--workspace`, `$MAESTRO_WORKSPACE`, else the current folder),
 * refused with the same "not a maestro workspace … maestro init" message as `run` and `watch` give:
 * a read-only command in the wrong folder must say so, not report an empty workspace.
 */
export async function openWorkspaceAt(io: Io, flag: string | undefined): Promise<Workspace> {
  return open(resolveWorkspace(flag, io.env, io.cwd));
}

/** The paths of the workspace, as `openWorkspaceAt` checks it. */
export async function openWorkspace(io: Io, flag: string | undefined): Promise<WorkspacePaths> {
  return (await openWorkspaceAt(io, flag)).paths;
}
