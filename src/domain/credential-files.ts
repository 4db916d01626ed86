import { z } from 'zod';
import data from './credential-stores.json' with { type: 'json' };

/**
 * Well-known credential stores: files that exist to hold a password, a token or a private key. The
 * knowledge sandbox never serves them, the search never indexes them, and an artifact never
 * overwrites them, whatever a command or a model asks. Kept as one table, `credential-stores.json`
 * (tested row by row in tests/domain/credential-files.test.ts), so adding a store is one line, not
 * one more condition. Its `about` says how a pattern matches a path.
 */

/** One kind of credential store and the names it goes by. */
export interface CredentialStore {
  /** What it is, for the refusal message ("… is never served: it is <what>"). */
  readonly what: string;
  readonly patterns: readonly string[];
}

/** Every credential store the sandbox knows. Names, not contents: a renamed key is caught by `credentialContentReason`. */
export const CREDENTIAL_STORES: readonly CredentialStore[] = z
  .array(z.object({ what: z.string().min(1), patterns: z.array(z.string().min(1)).min(1) }))
  .parse(data.stores);

interface CompiledPattern {
  readonly store: CredentialStore;
  readonly pattern: string;
  readonly segments: readonly RegExp[];
  /** A folder pattern: the path must lie inside it. */
  readonly folder: boolean;
}

/** `*` and `?` within one path segment; everything else literal. */
function wildcards(glob: string): string {
  return glob
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '[^/]*')
    .replace(/\?/g, '[^/]');
}

/**
 * A glob as an anchored regex, ignoring case: `*` and `?` stay within one path segment, `{a,b}`
 * is either (not nested; a brace without its pair is literal).
 */
export function segmentGlob(glob: string): RegExp {
  const parts = glob
    .split(/(\{[^{}]*\})/)
    .map((part) => (/^\{[^{}]*\}$/.test(part) ? `(?:${part.slice(1, -1).split(',').map(wildcards).join('|')})` : wildcards(part)));
  return new RegExp(`^${parts.join('')}$`, 'i');
}

const COMPILED: readonly CompiledPattern[] = CREDENTIAL_STORES.flatMap((store) =>
  store.patterns.map((pattern) => ({
    store,
    pattern,
    folder: pattern.endsWith('/'),
    segments: pattern.replace(/\/$/, '').split('/').map(segmentGlob),
  })),
);

/** Whether `pattern` matches the segments that end at index `end` (exclusive). */
function matchesEndingAt(pattern: CompiledPattern, segments: readonly string[], end: number): boolean {
  const start = end - pattern.segments.length;
  return start >= 0 && pattern.segments.every((re, i) => re.test(segments[start + i] ?? ''));
}

function matches(pattern: CompiledPattern, segments: readonly string[]): boolean {
  if (!pattern.folder) return matchesEndingAt(pattern, segments, segments.length);
  // A folder anywhere above the file: its last segment ends before the file name.
  for (let end = 1; end < segments.length; end++) if (matchesEndingAt(pattern, segments, end)) return true;
  return false;
}

/**
 * Why a workspace-relative path (forward slashes) is a well-known credential store, or null: a
 * phrase to follow the path ("is never served: it is Kubernetes credentials"). By name only; pair
 * it with `credentialContentReason` on what the file holds.
 */
export function credentialFileReason(relativePath: string): string | null {
  const hit = credentialStoreOf(relativePath);
  return hit ? `is never served: it is ${hit.store.what}` : null;
}

/** The store and the pattern that a workspace-relative path matches first, or undefined. */
export function credentialStoreOf(relativePath: string): { store: CredentialStore; pattern: string } | undefined {
  const segments = relativePath.split('/').filter((s) => s.length > 0 && s !== '.');
  const hit = COMPILED.find((p) => matches(p, segments));
  return hit && { store: hit.store, pattern: hit.pattern };
}

/**
 * Content that marks a credential whatever the file is called. Private-key headers are matched
 * anywhere in the text (a key pasted under a comment, a BOM, a JSON string with the key inside).
 */
const CREDENTIAL_CONTENT: readonly { what: string; test: (text: string) => boolean }[] = [
  { what: 'a cloud service-account key', test: (t) => /"type"\s*:\s*"service_account"/.test(t) && /"private_key"\s*:/.test(t) },
  // PEM and OpenSSH: BEGIN PRIVATE KEY, RSA/EC/DSA/OPENSSH/ENCRYPTED PRIVATE KEY, PGP PRIVATE KEY BLOCK.
  { what: 'a private key', test: (t) => /-----BEGIN [A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----/.test(t) },
  { what: 'a private key', test: (t) => /-{4,5} ?BEGIN SSH2 ENCRYPTED PRIVATE KEY ?-{4,5}/.test(t) },
  { what: 'a private key', test: (t) => /^PuTTY-User-Key-File-\d+:/m.test(t) },
];

/** Why a file's text is a credential whatever its name (a renamed private key, a service-account key), or null. */
export function credentialContentReason(text: string): string | null {
  const hit = CREDENTIAL_CONTENT.find((c) => c.test(text));
  return hit ? `holds ${hit.what}` : null;
}
