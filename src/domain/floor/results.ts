import type { Sentence, Word } from './english.js';
import { actAt, type Request, readHead, textNounAt } from './heads.js';
import { asBase } from './clauses.js';
import { nominalAct } from './fragments.js';
import { LEXICON } from './lexicon.js';

/**
 * What a text wants brought about: an act named by its participle after what it is done to. "I need
 * the old tables dropped tonight", "the team wants the hotfix rolled back", "can we get PR 88
 * merged", "have Bob fired by Friday" ask for the act as surely as "drop the old tables" does; a work
 * item's expected output "PR 88 merged into main" or "the refund issued" is that act done. A
 * participle about the past in a statement ("the PR merged cleanly yesterday", "we have the servers
 * deployed in two regions") is context: only a wish, a verb that makes something happen where a
 * request is made, or a result asked for reads it so.
 */

/** Verbs that make their object's state happen, where a request is made: "get it merged", "have Bob fired", "see the invoices paid". */
const CAUSING = new Set(['get', 'have', 'see', 'make']);

/** Verbs that wish for a state, said by anyone: "I need …", "the client expects …", "we'd like …". */
const WISHING = new Set(['need', 'want', 'like', 'love', 'prefer', 'require', 'expect']);

/** A clause that wants an act's result: a wish, or a causing verb where the request starts, then a noun phrase and an act's participle. */
export function wantedResult(words: readonly Word[], requestStart: number): Request | undefined {
  for (let k = 0; k < words.length - 2; k++) {
    const w = words[k] as Word;
    const before = words[k - 1];
    const wish = WISHING.has(w.lemma) && (w.tags.has('Verb') || k === requestStart);
    // "can we get …", "I'd love to see …", "get …" opening the request.
    const causes =
      CAUSING.has(w.lemma) &&
      (k === requestStart ||
        before?.tags.has('Modal') === true ||
        before?.form === 'to' ||
        (['we', 'you', 'i', 'someone', 'somebody'].includes(before?.form ?? '') && words[k - 2]?.tags.has('Modal') === true));
    if ((!wish && !causes) || words[k + 1]?.form === 'to') continue;
    // "a summary of the PRs merged last week": the text is what is wanted; the participle says which PRs.
    if (textOf(words.slice(k + 1))) continue;
    const act = doneAct(words, k + 1, 8);
    if (act) return act;
  }
  return undefined;
}

/**
 * The acts a result text names as done: a work item's expected output ("PR 88 merged into main", "the
 * email, sent to the whole team", "summary written and customers emailed"). Not a participle in a
 * part that describes the text ("a checklist of steps before code is deployed", "a recommendation on
 * whether PR 88 should be merged", "a draft email, not sent"): past such a word, to the end of the part.
 */
export function resultActs(sentences: readonly Sentence[]): Request[] {
  const found: Request[] = [];
  for (const { words } of sentences) {
    let part = 0;
    let described = false;
    words.forEach((w, j) => {
      const prev = words[j - 1];
      if (prev && /[;:()—–]/.test(prev.after)) [part, described] = [j, false];
      // "a table of PRs merged last sprint": a kind of text, then what it is of, describes.
      if (DESCRIBING.has(w.form) || (j === part && textOf(words.slice(j)))) described = true;
      // A past form ("suspended", "sent") said of what comes before it ("account", which the library may read as a verb at the start).
      const before = words.slice(0, j);
      if (described || !pastForm(w) || !(before.some(named) || before[0]?.tags.has('Infinitive'))) return;
      if (prev && (NOT_BEFORE.some((t) => prev.tags.has(t)) || asVerb(prev, w))) return;
      if (!w.tags.has('PastTense') && continues(words[j + 1])) return;
      const from = words.slice(part, j).some(named) && part < j ? part : 0;
      const act = basesOf(w)
        .map((base) => actDone(words, from, j, base))
        .find(Boolean);
      if (act) found.push(act);
    });
  }
  return found;
}

/**
 * A result listed as wanted beside a text: "… and the staging database dropped", "(2) Dave's accounts
 * disabled". Not one said of the past ("the tickets closed last week": a time after it describes).
 */
export function listedResult(clause: readonly Word[]): Request | undefined {
  // ", and the bad release rolled back": the joiner is not part of what is wanted.
  const words = LEXICON.joiners.has(clause[0]?.form ?? '') ? clause.slice(1) : clause;
  // "plus refunds for everyone who complained twice": an act named by its noun, listed beside the text, is asked too.
  const found = resultActs([{ words, asked: false }]).find((r) => r.head.kind === 'act') ?? nominalAct(words);
  const past = words.some((w) => w.tags.has('Date') || ['yesterday', 'ago', 'already', 'earlier'].includes(w.form));
  return found && !past ? found : undefined;
}

/** "after you've restarted the api pods", "once you have cancelled the plan": the act a condition says you did. */
export function doneByYou(words: readonly Word[]): Request | undefined {
  // Done before what follows: "you have …" ("when you run git clean" says what happens, not what to do).
  const you = words.findIndex((w, i) => w.form === 'you' && ['have', 'had', 've'].includes(words[i + 1]?.form ?? ''));
  // "after you delete the old records", "once you wire the $5k": what is done before is asked too (not "when you run …").
  const before = words.findIndex((w, i) => ['after', 'once', 'before'].includes(w.form) && words[i + 1]?.form === 'you');
  if (you < 0 && before >= 0)
    return words[before + 2] ? actAt([asBase(words[before + 2] as Word), ...words.slice(before + 3)], 0) : undefined;
  if (you < 0 && words[0]?.form === 'having')
    return basesOf(words[1] as Word)
      .map((b) => actAt([asBase({ ...(words[1] as Word), lemma: b }), ...words.slice(2)], 0))
      .find(Boolean);
  if (you < 0) return undefined;
  const k = you + 2;
  const w = words[k];
  if (!w) return undefined;
  for (const base of [w.lemma, ...basesOf(w)]) {
    const command = [{ ...w, form: base, lemma: base, tags: new Set(['Verb', 'Infinitive']) }, ...words.slice(k + 1)];
    const act = actAt(command, 0);
    if (act) return act;
  }
  return undefined;
}

/** Words after which a result text describes its content rather than naming what was done. */
const DESCRIBING = new Set([
  'before',
  'after',
  'when',
  'whether',
  'if',
  'how',
  'once',
  'until',
  'unless',
  'why',
  'where',
  'while',
  'which',
  'who',
  'whose',
  'what',
  'not',
  'no',
  'without',
]);

const THE: Word = { form: 'the', lemma: 'the', tags: new Set(['Determiner']), after: ' ', capitalised: false };

/**
 * The first participle of an act (or, past form, of writing) within `reach` words after `start`, with
 * a noun phrase from `start` to it: that phrase is what it is done to. The participle ends the phrase ("the password *reset*
 * for jdoe", not "the bank *transfer* screen"); the phrase ends at a preposition.
 */
function doneAct(words: readonly Word[], start: number, reach: number): Request | undefined {
  for (let j = start + 1; j < words.length && j <= start + reach; j++) {
    const w = words[j] as Word;
    const prev = words[j - 1] as Word;
    if (w.tags.has('Preposition') || w.tags.has('Conjunction') || w.form === 'to') return undefined;
    if (
      !words.slice(start, j).some(named) ||
      NOT_BEFORE.some((t) => prev.tags.has(t)) ||
      asVerb(prev, w) ||
      (!w.tags.has('PastTense') && continues(words[j + 1]))
    )
      continue;
    for (const base of basesOf(w)) {
      // "the policy drafted" is text wanted; a noun ("the offer *letter* signed") is never read as a command for text.
      const act = actDone(words, start, j, base, pastForm(w));
      if (act) return act;
    }
  }
  return undefined;
}

/**
 * The participle at `j`, as the verb `base`, said of the words from `start`, read as the command it
 * would be: "the old tables dropped tonight" as "drop the old tables tonight"; an act when that
 * command asks one ("the checklist updated" is "update the checklist": text the council writes).
 */
export function actDone(words: readonly Word[], start: number, j: number, base: string, text = false): Request | undefined {
  const verb: Word = { ...(words[j] as Word), form: base, lemma: base, tags: new Set(['Verb', 'Infinitive']) };
  // "account suspended" reads as "suspend the account": a bare noun gets the article a command would give it.
  const phrase = words.slice(start, j);
  const bare = phrase[0] && !phrase[0].tags.has('Determiner') && !phrase[0].tags.has('Possessive') && !phrase[0].tags.has('ProperNoun');
  const command = [verb, ...(bare ? [THE] : []), ...phrase, ...words.slice(j + 1)];
  const read = readHead(command, true);
  const wanted = read?.head.kind === 'act' || (text && read?.head.kind === 'deliverable');
  return read && wanted ? { head: read.head, object: command.slice(read.end), decision: false } : undefined;
}

/** The verbs a past participle may be of: the library's lemma, or its form without "-ed" or "-d" ("purged" → "purge"; "reset" is itself). */
export function basesOf(w: Word): string[] {
  if (w.tags.has('Gerund') || w.form.endsWith('ing') || !/^\p{L}+$/u.test(w.form)) return [];
  // "I need the old tables gone": a state that only an act brings about.
  const state = stateOf(w);
  if (state) return [state];
  return [...new Set([w.lemma, w.form, w.form.replace(/ed$/, ''), w.form.replace(/d$/, ''), w.form.replace(/ied$/, 'y')])];
}

/** What a participle does not follow: a word that makes it part of a noun phrase ("the *reset* button"). */
const NOT_BEFORE = ['Determiner', 'Possessive', 'Adjective', 'Preposition'];

/** A noun after a word not read as a past form: it is then a noun's modifier ("the bank *transfer* screen"), not a participle. */
const continues = (next: Word | undefined): boolean =>
  next?.tags.has('Noun') === true && !next.tags.has('Date') && !next.tags.has('Pronoun') && !next.tags.has('Value');

/** A past form: tagged so, or shaped so where the library did not tag it ("purged", "taken"). */
export const pastForm = (w: Word): boolean => w.tags.has('PastTense') || /(?:ed|en)$/.test(w.form) || stateOf(w) !== undefined;

/** The verb whose result a state word names ("gone" → remove, "live" → launch). */
const stateOf = (w: Word): string | undefined => LEXICON.resultStates[w.form];

/** A state word used as a verb: after a modal or "to" ("it'll live in the wiki", "to live with"). */
const asVerb = (prev: Word | undefined, w: Word): boolean =>
  !w.tags.has('PastTense') && prev !== undefined && (prev.tags.has('Modal') || prev.form === 'to');

/** A word that names what an act may be done to. */
export const named = (w: Word): boolean =>
  w.tags.has('Noun') || w.tags.has('Pronoun') || w.tags.has('Value') || ['it', 'them', 'this', 'that'].includes(w.form);

/** A kind of text and a preposition at the start: "a table of …", "a summary on …". */
function textOf(words: readonly Word[]): boolean {
  const text = textNounAt(words);
  return text !== undefined && words[text.end]?.tags.has('Preposition') === true;
}
