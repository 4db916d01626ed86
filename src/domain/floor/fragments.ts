import type { Word } from './english.js';
import { type Clause, isBase, isVerb, statementShape } from './clauses.js';
import { actAt, type Request } from './heads.js';
import { LEXICON } from './lexicon.js';

/**
 * A clause that opens no request the floor can read, and is no statement: what it asks is not
 * recognised, so it is not let through as context. An act named by its noun ("termination of Bob,
 * effective today", "immediate rollback of release 5.1") is that act; a clause shaped as a command
 * (a word, then its object: "sunset the v1 API", "page the team"), or one a polite form opens ("pls
 * delte the prod db"), is a request the floor cannot place.
 */
export function unread(rest: readonly Word[], clause: Clause, question: boolean): Request[] {
  const named = nominalAct(rest);
  if (named) return [named];
  const first = rest[0];
  if (question || !first || statementShape(rest)) return [];
  // "kubectl delete namespace payments": an act's verb inside words that are no sentence.
  const at = rest.findIndex((w, i) => i > 0 && isVerb(w) && isBase(w) && LEXICON.actVerbs.allAt(rest, i) !== undefined);
  if (at > 0 && !rest.slice(0, at).some((w) => w.tags.has('Verb') || LEXICON.subjects.has(w.form))) {
    const act = actAt(rest, at);
    if (act) return [act];
  }
  const before = clause.words.slice(0, clause.words.length - rest.length);
  // Taken off before it: a form that asks the council ("please", "can you"), or one with a subject of its own ("I want to").
  const asks = before.some((w) => ADDRESSED.has(w.form));
  const subject = before.some((w) => LEXICON.subjects.has(w.form));
  if (asks || (!subject && commandShape(rest, true)))
    return [{ head: { kind: 'unplaced', verb: first.form }, object: rest.slice(1), decision: false }];
  return [];
}

/**
 * A sentence that grants, said after a request: "Approved.", "Yes, go.", "Permission granted.", "You
 * have my approval.", "I consent." It grants something the floor cannot name (never a text), so it
 * is a request it cannot place: a person reads what was granted. A state ("Done.", "Merged.") is not one.
 */
export function grant(words: readonly Word[], whole: boolean): Request | undefined {
  if (words.length > 6) return undefined;
  // In a sentence of its own, what is granted may be named ("Payment authorised."); in a clause, "budget approved" is a note.
  const granting = words.filter(
    (w) => (GRANTS.has(w.lemma) || GRANTS.has(w.form)) && (whole || w.lemma !== 'go') && !(w.capitalised && w !== words[0]),
  );
  // What is granted may be named beside a past form only ("Payment authorised."), not beside a noun ("Approval workflow").
  const named = whole && granting.some((w) => /ed$/.test(w.form) || w.tags.has('PastTense'));
  const rest = words.filter((w) => !granting.includes(w) && !GRANT_FILLER.has(w.form) && !(named && w.tags.has('Noun')));
  if (granting.length === 0 || rest.length > 0) return undefined;
  return { head: { kind: 'unplaced', verb: granting.map((w) => w.form).join(' ') }, object: [], decision: false };
}

/**
 * "You have my approval to deploy.", "I trust you to hit send.", "You're cleared to send it.": a
 * permission or a charge given for an act asks the act, whatever the rest of the sentence is.
 */
export function permittedAct(words: readonly Word[]): Request | undefined {
  for (let i = 1; i < words.length - 1; i++) {
    if (words[i]?.form !== 'to') continue;
    const before = words[i - 1]?.form ?? '';
    const you = words.slice(Math.max(0, i - 4), i - 1).some((w) => w.form === 'you');
    if (!(before === 'you' || LEXICON.permits.has(before) || (LEXICON.cleared.has(before) && you))) continue;
    const act = actAt(words, i + 1);
    if (act) return act;
  }
  return undefined;
}

/** Words that grant: "approved", "authorised", "permission", "consent", "greenlit", "go ahead", "yes". */
const GRANTS = new Set([
  'approve',
  'approved',
  'approval',
  'authorize',
  'authorise',
  'authorized',
  'authorised',
  'authorization',
  'authorisation',
  'permission',
  'grant',
  'granted',
  'consent',
  'agree',
  'agreed',
  'accept',
  'accepted',
  'greenlight',
  'greenlit',
  'sanction',
  'sanctioned',
  'clear',
  'cleared',
  'confirm',
  'confirmed',
  'sign',
  'signed',
  'go',
  'yes',
  'proceed',
]);

/** What may stand beside a grant: who grants, to whom, "hereby", "consider this". */
const GRANT_FILLER = new Set([
  'thanks',
  'thank',
  'cheers',
  'please',
  'i',
  'we',
  'you',
  "you're",
  're',
  'me',
  'us',
  'my',
  'our',
  'have',
  'has',
  'is',
  'are',
  'be',
  'this',
  'it',
  'that',
  'consider',
  'hereby',
  'ok',
  'okay',
  'sure',
  'all',
  'fully',
  'by',
  'off',
  'ahead',
  'then',
  'so',
  'do',
  'the',
  'a',
  'full',
  'and',
]);

/** "Please" and its forms. */
export const PLEASE: ReadonlySet<string> = new Set(['please', 'pls', 'plz', 'kindly']);

/** Words of a polite form that ask the council itself (not "then", "also" or "so"). */
const ADDRESSED = new Set([...PLEASE, 'you', 'u', 'ya']);

/** What a command's first word is not: a time, an adverb, a function word, a form of a verb, a number or a describing word. */
const NO_COMMAND = [
  'Date',
  'Adverb',
  'Preposition',
  'Conjunction',
  'Determiner',
  'Pronoun',
  'Gerund',
  'PastTense',
  'Value',
  'Adjective',
  'Possessive',
];

/**
 * A word that is no subject, time, adverb or function word, followed at once by an object: "sunset
 * *the* API", "page *Bob*" (a name only where no coordination can have made it: "the Montessori and
 * *Reggio Emilia* approaches").
 */
export function commandShape(words: readonly Word[], names: boolean): boolean {
  const [first, next] = words;
  if (!first || !next || LEXICON.subjects.has(first.form) || LEXICON.subjects.has(next.form)) return false;
  // "Alex Kim leads it": a name first is the subject of a statement.
  if (first.tags.has('ProperNoun') || first.tags.has('Person')) return false;
  // "including the bugs …": a word ending in -ing is no command.
  if (first.form.endsWith('ing') && !(isVerb(first) && isBase(first))) return false;
  if (NO_COMMAND.some((t) => first.tags.has(t))) return false;
  return next.tags.has('Determiner') || next.tags.has('Possessive') || (names && next.tags.has('ProperNoun') && next.capitalised);
}

/** Suffixes of a noun made from a verb, and what the verb ends in instead ("termin-ation" → "termin-ate", "revo-cation" → "revo-ke"). */
const NOMINAL: readonly (readonly [string, readonly string[]])[] = [
  ['cation', ['cate', 'ke']],
  ['ation', ['ate', '', 'e']],
  ['sion', ['d', 'se', 'de']],
  ['ion', ['e', '']],
  ['ment', ['', 'e']],
  ['al', ['', 'e']],
  ['ure', ['e']],
];

/**
 * The verbs a noun may be made from: itself ("transfer", "rollback"), or by its suffix ("payment" →
 * "pay", "deletion" → "delete"). By hand: the English library conjugates verbs but makes no verb of a noun.
 */
function verbsOf(noun: string): string[] {
  const out = [noun];
  for (const [suffix, endings] of NOMINAL) {
    if (!noun.endsWith(suffix) || noun.length < suffix.length + 3) continue;
    const stem = noun.slice(0, -suffix.length);
    for (const e of endings) out.push(stem + e, ...(/(.)\1$/.test(stem) && e === '' ? [stem.slice(0, -1)] : []));
  }
  return out;
}

/**
 * "Termination of Bob", "immediate rollback of release 5.1": an act the floor knows, named by its noun
 * with its object after "of"; "refunds for everyone who complained", "a payment for Dana": after "for",
 * the people it is done for.
 */
export function nominalAct(words: readonly Word[]): Request | undefined {
  for (let i = 0; i < Math.min(words.length - 1, 3); i++) {
    const w = words[i] as Word;
    const forWhom = words[i + 1]?.form === 'for' && forPeople(words.slice(i + 2));
    if (words[i + 1]?.form !== 'of' && !forWhom) {
      if (w.tags.has('Adjective') || w.tags.has('Determiner')) continue;
      return undefined;
    }
    // "refunds for …": a plural, by its singular.
    for (const form of new Set([...verbsOf(w.form), ...(forWhom ? verbsOf(w.lemma) : [])])) {
      const verb: Word = { form, lemma: form, tags: new Set(['Verb', 'Infinitive']), after: ' ', capitalised: false };
      const act = LEXICON.actVerbs.allAt([verb, ...words.slice(i + 2)], 0);
      if (act && act.end === 1)
        return { head: { kind: 'act', classes: act.values, decision: false }, object: words.slice(i + 2), decision: false };
    }
    return undefined;
  }
  return undefined;
}

/** "everyone who complained", "Dana", "all affected customers"; not "the users table" (a noun goes on after the person's). */
function forPeople(words: readonly Word[]): boolean {
  const i = words.findIndex((w) => !w.tags.has('Determiner') && !w.tags.has('Value') && !w.tags.has('Adjective') && w.form !== 'all');
  const w = words[i];
  if (!w) return false;
  if (['everyone', 'everybody', 'anyone'].includes(w.form) || (w.tags.has('FirstName') && w.capitalised)) return true;
  return LEXICON.objectKinds.at(words, i)?.value === 'person' && !words[i + 1]?.tags.has('Noun');
}
