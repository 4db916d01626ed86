import type { Sentence, Word } from './english.js';
import { asBase, isVerb } from './clauses.js';
import { type Request, readHead, textNounAt } from './heads.js';

/**
 * What a text wants brought about: an act named by its participle after what it is done to. "I need
 * the old tables dropped tonight", "get PR 88 merged", "have Bob fired by Friday" ask for the act as
 * surely as "drop the old tables" does; a work item's expected output "PR 88 merged into main" or
 * "the refund issued" is that act done. A participle about the past in a statement ("the PR merged
 * cleanly yesterday") is context: only a wish, a verb that makes something happen, or a result asked
 * for reads it so.
 */

/** Verbs that make their object's state happen: "get it merged", "have Bob fired", "see the invoices paid". */
const CAUSING = new Set(['get', 'have', 'see', 'want', 'need', 'like', 'make']);

/** The wish a preamble ends with ("I need", "we'd like"): what follows is the state wanted. */
const WISHING = new Set(['need', 'want', 'like', 'love', 'prefer', 'require', 'expect']);

/**
 * A clause that wants an act's result: after a wish taken off as preamble (`before`), or a causing verb
 * at its start, a noun phrase, then an act's participle.
 */
export function wantedResult(before: readonly Word[], rest: readonly Word[]): Request | undefined {
  const wished = WISHING.has(before.at(-1)?.lemma ?? '');
  const causing = rest[0] !== undefined && CAUSING.has(rest[0].lemma) && isVerb(rest[0]);
  if (!wished && !causing) return undefined;
  const start = causing ? 1 : 0;
  // "a summary of the PRs merged last week": the text is what is wanted; the participle says which PRs.
  const text = textNounAt(rest.slice(start));
  if (text && rest[start + text.end]?.tags.has('Preposition')) return undefined;
  return doneAct(rest, start, 8);
}

/**
 * The acts a result text names as done: a work item's expected output ("PR 88 merged into main",
 * "Bob's account closed and his laptop wiped"). Any act's participle with something before it it is done to.
 */
export function resultActs(sentences: readonly Sentence[]): Request[] {
  const found: Request[] = [];
  for (const { words } of sentences) {
    words.forEach((w, j) => {
      const act = participle(w) && words.slice(0, j).some(named) ? actDone(words, 0, j) : undefined;
      if (act) found.push(act);
    });
  }
  return found;
}

/**
 * The first act's participle within `reach` words after `start`, with a noun phrase (no other verb)
 * from `start` to it: that phrase is what the act is done to.
 */
function doneAct(words: readonly Word[], start: number, reach: number): Request | undefined {
  for (let j = start + 1; j < words.length && j <= start + reach; j++) {
    const w = words[j] as Word;
    if (participle(w) && words.slice(start, j).some(named)) {
      const act = actDone(words, start, j);
      if (act) return act;
    } else if (isVerb(w) && !w.tags.has('Noun') && !w.tags.has('Hyphenated')) return undefined;
  }
  return undefined;
}

/**
 * The participle at `j` said of the words from `start`, read as the command it would be: "the old
 * tables dropped tonight" as "drop the old tables tonight"; an act when that command asks one ("the
 * checklist updated" is "update the checklist": text the council writes).
 */
function actDone(words: readonly Word[], start: number, j: number): Request | undefined {
  const command = [asBase(words[j] as Word), ...words.slice(start, j), ...words.slice(j + 1)];
  const read = readHead(command, true);
  if (read?.head.kind !== 'act') return undefined;
  return { head: read.head, object: command.slice(read.end), decision: false };
}

/** A verb's past participle ("dropped", "sent", "taken"): a past form that is not its dictionary form. */
const participle = (w: Word): boolean => w.tags.has('Verb') && w.tags.has('PastTense') && w.form !== w.lemma;

/** A word that names what an act may be done to. */
const named = (w: Word): boolean => w.tags.has('Noun') || w.tags.has('Pronoun') || w.tags.has('Value');
