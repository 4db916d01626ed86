import { POLICY_LEXICON, type LexiconEntry, type LexiconRule, type SignalKind } from './policy-lexicon.js';
import {
  ARTIFACT_NOUNS,
  CLAUSE_BREAKS,
  CODE_NOUNS,
  CODE_OBJECTS,
  DETERMINERS,
  DISPOSABLE,
  DISPOSABLE_AFTER,
  FRAME_HEADS,
  HEAD_COMPOUNDS,
  NEGATIONS,
  OBJECT_ENDS,
  PREAMBLE,
  SEQUENCERS,
  SUBORDINATORS,
} from './request-words.js';

/** One category the lexicon found in a task: its label and the gate it pauses at. */
export interface LexiconHit {
  readonly label: string;
  readonly kind: SignalKind;
}

/** Where a request may open: the text from there to the end of its sentence, and the sentence before it. */
export interface RequestStart {
  readonly text: string;
  /** The sentence up to this clause, for a pronoun that points back ("review the contract and sign it"). */
  readonly before: string;
}

/** How far a rule looks past a request's head, in characters (the rest of a long sentence is another request's). */
const WINDOW = 240;
/** How much of a sentence a rule that looks anywhere in it reads. */
const SENTENCE_WINDOW = 480;
const PRONOUNS = '(?:it|them|this|that|these|those|both|all of them)';

/** A list of entries as one alternation; a space in an entry also matches a hyphen or nothing. */
const alt = (list: readonly string[]): string =>
  `(?:${[...list]
    .sort((a, b) => b.length - a.length)
    .map((s) => s.replace(/ /g, '[\\s-]*'))
    .join('|')})`;
const END = '(?![\\w-])';

const preambleRe = new RegExp(`^${alt(PREAMBLE)}${END}\\s*`);
const negationRe = new RegExp(`^${alt(NEGATIONS)}${END}\\s*`);
const frameRe = new RegExp(`^${alt(FRAME_HEADS)}${END}`);
const subordinatorRe = new RegExp(`(?<![\\w-])${alt(SUBORDINATORS)}${END}`);
const sequencerRe = new RegExp(`(?<![\\w-])${alt(SEQUENCERS)}${END}`);
const sequencerStartRe = new RegExp(`^${alt(SEQUENCERS)}${END}`);
const breakRe = new RegExp(`\\s*,\\s*|\\s+${alt(CLAUSE_BREAKS.filter((b) => b !== ','))}\\s+`, 'g');
/** " to " opens a clause unless a tool or a document comes before it ("a button to delete …", "the plan is to …"). */
const toRe = new RegExp(`(?<!(?<![\\w-])${alt(ARTIFACT_NOUNS)}(?:\\s+(?:is|was|will be|would be))?)\\s+to\\s+`, 'g');
const bulletRe = /^(?:[-*•>#]+|\d+[.)])\s*/;

/** A rule's full patterns: the request, and the head followed by a pronoun with the objects on their own. */
interface RulePatterns {
  readonly re: RegExp;
  /** "sign it" after "review the contract". */
  readonly pronoun?: { readonly re: RegExp; readonly object: RegExp };
}

/**
 * A rule, compiled on first use. The full patterns embed long word lists and compiling one costs
 * milliseconds, so `gate` tests first what they need and is cheap: the head alone, or for a rule that
 * looks anywhere, each of its groups somewhere in the sentence. A rule whose gate fails is never
 * compiled: the 68 rules of the offline lexicon cost ~230 ms of every process's first gate check otherwise.
 */
interface CompiledRule {
  readonly gate: (text: string) => boolean;
  readonly patterns: () => RulePatterns;
  /** Tested on whole sentences, not at request heads. */
  readonly anywhere: boolean;
}

/** What an act done to is throw-away when a disposable word comes right before it or opens it, or follows it. */
const THROWAWAY_BEFORE = `(?<!(?<![\\w-])${alt(DISPOSABLE)}[\\s-])(?!${alt(DISPOSABLE)}[\\s-])`;
const THROWAWAY_AFTER = `(?!\\s+${alt(DISPOSABLE_AFTER)}${END})`;

/** A value made the first time it is needed. */
function once<T>(make: () => T): () => T {
  let value: T | undefined;
  return () => {
    value ??= make();
    return value;
  };
}

function compileRule(rule: LexiconRule): CompiledRule {
  const anywhere = rule.anywhere === true;
  const gates = anywhere
    ? (rule.also ?? []).map((group) => once(() => new RegExp(`(?<![\\w-])${alt(group)}${END}`)))
    : [once(() => new RegExp(`^${alt(rule.heads)}${END}`))];
  return { gate: (text) => gates.every((g) => g().test(text)), patterns: once(() => fullPatterns(rule)), anywhere };
}

function fullPatterns(rule: LexiconRule): RulePatterns {
  const reach = rule.anywhere ? SENTENCE_WINDOW : WINDOW;
  const within = (words: readonly string[]): string => `.{0,${reach}}?(?<![\\w-])${alt(words)}${END}`;
  const needs = (rule.also ?? []).map((group) => `(?=${within(group)})`);
  const conditions = [...needs, ...(rule.unless ? [`(?!${within(rule.unless)})`] : [])].join('');
  if (rule.anywhere) return { re: new RegExp(`^${conditions}`) };
  const head = `^${alt(rule.heads)}${END}(?![\\s-]+${alt(HEAD_COMPOUNDS)}${END})${conditions}`;
  if (rule.anyObject) {
    const det = `(?:${alt(DETERMINERS)}\\s+)?`;
    return { re: new RegExp(`${head}\\s+(?!${det}${alt(CODE_OBJECTS)}${END})(?!${det}${alt(DISPOSABLE)}[\\s-])\\S`) };
  }
  if (!rule.objects) return { re: new RegExp(head) };
  const word = rule.across ? '\\S+' : `(?!${alt(OBJECT_ENDS)}${END})\\S+`;
  // Across a gap the object is where the act lands ("… against production"), not a thing a word before it could qualify.
  const before = rule.across ? '' : THROWAWAY_BEFORE;
  const object = `${before}${alt(rule.objects)}${END}(?![\\s-]+${alt(CODE_NOUNS)}${END})${THROWAWAY_AFTER}`;
  return {
    re: new RegExp(`${head}(?:\\s+${word}){0,${rule.gap ?? 4}}?\\s+${object}`),
    pronoun: { re: new RegExp(`${head}\\s+${PRONOUNS}${END}`), object: new RegExp(`(?<![\\w-])${object}`) },
  };
}

const compileEntry = (entry: LexiconEntry): { entry: LexiconEntry; rules: CompiledRule[] } => ({
  entry,
  rules: entry.rules.map(compileRule),
});
const COMPILED = POLICY_LEXICON.map(compileEntry);

function ruleMatches(rule: CompiledRule, start: RequestStart): boolean {
  if (rule.anywhere || !rule.gate(start.text)) return false;
  const { re, pronoun } = rule.patterns();
  if (re.test(start.text)) return true;
  return pronoun !== undefined && start.before.length > 0 && pronoun.re.test(start.text) && pronoun.object.test(start.before);
}

/**
 * The categories of the lexicon a task asks for, each once, in the lexicon's order. Pure; the
 * task's text never leaves this function, only labels do.
 */
export function matchLexicon(task: string, lexicon: readonly LexiconEntry[] = POLICY_LEXICON): LexiconHit[] {
  const compiled = lexicon === POLICY_LEXICON ? COMPILED : lexicon.map(compileEntry);
  const sentences = sentencesOf(task);
  const starts = sentences.flatMap(requestStartsOf);
  const asked = (rule: CompiledRule): boolean =>
    rule.anywhere ? sentences.some((s) => rule.gate(s) && rule.patterns().re.test(s)) : starts.some((s) => ruleMatches(rule, s));
  return compiled.filter(({ rules }) => rules.some(asked)).map(({ entry }) => ({ label: entry.label, kind: entry.kind }));
}

/** Lower case, one kind of quote, no markup quotes or brackets, single spaces. */
export function normaliseForMatching(text: string): string {
  return text
    .toLowerCase()
    .replace(/[’‘´]/g, "'")
    .replace(/[`"“”()[\]{}]/g, ' ')
    .replace(/[\t\u00a0\u2000-\u200b\u202f]+/g, ' ')
    .replace(/ {2,}/g, ' ');
}

/** Sentences: ended by . ! ? (before a space), ; : (before a space), a new line or a dash between spaces. */
function sentencesOf(text: string): string[] {
  return normaliseForMatching(text)
    .split(/[.!?]+(?=\s|$)|;|:(?=\s|$)|\n|\s[-–—]+\s/)
    .map((s) => s.trim().replace(bulletRe, ''))
    .filter((s) => s.length > 0);
}

/** The positions after each preamble word, in order, or none when the request is turned down ("please don't …"). */
function headPositions(clause: string): number[] {
  const positions = [0];
  let at = 0;
  for (let step = 0; step < 12; step++) {
    const rest = clause.slice(at);
    if (negationRe.test(rest)) return [];
    const m = preambleRe.exec(rest);
    if (!m || m[0].length === 0) break;
    at += m[0].length;
    positions.push(at);
  }
  return positions;
}

/** The head of a sentence after its preamble: what decides whether it frames its clauses. */
function isFramed(sentence: string): boolean {
  const positions = headPositions(sentence);
  const last = positions[positions.length - 1];
  return last !== undefined && frameRe.test(sentence.slice(last));
}

/** Where a sentence's clauses open, and whether each one is its own request (not the topic of a framed sentence). */
function clauseStarts(sentence: string): number[] {
  const framed = isFramed(sentence);
  const starts = [0];
  for (const m of sentence.matchAll(breakRe)) {
    const at = m.index + m[0].length;
    const sequenced = sequencerRe.test(m[0]) || sequencerStartRe.test(sentence.slice(at));
    const inFrame = framed && subordinatorRe.test(sentence.slice(0, m.index)) && !sequenced;
    if (!inFrame) starts.push(at);
  }
  if (!framed) for (const m of sentence.matchAll(toRe)) starts.push(m.index + m[0].length);
  return starts;
}

/**
 * Every place in a task where a request may open: each sentence and each of its clauses, after
 * each preamble word ("please", "can you", "we need to"), except clauses a document frames and
 * requests turned down.
 */
export function findRequestStarts(task: string): RequestStart[] {
  return sentencesOf(task).flatMap(requestStartsOf);
}

function requestStartsOf(sentence: string): RequestStart[] {
  return clauseStarts(sentence).flatMap((start) => {
    const clause = sentence.slice(start);
    const before = sentence.slice(0, start);
    return headPositions(clause).map((p) => ({ text: clause.slice(p, p + WINDOW), before }));
  });
}
