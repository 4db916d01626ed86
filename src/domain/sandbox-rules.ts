/**
 * The pure half of the knowledge sandbox: which workspace-relative paths may never be served or
 * written, whatever the request. The adapter resolves real paths (symlinks followed) and asks here.
 * Credential stores (`.env*`, keys, `.kube/`, Terraform state …) are listed in credential-stores.json.
 */
import { credentialFileReason, segmentGlob } from './credential-files.js';

/** Folders never served, at any depth: maestro's own state and what is not knowledge. */
const DENIED_SEGMENTS = new Set(['.maestro', 'session_states', '.git', 'node_modules']);

/**
 * Why a workspace-relative path (forward slashes, already normalised, no `..`) is denied, or null.
 * `extraDeny` entries match a path segment or file name, with `*`/`?` globs, or a whole relative path.
 */
export function deniedReason(relativePath: string, extraDeny: readonly string[] = []): string | null {
  const segments = relativePath.split('/').filter((s) => s.length > 0);
  for (const segment of segments.slice(0, -1)) {
    if (DENIED_SEGMENTS.has(segment)) return `"${segment}/" is never served`;
  }
  const name = segments.at(-1) ?? '';
  if (DENIED_SEGMENTS.has(name)) return `"${name}/" is never served`;
  const credential = credentialFileReason(relativePath);
  if (credential) return `"${relativePath}" ${credential}`;
  for (const pattern of extraDeny) {
    const re = segmentGlob(pattern.replace(/^\.?\//, '').replace(/\/$/, ''));
    if (re.test(relativePath) || segments.some((s) => re.test(s))) return `denied by the workspace config ("${pattern}")`;
  }
  return null;
}

/** Folders an output artifact may never be written into. */
const OUTPUT_DENIED_SEGMENTS = new Set(['.maestro', 'session_states', '.git', 'node_modules', 'commands', 'personas']);

/** Why an output path (workspace-relative, normalised) may not be written, or null. */
export function outputDeniedReason(relativePath: string): string | null {
  const segments = relativePath.split('/').filter((s) => s.length > 0);
  if (segments.length === 0) return 'is the workspace itself, not a file';
  const top = segments[0] ?? '';
  if (segments.some((s) => OUTPUT_DENIED_SEGMENTS.has(s)) && OUTPUT_DENIED_SEGMENTS.has(top)) {
    return `must not be inside "${top}/" (reserved by maestro)`;
  }
  if (segments.some((s) => s === '.git' || s === '.maestro')) return 'must not be inside a reserved folder';
  const name = segments.at(-1) ?? '';
  if (/^\.env/i.test(name)) return 'must not overwrite an environment file';
  if (segments.length === 1 && name === 'maestro.config.json') return 'is the workspace config';
  if (credentialFileReason(relativePath)) return 'must not overwrite a secret or key file';
  return null;
}
