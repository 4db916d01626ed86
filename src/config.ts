import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { InvalidInputError } from './domain/errors.js';
import { parseWorkspaceConfig, type WorkspaceConfig } from './domain/workspace-config.js';

/** Picks the workspace folder: `--workspace`, else `MAESTRO_WORKSPACE`, else the current folder. */
export function resolveWorkspace(flag: string | undefined, env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): string {
  return path.resolve(cwd, flag ?? env.MAESTRO_WORKSPACE ?? '.');
}

/** Reads `maestro.config.json` (optional) and validates it; every field has a default. Frozen once read. */
export async function loadWorkspaceConfig(file: string): Promise<WorkspaceConfig> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return Object.freeze(parseOrThrow({}, file));
    throw new InvalidInputError(file, [`cannot be read (${(error as Error).message})`], { cause: error });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new InvalidInputError(file, [`(root): not valid JSON (${(error as Error).message})`], { cause: error });
  }
  return Object.freeze(parseOrThrow(json, file));
}

function parseOrThrow(json: unknown, file: string): WorkspaceConfig {
  const parsed = parseWorkspaceConfig(json);
  if (!parsed.ok) throw new InvalidInputError(file, parsed.issues);
  return parsed.value;
}
