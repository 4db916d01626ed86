import { existsSync, readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The installed package's root folder (holds personas/ and examples/ used by `maestro init`): the
 * nearest folder above this module with a package.json. This module runs from `dist/` (compiled) or
 * from a chunk of `dist/bundle/` (what `bin/maestro.js` loads), so the depth is not fixed.
 */
export const PACKAGE_ROOT = packageRoot(path.dirname(fileURLToPath(import.meta.url)));

function packageRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) return path.resolve(from, '..');
  }
}

export function readPackageVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(path.join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version?: string };
    return pkg.version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
}

/** The package's own entry point, `bin/maestro.js`. */
export const BIN = path.join(PACKAGE_ROOT, 'bin', 'maestro.js');

/**
 * How a person can start this very maestro from any folder, for the hints we print: `maestro` when the
 * `maestro` found first on PATH is this package's (a global install or `npm link`), otherwise the
 * explicit `node <path>/bin/maestro.js`, which works from anywhere.
 */
export function invocation(env: NodeJS.ProcessEnv): string {
  const own = realpathOrUndefined(BIN);
  for (const dir of (env.PATH ?? '').split(path.delimiter).filter(Boolean)) {
    const candidate = realpathOrUndefined(path.join(dir, 'maestro'));
    if (candidate === undefined) continue;
    return candidate === own ? 'maestro' : `node ${JSON.stringify(BIN)}`;
  }
  return `node ${JSON.stringify(BIN)}`;
}

function realpathOrUndefined(file: string): string | undefined {
  try {
    return realpathSync(file);
  } catch {
    return undefined;
  }
}
