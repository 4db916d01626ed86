import { processTerm } from '../relevance.js';

/**
 * The plain-text tools persona memory is made with: sentences and passages cut from replies, terms
 * compared between them. Deterministic and model-free.
 */

/** The most characters of one recalled passage (about 40–60 tokens of English). */
export const PASSAGE_CHARS = 200;

/** Whitespace collapsed, trimmed. */
export function flat(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** At most `max` characters, cut at a word boundary when one is near, with an ellipsis. */
export function clip(text: string, max: number): string {
  const whole = flat(text);
  if (whole.length <= max) return whole;
  const cut = whole.slice(0, max - 1);
  const space = cut.lastIndexOf(' ');
  return `${space > max * 0.6 ? cut.slice(0, space) : cut}…`;
}

const encoder = new TextEncoder();
export function utf8Bytes(text: string): number {
  return encoder.encode(text).length;
}

/** A line without its Markdown marks: heading hashes, quote and list markers, bold and code ticks. */
function plainLine(line: string): string {
  return line
    .replace(/^\s{0,3}(?:#{1,6}\s+|>\s*|[-*+]\s+|\d+[.)]\s+)/, '')
    .replace(/\*\*|__|`/g, '')
    .trim();
}

/**
 * The sentences of a text, Markdown marks removed (and lines with no letter or digit, such as rules):
 * each line split after `.`, `!` or `?` and a space before a capital or a digit.
 */
export function sentences(text: string): string[] {
  return text
    .split('\n')
    .map(plainLine)
    .filter((line) => /[\p{L}\p{N}]/u.test(line))
    .flatMap((line) => line.split(/(?<=[.!?])\s+(?=["'(\p{Lu}\d])/u))
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

/**
 * A text cut into passages of at most `max` characters: whole sentences packed together, a passage
 * ending at a paragraph's end once it is half full; a sentence longer than `max` is cut between
 * words. Passages without a word of three letters are left out.
 */
export function passagesOf(text: string, max = PASSAGE_CHARS): string[] {
  const out: string[] = [];
  let current = '';
  const flush = (): void => {
    if (/\p{L}{3}/u.test(current)) out.push(current);
    current = '';
  };
  for (const paragraph of text.split(/\n\s*\n/)) {
    for (const piece of sentences(paragraph).flatMap((s) => piecesOf(s, max))) {
      if (current.length > 0 && current.length + 1 + piece.length > max) flush();
      current = current.length > 0 ? `${current} ${piece}` : piece;
    }
    if (current.length >= max / 2) flush();
  }
  flush();
  return out;
}

function piecesOf(sentence: string, max: number): string[] {
  const pieces: string[] = [];
  let rest = sentence;
  while (rest.length > max) {
    const space = rest.lastIndexOf(' ', max);
    const at = space > max / 2 ? space : max;
    pieces.push(rest.slice(0, at).trim());
    rest = rest.slice(at).trim();
  }
  if (rest.length > 0) pieces.push(rest);
  return pieces;
}

/** MiniSearch's own tokenizer: runs of anything but spaces and punctuation. */
export const WORDS = /[\n\r\p{Z}\p{P}]+/u;

/** The distinct terms of a text as recall reads them (lower case, stop words out, stemmed). */
export function termsOf(text: string): Set<string> {
  const terms = new Set<string>();
  for (const word of text.split(WORDS)) {
    const term = word.length > 0 ? processTerm(word) : null;
    if (term) terms.add(term);
  }
  return terms;
}

/** Shared terms over all terms (0 when both are empty). */
export function overlap(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  let shared = 0;
  for (const t of a) if (b.has(t)) shared++;
  const union = a.size + b.size - shared;
  return union === 0 ? 0 : shared / union;
}
