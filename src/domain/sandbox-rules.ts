/**
 * The pure half of the knowledge sandbox: which workspace-relative paths may never be served or
 * written, whatever the request. The adapter resolves real paths (symlinks followed) and asks here.
 */

/** Folders never served, at any depth. */
const DENIED_SEGMENTS = new Set(['.maestro', 'session_states', '.git', 'node_modules', '.ssh', '.gnupg', '.aws']);

/** File names never served (secrets and keys). */
const DENIED_NAME_PATTERNS: readonly RegExp[] = [
  // Every name that begins with `.env`: .env, .env.local, .envrc, .env-prod, .env_local …
  /^\.env/i,
  /\.(pem|key|p12|pfx|jks|keystore|kdbx|asc|gpg|ppk)$/i,
  // SSH keys: id_rsa, id_ed25519, id_ecdsa_sk, their .pub halves (a name with another extension is not a key).
  /^id_[a-z0-9_-]+(\.pub)?$/i,
  /^\.(npmrc|netrc|pgpass|htpasswd|git-credentials|pypirc|dockercfg)$/i,
  // Cloud credential files: AWS `credentials`, gcloud `credentials.db`/`application_default_credentials.json` …
  /(^|[_-])credentials(\.[a-z0-9]+)?$/i,
  /^service[-_]?account.*\.json$/i,
];

/** Converts a simple `*` / `?` glob to an anchored regex. */
function globToRegex(glob: string): RegExp {
  const escaped = glob.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*').replace(/\?/g, '[^/]');
  return new RegExp(`^${escaped}$`, 'i');
}

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
  if (DENIED_NAME_PATTERNS.some((re) => re.test(name))) return `"${name}" looks like a secret or key file`;
  for (const pattern of extraDeny) {
    const re = globToRegex(pattern.replace(/^\.?\//, '').replace(/\/$/, ''));
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
  if (DENIED_NAME_PATTERNS.some((re) => re.test(name))) return 'must not overwrite a secret or key file';
  return null;
}

/**
 * Content that is a cloud credential whatever the file is called: a Google service-account key (JSON
 * with `"type": "service_account"` and a `private_key`), or a PEM private key block.
 */
export function credentialContentReason(text: string): string | null {
  if (/"type"\s*:\s*"service_account"/.test(text) && /"private_key"\s*:/.test(text)) return 'holds a cloud service-account key';
  if (/-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----/.test(text)) return 'holds a private key';
  return null;
}
