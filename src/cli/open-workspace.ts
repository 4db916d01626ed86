import { openWorkspace, type Workspace } from '../compose/use-cases.js';
import { resolveWorkspace } from '../config.js';
import type { Io } from './io.js';

/**
 * The workspace a subcommand reads (`--workspace`, `$MAESTRO_WORKSPACE`, else the current folder),
 * refused with the same "not a maestro workspace … maestro init" message as `run` and `watch` give:
 * a read-only command in the wrong folder must say so, not report an empty workspace.
 */
export function openWorkspaceAt(io: Io, flag: string | undefined): Promise<Workspace> {
  return openWorkspace(resolveWorkspace(flag, io.env, io.cwd), io.env);
}
