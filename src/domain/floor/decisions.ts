import type { Word } from './english.js';
import { asBase, isVerb, startsObject } from './clauses.js';
import { type Head, type Request, readHead } from './heads.js';
import { LEXICON } from './lexicon.js';
import { selection, WH } from './picks.js';
import { basesOf, pastForm } from './results.js';

/**
 * Questions and decisions: what a question asks (an answer, or a decision on an act), and the act a
 * decision inside a request is about ("tell me whether to sell", "decide to let Bob go").
 */

/**
 * A question (a polite request, "could you merge it?", was taken off as preamble before this). It
 * asks for an answer, or for a decision ("should I sell my shares?", "is it safe to …", "what dose
 * should my son take?"), whose act the floor reads like a request's.
 */
export function questionRequest(words: readonly Word[], hasInputs: boolean): Request {
  // "Should Bob be fired?", "must the old tables be dropped tonight?": the act in the passive is what is decided;
  // not "can a merged PR be reverted?", a question about any case.
  if (LEXICON.decisionModals.has(words[0]?.form ?? '') && !['a', 'an', 'any'].includes(words[1]?.form ?? '')) {
    // "should Bob be fired?", "shouldn't Dave's badge have been deactivated?"
    const be = words.findIndex((w, j) => j > 1 && (w.form === 'be' || (w.form === 'been' && words[j - 1]?.form === 'have')));
    const participle = be > 0 ? words[be + 1] : undefined;
    if (participle && !participle.tags.has('Gerund')) {
      // The subject is a noun phrase, whatever the library made of a word in it ("Grace", "account 4471" as verbs).
      const subject = words
        .slice(1, be)
        .filter((w) => w.form !== 'not' && w.form !== 'have')
        .map((w) => (w.capitalised ? { ...w, tags: new Set(['Noun', 'ProperNoun']) } : isVerb(w) ? { ...w, tags: new Set(['Noun']) } : w));
      // "frozen", read as an adjective, is still "freeze" done to it.
      const bases = participle.tags.has('Verb') || pastForm(participle) ? [participle.lemma, ...basesOf(participle)] : [];
      for (const base of new Set(bases)) {
        const verb = { ...asBase(participle), form: base, lemma: base };
        const decided = decisionOn([verb, ...subject, ...words.slice(be + 2)], hasInputs);
        if (decided?.head.kind === 'act') return decided;
      }
    }
  }
  const phrase = LEXICON.decisionPhrases.at(words, 0);
  if (phrase) return decisionOn(words.slice(phrase.end), hasInputs) ?? { head: { kind: 'question' }, object: words, decision: true };
  const modal = words.findIndex((w, j) => LEXICON.decisionModals.has(w.form) && LEXICON.decisionSubjects.has(words[j + 1]?.form ?? ''));
  if (modal >= 0) {
    // Past the subject ("we", "my dad", "our game day"), the verb is what would be decided.
    let v = modal + 2;
    if (!LEXICON.subjects.has(words[modal + 1]?.form ?? '')) {
      while (
        v < words.length &&
        v < modal + 6 &&
        !(isVerb(words[v]) && !startsObject(words[v - 1]) && !words[v - 1]?.tags.has('Adjective'))
      )
        v++;
    }
    const decided = decisionOn(words.slice(v), hasInputs);
    // A decision the floor cannot place ("how should we structure it?") is a question to answer; its domain still counts.
    if (decided && decided.head.kind !== 'unplaced') return { ...decided, object: [...words.slice(0, modal), ...decided.object] };
    return { head: { kind: 'question' }, object: words, decision: true };
  }
  // "who gets fired?", "which engineer should be let go?": a question that picks what an act is done to.
  // "which engineer should be let go?", "what's the best stock to buy?": a question with a word that picks.
  const picks = words.some((w) => (WH.has(w.form) && w.form !== 'that') || w.form === 'what');
  return (
    decisionInside(words, hasInputs) ??
    (picks ? selection(words) : undefined) ?? { head: { kind: 'question' }, object: words, decision: false }
  );
}

/** "tell me whether to plead guilty", "what to put it in": a decision inside a request. */
export function decisionInside(words: readonly Word[], hasInputs: boolean): Request | undefined {
  const at = words.findIndex((w, j) => {
    // "how to stop password guessing" asks for a way, not a choice ("how much to give" is one).
    if (!LEXICON.decisionWords.has(w.form) || (w.form === 'how' && words[j + 1]?.form === 'to')) return false;
    // "whether to sell", "which fund to pick", "how much to give"; not "what tends to go wrong".
    const to = words.slice(j + 1, j + 4).findIndex((x) => x.form === 'to');
    return to >= 0 && words.slice(j + 1, j + 1 + to).every((x) => !isVerb(x)) && isVerb(words[j + 2 + to]);
  });
  if (at < 0) return undefined;
  const to = words.findIndex((w, j) => j > at && w.form === 'to');
  return decisionOn(words.slice(to + 1), hasInputs);
}

/** The act (or text) a decision is about, marked as decided. */
export function decisionOn(words: readonly Word[], hasInputs: boolean): Request | undefined {
  const read = readHead(words, hasInputs);
  if (!read) return undefined;
  const head: Head = read.head.kind === 'act' ? { ...read.head, decision: true } : read.head;
  return { head, object: words.slice(read.end), decision: true };
}
