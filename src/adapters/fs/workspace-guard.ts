import { access } from 'node:fs/promises';
import { InvalidInputError } from '../../domain/errors.js';
import type { WorkspacePaths } from './workspace-paths.js';

/**
 * A folder is a workspace when it has a `maestro.config.json`, `personas/` or `commands/`. Anything
 * else is refused before a `.maestro/` is made in it: running in the wrong folder is a typo, not a wish.
 */
export async function assertWorkspace(paths: WorkspacePaths): Promise<void> {
  const has = async (p: string): Promise<boolean> =>
    access(p).then(
      () => true,
      () => false,
    );
  if ((await has(paths.config)) || (await has(paths.personas)) || (await has(paths.commands))) return;
  const exists = await has(paths.root);
  throw new InvalidInputError(paths.root, [
    exists
      ? `not a maestro workspace: it has no maestro.config.json, personas/ or commands/. Create one with "maestro init ${paths.root}", or point at one with --workspace DIR (or $MAESTRO_WORKSPACE)`
      : `no such folder. Create a workspace there with "maestro init ${paths.root}", or point at one with --workspace DIR (or $MAESTRO_WORKSPACE)`,
  ]);
}
