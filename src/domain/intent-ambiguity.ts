import { normaliseForMatching } from './policy-matcher.js';
import { DETERMINERS, FILLER_WORDS, GENERIC_VERBS, REFERENCE_WORDS, VAGUE_NOUNS } from './request-words.js';

/**
 * Why a task's intent cannot be read, as short labels the audit log records:
 * - `unresolved_reference`: it points at something the command does not give ("Send it to them",
 *   "Update that", "Review the attached file").
 * - `vague_object`: its only object names nothing in particular ("Fix the issue", "Do the thing").
 * - `no_object`: a bare imperative, or no request at all ("Fix.", "Go ahead", "Proceed", "Thoughts?").
 */
export type AmbiguityLabel = 'unresolved_reference' | 'vague_object' | 'no_object';

const wordSet = (list: readonly string[]): RegExp => new RegExp(`^(?:${list.join('|')})$`);
const REFERENCE = wordSet(REFERENCE_WORDS);
const VAGUE = wordSet(VAGUE_NOUNS);
const FILLER = wordSet(FILLER_WORDS);
const VERB = wordSet(GENERIC_VERBS);
const DETERMINER = wordSet(DETERMINERS);

type WordKind = 'reference' | 'vague' | 'empty' | 'content';

/**
 * What a word contributes to the task's object. A generic verb used as a verb names nothing; after
 * a determiner it is a noun ("review *the plan*"), and a vague one ("do *the fix*") names nothing
 * in particular. Words of one letter and bare numbers ("x", "3") name nothing either.
 */
function kindOf(word: string, previous: string | undefined): WordKind {
  if (REFERENCE.test(word)) return 'reference';
  const asNoun = previous !== undefined && DETERMINER.test(previous);
  if (VERB.test(word) && !asNoun) return 'empty';
  if (VAGUE.test(word)) return 'vague';
  if (FILLER.test(word) || word.length === 1 || /^\d+$/.test(word)) return 'empty';
  return 'content';
}

/**
 * Whether a task says what to do and to what. It does not when no word in it names an object —
 * every word is a generic verb, a pronoun, a vague noun or a filler — and the council would be
 * guessing. A command with input artifacts (or work items) gives the object: "Review it" then
 * means the inputs, so it is not ambiguous. Pure; only labels leave this function.
 */
export function readIntentAmbiguity(task: string, context: { readonly hasInputs: boolean }): AmbiguityLabel[] {
  if (context.hasInputs || task.trim().length === 0) return [];
  const words = normaliseForMatching(task).match(/[\p{L}\p{N}][\p{L}\p{N}']*/gu) ?? [];
  const kinds = words.map((w, i) => kindOf(w, words[i - 1]));
  if (kinds.includes('content')) return [];
  if (kinds.includes('reference')) return ['unresolved_reference'];
  return kinds.includes('vague') ? ['vague_object'] : ['no_object'];
}
