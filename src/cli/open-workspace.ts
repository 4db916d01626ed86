import { assertWorkspace } from '../adapters/workspace-guard.js';
import { WorkspacePaths } from '../adapters/workspace-paths.js';
import { resolveWorkspace } from '../config.js';
import type { Io } from './io.js';

/**
 * The workspace a subcommand reads (`--workspace`, `$MAESTRO_WORKSPACE`, else the current folder),
 * refused with the same "not a maestro workspace … maestro init" message as `run` and `watch` give:
 * a read-only command in the wrong folder must say so, not report an empty workspace.
 */
export async function openWorkspace(io: Io, flag: string | undefined): Promise<WorkspacePaths> {
  const paths = new WorkspacePaths(resolveWorkspace(flag, io.env, io.cwd));
  await assertWorkspace(paths);
  return paths;
}
