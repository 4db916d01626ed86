import type { Word } from './english.js';
import { LEXICON } from './lexicon.js';

/**
 * A sentence's clauses, and what a clause looks like: where a request could start (past its
 * politeness and modal forms, "please", "can you", "we need to"), whether it is a statement ("the
 * deploy pipeline is red"), a question, or negated ("do not send it"). The words are data
 * (`lexicon.json`, "clause" and "preamble").
 */

const HARD = /[;:()—–]|\s-\s/;
const SOFT = /,/;

export const isVerb = (w: Word | undefined): boolean =>
  w?.tags.has('Verb') === true && !w.tags.has('Gerund') && !w.tags.has('PastTense') && !w.tags.has('Auxiliary') && !w.tags.has('Copula');
export const isBase = (w: Word): boolean => w.form === w.lemma || w.tags.has('Infinitive') || w.tags.has('Imperative');
export const startsObject = (w: Word | undefined): boolean =>
  w !== undefined &&
  (w.tags.has('Determiner') || w.tags.has('Pronoun') || w.tags.has('Possessive') || w.tags.has('ProperNoun') || w.tags.has('Value'));

export interface Clause {
  readonly words: Word[];
  /** How it is joined to the clause before it: first, by "and"/"or", or by punctuation or "then". */
  readonly join: 'first' | 'and' | 'break';
}

/** Splits a sentence into clauses at punctuation and coordinating words (which are dropped). */
export function clausesOf(words: readonly Word[]): Clause[] {
  const out: { words: Word[]; join: Clause['join'] }[] = [{ words: [], join: 'first' }];
  for (const [i, w] of words.entries()) {
    if (actAfterCondition((out[out.length - 1] as Clause).words, words, i)) out.push({ words: [], join: 'break' });
    const current = out[out.length - 1] as Clause;
    // "the next chapter", "our next step": after a determiner an opener is a word of the phrase ("what if", "is it ok if" are polite forms).
    const inPhrase =
      current.words.at(-1)?.tags.has('Determiner') === true ||
      current.words.at(-1)?.tags.has('Possessive') === true ||
      (w.form === 'if' && current.words.length === 1 && current.words[0]?.form === 'what') ||
      (w.form === 'if' && ['ok', 'okay', 'alright', 'mind', 'fine', 'great'].includes(current.words.at(-1)?.form ?? '')) ||
      // "decide if the contractor is paid", "tell me when it ships": a question the clause asks, as "whether" is.
      (['if', 'when'].includes(w.form) && LEXICON.embedsQuestion.has(words[i - 1]?.lemma ?? '')) ||
      (w.form === 'next' && words[i + 1]?.tags.has('Date') === true) ||
      // ", and when would …": a joiner alone does not make a clause an opener could end.
      (current.words.length === 1 && LEXICON.joiners.has(current.words[0]?.form ?? ''));
    if ((LEXICON.joiners.has(w.form) || LEXICON.openers.has(w.form)) && current.words.length > 0 && !inPhrase) {
      // "…, then after the review merge PR 412": a condition's word stays with its clause, which says what to do then.
      // "before rolling it out" is a phrase of its clause.
      const keeps = OPENS_CONDITION.has(w.form) && words[i + 1]?.tags.has('Gerund') !== true;
      out.push({ words: keeps ? [w] : [], join: LEXICON.joiners.has(w.form) ? 'and' : 'break' });
      continue;
    }
    if (LEXICON.openers.has(w.form) && current.words.length === 0 && current.join === 'and')
      (current as { join: Clause['join'] }).join = 'break';
    current.words.push(w);
    // "… I can send: pick which customers get the refund": a command after a colon is a clause of its own.
    const commandNext = w.after.includes(':') && words[i + 1]?.tags.has('Imperative') === true;
    if (HARD.test(w.after) || SOFT.test(w.after) || commandNext) out.push({ words: [], join: 'break' });
  }
  return out.filter((c) => c.words.length > 0);
}

/** Words that open a condition: the clause after it says what to do then. */
export const CONDITIONS = new Set(['if', 'when', 'once', 'unless', 'whenever']);

/** Words that open a condition or a time, after which a base verb can start what to do then. */
const OPENS_CONDITION = new Set([...CONDITIONS, 'after', 'before', 'until']);

/**
 * "if nobody objects by noon merge PR 88", "once QA signs off deploy", "after lunch write the summary":
 * with no comma, a verb in its base form after the condition's own verb (or a short condition) starts
 * the clause that says what to do. By the words' order, not their tags alone: the English library
 * reads "merge" after "noon" as a noun.
 */
function actAfterCondition(clause: readonly Word[], words: readonly Word[], i: number): boolean {
  const [opener, ...rest] = clause;
  const w = words[i] as Word;
  const before = words[i - 1];
  const condition = opensCondition(clause, words);
  if (!condition || !before || rest.length === 0 || w.form !== w.lemma || LEXICON.subjects.has(w.form) || w.tags.has('Modal')) return false;
  if (LEXICON.questionAuxiliaries.has(w.form)) return false;
  // "if finance signs off on it": a particle after a verb is the verb's.
  if (LEXICON.particles.has(w.form) && before?.tags.has('Verb')) return false;
  const known = LEXICON.actVerbs.allAt(words, i) ?? LEXICON.deliverableVerbs.at(words, i);
  if (!known && !(isVerb(w) && isBase(w))) return false;
  // The condition's own verb, before this one: not an auxiliary ("when does the page ship?" is a question); or a short one ("when ready").
  if (LEXICON.questionAuxiliaries.has(rest[0]?.form ?? '')) return false;
  // A short condition with no verb names a state or a time: "when ready", "if green", "after lunch"; "if users delete …" has its verb still to come.
  const short =
    rest.length <= 2 && (['after', 'before', 'until'].includes(opener?.form ?? '') || rest.every((x) => SHORT.some((t) => x.tags.has(t))));
  if (!rest.some((x) => x.tags.has('Verb') && !x.tags.has('Modal') && !x.tags.has('Auxiliary')) && !short) return false;
  const next = words[known?.end ?? i + 1];
  if (next && isVerb(next) && !next.tags.has('Noun')) return false;
  if (compoundNoun(words, i, known?.end ?? i + 1)) return false;
  // "when the canary looks healthy roll out …": an adjective after a verb ends the condition; "the final merge" is a noun.
  const complement = before.tags.has('Adjective') && (words[i - 2]?.tags.has('Verb') === true || words[i - 2]?.tags.has('Copula') === true);
  const particle = before.tags.has('Particle') || (LEXICON.particles.has(before.form) && words[i - 2]?.tags.has('Verb') === true);
  // "when ready go ahead", "if green merge": a short condition's last word is its state.
  const state = short && rest.every((x) => SHORT.some((t) => x.tags.has(t)) && !x.tags.has('Determiner'));
  return (
    (state || complement || particle || !NOT_BEFORE_VERB.some((t) => before.tags.has(t))) &&
    !['to', ...LEXICON.subjects].includes(before.form)
  );
}

/**
 * "when a bank processes an international wire transfer, …": after the condition's verb and a
 * determiner, a noun that ends the clause with no object of its own is the last word of that phrase.
 */
function compoundNoun(words: readonly Word[], i: number, end: number): boolean {
  const w = words[i] as Word;
  const next = words[end];
  if (
    !w.tags.has('Noun') ||
    (next && !next.tags.has('Preposition') && !HARD.test(words[end - 1]?.after ?? '') && !SOFT.test(words[end - 1]?.after ?? ''))
  )
    return false;
  let k = i - 1;
  while (k > 0 && (words[k]?.tags.has('Noun') || words[k]?.tags.has('Adjective'))) k--;
  const determiner = words[k]?.tags.has('Determiner') === true || words[k]?.tags.has('Possessive') === true;
  return k < i - 1 && determiner && words[k - 1]?.tags.has('Verb') === true && !words[k - 1]?.tags.has('Auxiliary');
}

/** Whether a clause states a condition: "if …", "after …", "in case …", or an inversion opening the sentence ("Were the tests to pass, …"). */
export function opensCondition(clause: readonly Word[], sentence: readonly Word[]): boolean {
  const [opener, next] = clause;
  const inverted = opener === sentence[0] && ['were', 'had'].includes(opener?.form ?? '') && startsObject(next);
  return inverted || OPENS_CONDITION.has(opener?.form ?? '') || (opener?.form === 'in' && next?.form === 'case');
}

/** What a short condition's words are: "ready", "green", "today", "so". */
const SHORT = ['Adjective', 'Date', 'Adverb', 'Value'];

/** What a verb does not follow: a word that makes it a noun ("the merge"), or wants a verb after it ("can merge", "to merge"). */
const NOT_BEFORE_VERB = ['Determiner', 'Possessive', 'Adjective', 'Preposition', 'Modal', 'Auxiliary', 'Pronoun', 'Copula'];

/** Politeness, urgency and modal forms before a head, taken off one after another. */
export function stripPreamble(words: readonly Word[]): { rest: Word[]; negated: boolean } {
  let rest = [...words];
  let negated = false;
  let polite = false;
  for (;;) {
    const neg = LEXICON.negations.at(rest, 0);
    if (neg && neg.end < rest.length) {
      negated = true;
      rest = rest.slice(neg.end);
      continue;
    }
    const pre = LEXICON.preamble.at(rest, 0);
    if (!pre || pre.end >= rest.length) break;
    rest = rest.slice(pre.end);
    polite = true;
  }
  // "would you mind dropping …", "how about wiring …", "what if you merged …": the verb after a polite form, in its base form.
  const verb = rest[0];
  if (polite && verb?.tags.has('Verb') && (verb.tags.has('Gerund') || verb.tags.has('PastTense'))) rest = [asBase(verb), ...rest.slice(1)];
  // "help me write …", "need help saying it": the verb after "help" is the request.
  if (rest[0]?.form === 'help' && (isVerb(rest[1]) || rest[1]?.tags.has('Gerund'))) rest = [asBase(rest[1] as Word), ...rest.slice(2)];
  return { rest, negated };
}

export const asBase = (w: Word): Word => ({ ...w, form: w.lemma, tags: new Set([...w.tags, 'Infinitive']) });

/** "Deploy pipeline is red", "Transfer speeds are slow", "Launch is set": a noun phrase and its verb, not a request ("Drop users table which is old" is one). */
export function statementShape(words: readonly Word[]): boolean {
  const next = words[1];
  // "Launch is set for May", "Fire has spread": a verb's form followed at once by "is" or "has" is a noun, the subject.
  if (next && (next.tags.has('Copula') || LEXICON.finite.has(next.form))) return true;
  if (!next?.tags.has('Noun') || startsObject(next)) return false;
  for (const w of words.slice(2, 8)) {
    if (LEXICON.relative.has(w.form) || w.tags.has('Determiner') || w.tags.has('Preposition')) return false;
    if (LEXICON.finite.has(w.form) || w.tags.has('Copula')) return true;
  }
  return false;
}

/** "a script to drop …": the words end on "to" and a verb; not inside the name of a text ("the motion to dismiss"). */
export const endsWithTo = (words: readonly Word[]): boolean =>
  words.length >= 2 &&
  words[words.length - 2]?.form === 'to' &&
  // "a note for me to send, and email it to Sarah": the writer's own act ends what they will do; what follows is asked.
  !['me', 'us'].includes(words[words.length - 3]?.form ?? '') &&
  ![3, 4].some((k) => words.length >= k && LEXICON.textNouns.at(words, words.length - k)?.end === words.length);

export function isQuestionStart(words: readonly Word[], asked: boolean): boolean {
  const first = words[0]?.form ?? '';
  if (!LEXICON.questionOpeners.has(first)) return false;
  if (!LEXICON.questionAuxiliaries.has(first)) return true;
  // "Is the plan sound?", "Do we need it"; not "Do what the email asks", "Do everything on the list". "Shouldn't Dave …": past the "not".
  const next = words[1]?.form === 'not' ? words[2] : words[1];
  if (!next || LEXICON.questionOpeners.has(next.form) || LEXICON.everything.has(next.form)) return false;
  // "Should Bob be fired?": a name, whatever the library tags it; "Should account 4471 be frozen?": a subject before "be".
  return (
    LEXICON.subjects.has(next.form) ||
    (asked && (next.tags.has('Noun') || next.tags.has('Determiner') || next.tags.has('Adjective') || next.capitalised)) ||
    (asked && LEXICON.decisionModals.has(first) && words.slice(2, 6).some((w) => w.form === 'be'))
  );
}
