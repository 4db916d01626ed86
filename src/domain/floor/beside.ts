import type { Word } from './english.js';
import { type Clause, isBase } from './clauses.js';
import { actAt, type Head, type Request } from './heads.js';
import { LEXICON } from './lexicon.js';

/**
 * A clause read beside the request before it: one more topic of a comparison's list, a tool's command
 * as the next step, or the writing a person asked help with.
 */

/** Kinds of text whose object may be a list of words: what is compared or explained. */
const TOPICS = new Set(['comparison', 'explanation']);

/**
 * "Compare merge, rebase and squash", "the difference between TRUNCATE, DELETE and DROP": single words
 * listed after the one a comparison or an explanation names are its topics too. Not "compare the builds
 * and deploy", nor "explain rebase, then merge".
 */
export function listedTopic(clause: Clause, rest: readonly Word[], last: Request | undefined): boolean {
  const listItem = clause.join === 'and' || (clause.join === 'break' && clause.words.length === 1);
  if (!listItem || rest.length !== 1 || last?.head.kind !== 'deliverable' || !TOPICS.has(last.head.deliverable)) return false;
  // A list: a comma between its words, or "between" before the first; not "compare the release with main and deploy".
  const [item, before] = [last.object.at(-1), last.object.at(-2)];
  if (!item || item.tags.has('Determiner')) return false;
  return item.after.includes(',') || before?.after.includes(',') === true || before?.form === 'between';
}

/**
 * "then terraform apply", "and git push them to main", "gh pr merge", "once done, npm publish": a tool
 * (a word in lower case, no subject, article or preposition), then its command, an act's verb. Not "and
 * team review" (no act), nor a label before a colon ("feat: bulk export", where the word is a noun).
 */
export function toolStep(clause: Clause, said: readonly Word[]): Request | undefined {
  // Past "subsequently", "when ready", "once done": the tool.
  const rest = said.slice(
    Math.max(
      0,
      said.findIndex((w) => !w.tags.has('Adverb') && !LEAD.has(w.form)),
    ),
  );
  if (clause.join === 'first' || rest.length > 10) return undefined;
  for (const at of [1, 2]) {
    const verb = rest[at];
    const tool = rest.slice(0, at);
    // The library may read the command as a noun ("gh pr merge"): at the end, or before its object, it is the verb.
    const next = rest[at + 1];
    // Not "feat: bulk export" (a label's noun phrase): a one-word tool and a noun at the end say nothing is done.
    const commands = next
      ? next.tags.has('Pronoun') || next.tags.has('Determiner') || next.tags.has('Value') || next.tags.has('Verb') || next.form === 'force'
      : at > 1;
    if (!verb || !isBase(verb) || (verb.tags.has('Noun') && !verb.tags.has('Verb') && !commands)) continue;
    if (tool.some((w) => w.capitalised || LEXICON.subjects.has(w.form) || NOT_TOOL.some((t) => w.tags.has(t)) || w.after.includes(':')))
      continue;
    const act = actAt(rest, at);
    if (act) return act;
  }
  // "then quit through the HR portal": a verb put as the next step is a request, placed or not.
  const first = said[0];
  if (first && SEQUENCE.has(clause.words[0]?.form ?? '') && first.tags.has('Verb') && !first.tags.has('Noun') && first.form === first.lemma)
    return { head: { kind: 'unplaced', verb: first.form }, object: said.slice(1), decision: false };
  return undefined;
}

/** Words that put a step after another. */
const SEQUENCE = new Set(['then', 'next', 'finally', 'afterwards', 'afterward', 'subsequently']);

/** Words before a tool: a time, a short condition ("when ready", "once done"). */
const LEAD = new Set(['when', 'once', 'ready', 'done', 'after', 'that', 'then', 'subsequently', 'finally', 'next']);
const NOT_TOOL = ['Determiner', 'Preposition', 'Pronoun', 'Possessive', 'Adverb', 'Conjunction', 'Value', 'Date'];

/** "help me write to my landlord": the writer writes and sends; the council helps with the text. */
export function helpedToWrite(
  clause: Clause,
  rest: readonly Word[],
  read: { head: Head; end: number } | undefined,
): { head: Head; end: number } | undefined {
  const helped = clause.words
    .slice(0, clause.words.length - rest.length)
    .some((w, i, a) => w.form === 'help' && ['me', 'us'].includes(a[i + 1]?.form ?? ''));
  const sends = read?.head.kind === 'act' && read.head.classes.every((c) => c === 'send');
  return read && helped && sends && LEXICON.deliverableVerbs.at(rest, 0)
    ? { head: { kind: 'deliverable', deliverable: 'draft' }, end: read.end }
    : read;
}
