import { randomBytes } from 'node:crypto';
import { link, mkdir, open, unlink } from 'node:fs/promises';
import path from 'node:path';
import { StorageError } from '../../domain/errors.js';
import type { WorkspacePaths } from './workspace-paths.js';

/** A command file name a person may choose: a plain name ending in `.json`, never a path. */
const PLAIN_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}\.json$/;

/** Why a name cannot be used for a command file in `commands/`, or undefined when it can. */
export function commandNameProblem(name: string): string | undefined {
  return PLAIN_NAME.test(name) ? undefined : `"${name}" is not a plain file name ending in .json (letters, digits, _ . -)`;
}

/**
 * Puts a command file into `commands/` whole, never over a file there: written and synced beside
 * the workspace's state first, then linked in under its name (a watcher never sees half a file).
 * Returns false when `commands/` already has a file of that name; nothing is written then.
 */
export async function dropCommand(paths: WorkspacePaths, name: string, text: string): Promise<boolean> {
  const problem = commandNameProblem(name);
  if (problem) throw new Error(problem);
  await mkdir(paths.state, { recursive: true });
  const temp = path.join(paths.state, `.drop-${process.pid}-${randomBytes(6).toString('hex')}.json`);
  const handle = await open(temp, 'wx', 0o600);
  try {
    await handle.writeFile(text, 'utf8');
    await handle.sync();
  } finally {
    await handle.close();
  }
  const target = path.join(paths.commands, name);
  try {
    await link(temp, target);
    return true;
  } catch (error) {
    const errno = (error as NodeJS.ErrnoException).code;
    if (errno === 'EEXIST') return false;
    throw new StorageError(`could not write ${target}`, target, { cause: error });
  } finally {
    await unlink(temp).catch(() => undefined);
  }
}
