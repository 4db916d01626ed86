import type { SensitiveCategory } from './categories.js';
import { placeholderReason } from './placeholders.js';

/** A half-open range `[start, end)` of UTF-16 offsets. */
export type Span = readonly [start: number, end: number];

/**
 * One way of recognising one category.
 *
 * Patterns must stay linear on large inputs: every quantifier that can run long is bounded or
 * sits behind a left-boundary lookbehind (so a run of word characters is tried from its start
 * only, not from each of its positions), and no two adjacent quantifiers can trade characters.
 */
export interface DetectionRule {
  readonly category: SensitiveCategory;
  /** A global (`g`) regex producing candidates. */
  readonly pattern: RegExp;
  /**
   * When given, the pattern is tried only at these offsets (ascending) instead of at every offset:
   * for patterns too slow to scan a long text with. Must include every offset where the pattern
   * can match; see anchors.ts.
   */
  readonly starts?: (text: string) => readonly number[];
  /**
   * Confirms a candidate (checksum, structure) and returns the sensitive part of it as offsets
   * relative to the match, or undefined to drop it. Default: the whole match. `exec` is the match
   * itself, for its groups and, where the line around it decides, its input and index.
   */
  readonly select?: (match: string, exec: RegExpExecArray) => Span | undefined;
}

/** Adapts a yes/no check into a `select` that keeps the whole match. */
export function whole(isValid: (match: string) => boolean): (match: string) => Span | undefined {
  return (match) => (isValid(match) ? [0, match.length] : undefined);
}

/**
 * True when a token body looks generated rather than typed: it mixes letters and digits, uses at
 * least 8 distinct characters, and holds no placeholder (placeholders.ts). Keeps placeholders
 * (`ghp_xxxx…`, `sk-your-key-here-123`) and prose out.
 */
export function looksRandom(body: string): boolean {
  return /\d/.test(body) && /[A-Za-z]/.test(body) && hasDistinctCharacters(body, 8) && placeholderReason(body) === undefined;
}

/** True when `text` holds at least `count` distinct characters (code points); stops counting there. */
function hasDistinctCharacters(text: string, count: number): boolean {
  const seen = new Set<string>();
  for (const character of text) {
    seen.add(character);
    if (seen.size >= count) return true;
  }
  return false;
}

/** Stricter than looksRandom, for weak prefixes such as `sk-`: upper, lower case and digits. */
export function looksRandomMixedCase(body: string): boolean {
  return looksRandom(body) && /[a-z]/.test(body) && /[A-Z]/.test(body);
}

/**
 * Shapes that look generated but are addresses or identifiers, not secrets: URL, path, e-mail, ARN,
 * version, UUID, and a name made of words (`github-app-4d9e2f1a`, `tls-cert-7f3e9a2b1c4d`: parts in
 * one case, at least one a word of letters). Under a key that only mentions a credential
 * (`credentialsId`, `secretName`) such a value says which credential, not what it is.
 */
const NOT_SECRET_SHAPES: readonly RegExp[] = [
  /:\/\//, // a URL
  /^(?:~|\.{0,2})\//, // a path
  /^[^@\s]+@[^@\s]+\.[A-Za-z]{2,}$/, // an e-mail address
  /^arn:/i, // an AWS resource name
  /^[a-z0-9._-]+(?:\/[a-z0-9._-]+){2,}$/, // a resource path (projects/123/secrets/db-pass); base64 mixes case
  /^v?\d+(?:\.\d+)+(?:[-+][\w.]+)?$/, // a version
  /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, // a UUID
  /^(?=(?:.*[-_.])?[a-z]{2,}(?:[-_.]|$))[a-z0-9]+(?:[-_.][a-z0-9]+)+$|^(?=(?:.*[-_.])?[A-Z]{2,}(?:[-_.]|$))[A-Z0-9]+(?:[-_.][A-Z0-9]+)+$/, // a name
];

/**
 * For a value whose key only mentions a credential (`csrf-token`, `token_type`): it counts when it
 * looks generated (looksRandom) and is either mixed case or 16+ characters long, and is no address.
 * `9f86d081884c7d659a2f` and `Zx81-kLm2-Qp93` do; `my-secret-01`, `Bearer`, `4096` and a URL do not.
 */
export function looksSecret(value: string): boolean {
  if (value.length < 8 || /\s/.test(value) || NOT_SECRET_SHAPES.some((shape) => shape.test(value))) return false;
  return looksRandom(value) && ((/[a-z]/.test(value) && /[A-Z]/.test(value)) || value.length >= 16);
}

/** True when `value` reads as a word of prose (`click`, `Below.`), not as a password (`hunter2`, `S3cret!`). */
export function readsAsWord(value: string): boolean {
  return /^[A-Za-z][a-z]*[.,;:!?)]*$/.test(value);
}
