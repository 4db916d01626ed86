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
  const [item, before] = [last.object.at(-1), last.object.at(-2)];
  return item !== undefined && !item.tags.has('Determiner') && (!before || before.tags.has('Preposition') || before.after.includes(','));
}

/** Words that put a step after another. */
const SEQUENCE = new Set(['then', 'next', 'finally', 'afterwards', 'afterward']);

/** "then terraform apply", "then kubectl apply -f prod.yaml": a tool, then its command, an act's verb. */
export function toolStep(clause: Clause, rest: readonly Word[]): Request | undefined {
  const [first, second] = rest;
  if (!first || !second || !SEQUENCE.has(clause.words[0]?.form ?? '') || rest.length > 6) return undefined;
  if (first.capitalised || LEXICON.subjects.has(first.form) || !isBase(second)) return undefined;
  return actAt(rest, 1);
}

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
