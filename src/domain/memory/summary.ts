import { z } from 'zod';
import { clip, flat, sentences } from './text.js';

/** The most characters of what was asked, and of the gist of what was decided. */
export const ASKED_CHARS = 160;
const GIST_CHARS = 120;
const FACT_CHARS = 120;
/** The most facts a summary keeps. */
const FACTS_KEPT = 3;

/** What a persona keeps of one earlier task: what was asked, what the council decided, the facts it settled. */
export const TaskSummary = z.strictObject({
  /** The newest run of this task. */
  run_id: z.string(),
  /** When that run started (ISO); absent in summaries migrated from version 2. */
  at: z.string().optional(),
  /** Names the task (a digest of its text): the same task done again updates its summary instead of adding one. */
  key: z.string().optional(),
  /** The task, clipped. */
  asked: z.string(),
  /** The council's final action and the gist of its proposal. */
  decided: z.string(),
  /** Sentences that settle something (a date, a number, a name, a decision), from the task and the proposal. */
  facts: z.array(z.string()).default([]),
  /** How many runs did this task. */
  times: z.number().int().min(1).default(1),
  /** Tokens of the rendered line (o200k), counted once the persona's memory passes its budget. */
  tokens: z.number().int().min(0).optional(),
});
export type TaskSummary = z.infer<typeof TaskSummary>;

/**
 * The summary of a finished task, made without a model: the task clipped, the final action with the
 * proposal's first sentence, and the sentences of the task and the proposal that settle something.
 */
export function summarizeTask(input: {
  readonly runId: string;
  readonly at: string;
  readonly key: string;
  readonly task: string;
  /** The council's final action as it stands (e.g. `proceed`, or `investigate, continued by a person`). */
  readonly decision: string;
  readonly proposal: string;
}): TaskSummary {
  const asked = clip(input.task, ASKED_CHARS);
  const gist = gistOf(input.proposal);
  const decided = gist ? `${input.decision} — ${gist}` : input.decision;
  return {
    run_id: input.runId,
    at: input.at,
    key: input.key,
    asked,
    decided,
    facts: settledFacts([input.task, input.proposal], [asked, decided]),
    times: 1,
  };
}

/** The same task done again: the newest run's decision, its facts first, and one more time. */
export function mergeSummary(older: TaskSummary, newer: TaskSummary): TaskSummary {
  const facts = [...new Set([...newer.facts, ...older.facts])].slice(0, FACTS_KEPT);
  const { tokens: _recounted, ...rest } = newer;
  return { ...rest, facts, times: older.times + newer.times };
}

/** One line of memory: `- <date> asked: … | decided: … | settled: …`. */
export function renderSummary(s: TaskSummary): string {
  const when = s.at ? `${s.at.slice(0, 10)} ` : '';
  const times = s.times > 1 ? ` (${s.times} times)` : '';
  const settled = s.facts.length > 0 ? ` | settled: ${s.facts.join('; ')}` : '';
  return `- ${when}asked${times}: ${s.asked} | decided: ${s.decided}${settled}`;
}

/** The proposal's first sentence of three words or more, outside headings. */
function gistOf(proposal: string): string | undefined {
  const body = proposal
    .split('\n')
    .filter((line) => !/^\s{0,3}#/.test(line))
    .join('\n');
  const first = sentences(body).find((s) => s.split(/\s+/).length >= 3);
  return first ? clip(first, GIST_CHARS) : undefined;
}

const MONTH =
  '(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)';
const DATE = new RegExp(
  `\\b(?:\\d{4}-\\d{2}-\\d{2}|\\d{1,2}(?:st|nd|rd|th)? ${MONTH}\\.?,? \\d{4}|${MONTH}\\.? \\d{1,2}(?:st|nd|rd|th)?\\b(?:,? \\d{4})?|q[1-4] \\d{4}|(?:mon|tues|wednes|thurs|fri|satur|sun)day)\\b`,
  'i',
);
const NUMBER =
  /[$€£]\s?\d|\b\d[\d,.]*\s?(?:%|k|m|ms|s|gb|mb|tb|usd|eur|days?|weeks?|months?|years?|hours?|minutes?|users?|requests?|percent)\b|\b\d{2,}\b/i;
const DECISION =
  /\b(?:decided|decision|agreed|chose|chosen|approved?|rejected?|settled|selected|go(?:es)? with|will (?:use|adopt|keep|ship|launch|move|switch|migrate|name|call|be)|must|deadline|due|owner|owned by|owns|budget|signed)\b/i;
/** A capitalised word (or acronym) inside a sentence, not at its start: most often a name. */
const NAME = /[\p{Ll}\d,;:]\s+\p{Lu}[\p{L}\d]+/u;

/**
 * Sentences that settle something: a date counts 2, a decision word 2, a number 1, a name 1; those
 * scoring 2 or more are kept, best first (then in order), at most three, none already said in `said`.
 */
export function settledFacts(texts: readonly string[], said: readonly string[]): string[] {
  const already = said.map((s) => flat(s).toLowerCase());
  const seen = new Set<string>();
  const scored: { text: string; score: number; order: number }[] = [];
  for (const sentence of texts.flatMap(sentences)) {
    const key = flat(sentence).toLowerCase();
    if (key.length < 12 || seen.has(key) || already.some((a) => a.includes(key.replace(/…$/, '')))) continue;
    seen.add(key);
    const score =
      (DATE.test(sentence) ? 2 : 0) + (DECISION.test(sentence) ? 2 : 0) + (NUMBER.test(sentence) ? 1 : 0) + (NAME.test(sentence) ? 1 : 0);
    if (score >= 2) scored.push({ text: clip(sentence, FACT_CHARS), score, order: scored.length });
  }
  return scored
    .sort((a, b) => b.score - a.score || a.order - b.order)
    .slice(0, FACTS_KEPT)
    .sort((a, b) => a.order - b.order)
    .map((f) => f.text);
}
