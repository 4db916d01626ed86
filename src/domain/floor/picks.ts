import type { Word } from './english.js';
import { asBase, isBase, startsObject } from './clauses.js';
import type { Request } from './heads.js';
import { LEXICON } from './lexicon.js';
import { basesOf } from './results.js';

/** A subject before the act of a relative clause: "the stocks *we* should sell", "which candidates *they* hire". */
const SUBJECTS = new Set(['i', 'we', 'you', 'they', 'he', 'she']);
export const WH = new Set(['which', 'who', 'whom', 'whose', 'that']);

/** The selected thing, where a passive act's object was ("be taken *them* off the ventilator", "be made *them* redundant"). */
const SELECTED: Word = { form: 'them', lemma: 'them', tags: new Set(['Pronoun']), after: '', capitalised: false };

/**
 * Text that picks what an act is done to is a decision on that act, case by case: "list the
 * employees to fire", "which patients should be taken off the ventilator", "the stocks we should
 * sell tomorrow", "the users whose accounts we delete". The act's verb follows "to", a modal or a
 * subject, or stands in the passive, and its object is the one selected: no object of its own
 * follows it ("a plan to drop *a table*" is about dropping, not a choice of what to drop).
 */
export function selection(words: readonly Word[], choosing = false): Request | undefined {
  const picked = pickedPassive(words, choosing);
  if (picked) return picked;
  for (let j = 1; j < words.length; j++) {
    const before = words[j - 1] as Word;
    const passive = ['be', 'get'].includes(words[j]?.lemma ?? '') && words[j + 1]?.tags.has('Verb') === true;
    const verb = words[passive ? j + 1 : j] as Word;
    // After a subject, only in a clause about what was named before it ("the stocks we sell", not "so I stop …").
    const relative = SUBJECTS.has(before.form) && (words[j - 2]?.tags.has('Noun') === true || WH.has(words[j - 2]?.form ?? ''));
    // "how to post", "the best time to post": a way or a time, not what to post.
    const led =
      (before.form === 'to' && words[j - 2]?.form !== 'how' && !LEXICON.times.has(words[j - 2]?.lemma ?? '')) ||
      LEXICON.decisionModals.has(before.form) ||
      relative;
    if (!led || !verb.tags.has('Verb') || (!passive && !isBase(verb))) continue;
    // "a motion to dismiss": the verb is inside the name of a kind of text.
    if ([j - 3, j - 2].some((i) => i >= 0 && (LEXICON.textNouns.at(words, i)?.end ?? 0) > j)) continue;
    const after = words.slice(passive ? j + 2 : j + 1);
    const rest = passive ? [asBase(verb), SELECTED, ...after] : [verb, ...after];
    // "for me to edit", "the parts to rewrite": picking what to write is no decision to act.
    const act = LEXICON.deliverableVerbs.at(rest, 0) ? undefined : LEXICON.actVerbs.allAt(rest, 0);
    // "a note for me to send", "a reply I can send", "an email we'll forward": the writer sends the text asked for; nothing is picked.
    // Not when material follows ("… I can send: pick which customers get the refund"): what it asks is not known.
    const material = verb.after.includes(':');
    if (act?.values.every((c) => c === 'send' || c === 'publish') && !material && writerSendsText(words, j)) continue;
    if (act && (passive || !ownObject(rest.slice(act.end))))
      return { head: { kind: 'act', classes: act.values, decision: true }, object: rest.slice(act.end), decision: true };
    // "list who should be rejected": what someone should do to each, an act the floor cannot name.
    if (OBLIGATION.has(before.form)) return { head: { kind: 'question' }, object: words.slice(j), decision: true };
  }
  return undefined;
}

/**
 * "who gets cut", "which tables get dropped", "who will be dismissed", "whose application is
 * approved": a word that picks, what it picks, then the act in the passive, done to what was picked.
 */
function pickedPassive(words: readonly Word[], choosing: boolean): Request | undefined {
  for (let k = 0; k < words.length; k++) {
    // "decide whether the loan is approved": when the request is a choice, "whether" and "if" pick too.
    const picker =
      (WH.has(words[k]?.form ?? '') && words[k]?.form !== 'that') || (choosing && ['whether', 'if'].includes(words[k]?.form ?? ''));
    if (!picker) continue;
    let i = k + 1;
    const picked: Word[] = [];
    const be = (w: Word) => ['be', 'get'].includes(w.lemma) || w.tags.has('Copula');
    const auxiliary = (w: Word) => be(w) || w.tags.has('Modal') || ['will', 'would', 'to'].includes(w.form);
    while (i < words.length && !auxiliary(words[i] as Word) && picked.length < 5) picked.push(words[i++] as Word);
    let passive = false;
    let past = false;
    // "is approved" alone picks only in a choice: "which services are deployed in us-east-1" is how things are.
    let present = true;
    while (i < words.length && auxiliary(words[i] as Word)) {
      const w = words[i++] as Word;
      past ||= ['was', 'were'].includes(w.form);
      present &&= w.tags.has('Copula') && w.lemma !== 'be';
      passive ||= be(w);
    }
    if (present && !choosing) continue;
    // "which invoices were paid" is what happened, "which product lines are declining" what is going on: no pick;
    const participle = words[i];
    // "which tables are dropped by the migration" says what something else does.
    if (!passive || past || !participle || participle.form.endsWith('ing') || words[i + 1]?.form === 'by') continue;
    if (participle.tags.has('Adjective') && !participle.tags.has('Verb') && !participle.form.endsWith('ed')) continue;
    const object = picked.some((w) => w.tags.has('Noun')) ? picked.filter((w) => !WH.has(w.form)) : [SELECTED];
    for (const base of basesOf(participle)) {
      const rest = [{ ...asBase(participle), form: base, lemma: base }, ...object, ...words.slice(i + 1)];
      const act = LEXICON.actVerbs.allAt(rest, 0);
      if (act) return { head: { kind: 'act', classes: act.values, decision: true }, object: rest.slice(act.end), decision: true };
    }
  }
  return undefined;
}

/** The act at `j` is the writer's, done to the kind of text named just before them ("a reply *I can* send", "a note *for me to* send"). */
function writerSendsText(words: readonly Word[], j: number): boolean {
  let k = j - 1;
  while (k > 0 && (LEXICON.decisionModals.has(words[k]?.form ?? '') || ['to', 'will', 'll', 'would', 'can'].includes(words[k]?.form ?? '')))
    k--;
  if (!['i', 'we', 'me', 'us'].includes(words[k]?.form ?? '')) return false;
  // "… for me to send": the text asked for is what is sent, however it was named.
  if (words[k - 1]?.form === 'for' && words[k + 1]?.form === 'to') return true;
  k -= ['that', 'which'].includes(words[k - 1]?.form ?? '') ? 2 : 1;
  // "which offer letters we should send": a pick of what is sent is a decision, whatever it picks.
  if (words.slice(Math.max(0, k - 4), k + 1).some((w) => ['which', 'what', 'whose', 'whether'].includes(w.form))) return false;
  if ([k, k - 1].some((i) => i >= 0 && (LEXICON.textNouns.at(words, i)?.end ?? -1) === k + 1)) return true;
  // "an update we could forward": the first noun of what the council is asked to write is that text, unless it names people.
  const noun = words[k];
  return (
    noun?.tags.has('Noun') === true && words.findIndex((w) => w.tags.has('Noun')) === k && LEXICON.objectKinds.at(words, k) === undefined
  );
}

/** Modals that ask what should be done, not what could be. */
const OBLIGATION = new Set(['should', 'must', 'ought']);

/** Whether an act's words are followed by an object of its own, not by a time ("this quarter", "tomorrow"), a place or the end. */
function ownObject(words: readonly Word[]): boolean {
  const next = words[0];
  if (!next || ['Date', 'Preposition', 'Adverb', 'Ordinal'].some((t) => next.tags.has(t))) return false;
  if (next.tags.has('Determiner') && words[1]?.tags.has('Date')) return false;
  return startsObject(next) || next.tags.has('Noun') || next.tags.has('Adjective');
}
