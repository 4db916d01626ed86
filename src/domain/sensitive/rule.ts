import type { SensitiveCategory } from './categories.js';

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
  /** When given, the pattern only runs on texts containing at least one of these literals. */
  readonly hints?: readonly string[];
  /**
   * When given, the pattern is tried only at these offsets (ascending) instead of at every offset:
   * for patterns too slow to scan a long text with. Must include every offset where the pattern
   * can match; see anchors.ts.
   */
  readonly starts?: (text: string) => readonly number[];
  /**
   * Confirms a candidate (checksum, structure) and returns the sensitive part of it as offsets
   * relative to the match, or undefined to drop it. Default: the whole match.
   */
  readonly select?: (match: string) => Span | undefined;
}

/** Adapts a yes/no check into a `select` that keeps the whole match. */
export function whole(isValid: (match: string) => boolean): (match: string) => Span | undefined {
  return (match) => (isValid(match) ? [0, match.length] : undefined);
}

/**
 * True when a token body looks generated rather than typed: it mixes letters and digits and uses
 * at least 8 distinct characters. Keeps placeholders (`ghp_xxxx…`) and prose out.
 */
export function looksRandom(body: string): boolean {
  return /\d/.test(body) && /[A-Za-z]/.test(body) && hasDistinctCharacters(body, 8);
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
