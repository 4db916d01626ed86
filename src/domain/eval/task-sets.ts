import { z } from 'zod';
import { formatIssues } from '../issues.js';
import basics from './basics-set.json' with { type: 'json' };
import { sensitiveQuestionIssue } from './sensitive-items.js';

/** One question of an eval with its reference answer. */
export interface EvalItem {
  /** Stable within the set: results are keyed by it, so a resumed eval knows what is done. */
  readonly id: string;
  readonly question: string;
  readonly answer: string;
}

/** mulberry32: a small seeded generator, so the same seed gives the same questions everywhere. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Du et al.'s arithmetic task (2023, "Improving factuality and reasoning through multiagent debate"):
 * `a+b*c+d-e*f` with six integers 0–30, as many as asked, the same for the same seed.
 */
export function arithmeticSet(count: number, seed: number): EvalItem[] {
  const next = seededRandom(seed);
  const draw = (): number => Math.floor(next() * 31);
  return Array.from({ length: count }, (_, i) => {
    const [a, b, c, d, e, f] = [draw(), draw(), draw(), draw(), draw(), draw()] as [number, number, number, number, number, number];
    const expression = `${a}+${b}*${c}+${d}-${e}*${f}`;
    return {
      id: `arithmetic-${seed}-${i + 1}`,
      question: `What is the result of ${expression}? Give the number only.`,
      answer: String(a + b * c + d - e * f),
    };
  });
}

const UserItem = z.strictObject({
  question: z
    .string()
    .refine((t) => t.trim().length > 0, 'must not be empty')
    .refine((t) => t.length <= 8_000, 'must be at most 8,000 characters'),
  answer: z.union([z.string().trim().min(1, 'must not be empty').max(500, 'must be at most 500 characters'), z.number()]),
  id: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, 'must be an id (letters, digits, ., - and _; at most 64)')
    .optional(),
});

/** The bundled short-answer set (`basics-set.json`, written for maestro, Apache-2.0 like the rest of the package), checked as a user's set is. */
const BASICS_SET = z.array(UserItem).min(1).parse(basics.items);

/** The bundled set's first `count` items (all of them without one). */
export function basicsSet(count?: number): EvalItem[] {
  const items = BASICS_SET.map((q, i) => ({ id: `basics-${i + 1}`, question: q.question, answer: String(q.answer) }));
  return count === undefined ? items : items.slice(0, count);
}

/** A user's JSONL set read: the items, or every problem as `line N: path: message`. */
export type ParsedSet = { readonly ok: true; readonly items: EvalItem[] } | { readonly ok: false; readonly issues: string[] };

/**
 * A user's JSONL file, one `{"question": …, "answer": …}` per line (an optional `id` keys results;
 * default `line-N`). Blank lines are skipped; every bad line is reported, none silently dropped.
 */
export function parseUserSet(text: string, limit = 10_000): ParsedSet {
  const issues: string[] = [];
  const items: EvalItem[] = [];
  const ids = new Set<string>();
  text.split(/\r?\n/).forEach((line, i) => {
    if (line.trim() === '') return;
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch {
      issues.push(`line ${i + 1}: not valid JSON`);
      return;
    }
    const read = UserItem.safeParse(json);
    if (!read.success) {
      issues.push(...formatIssues(read.error).map((m) => `line ${i + 1}: ${m}`));
      return;
    }
    const sensitive = sensitiveQuestionIssue(read.data.question);
    if (sensitive) issues.push(`line ${i + 1}: ${sensitive}`);
    const id = read.data.id ?? `line-${i + 1}`;
    if (ids.has(id)) issues.push(`line ${i + 1}: id "${id}" appears twice`);
    ids.add(id);
    items.push({ id, question: read.data.question, answer: String(read.data.answer).trim() });
  });
  if (items.length === 0 && issues.length === 0) issues.push('the file holds no questions');
  if (items.length > limit) issues.push(`the file holds ${items.length} questions; at most ${limit}`);
  return issues.length > 0 ? { ok: false, issues } : { ok: true, items };
}

/**
 * An answer as compared: trimmed, lower case, outer quotes, a trailing full stop and a lone
 * multiple-choice letter's brackets taken off; numbers compared as numbers (`1,200` = `1200.0`).
 */
export function normalizeAnswer(answer: string): string {
  let a = answer.trim().toLowerCase().replace(/\s+/g, ' ');
  a = a
    .replace(/^["'`]+|["'`]+$/g, '')
    .replace(/\.$/, '')
    .trim();
  const letter = /^\(?([a-z])\)$/.exec(a);
  if (letter) return letter[1] as string;
  const numeric = a.replace(/,(?=\d{3}\b)/g, '');
  if (/^[-+]?\d+(\.\d+)?$/.test(numeric)) return String(Number(numeric));
  return a;
}

/** Whether a model's answer matches the reference. No answer is wrong. */
export function isCorrect(given: string | undefined, reference: string): boolean {
  return given !== undefined && normalizeAnswer(given) === normalizeAnswer(reference);
}
