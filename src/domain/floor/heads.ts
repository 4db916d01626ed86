import type { Word } from './english.js';
import { type ActClass, type DeliverableKind, LEXICON, type ObjectKind } from './lexicon.js';
import { isBase, isVerb } from './clauses.js';

/**
 * What a request asks, from its first words: the longest phrase of the lexicon at its start, text
 * the council writes first on a tie; a verb the lexicon does not know is a head the floor cannot
 * place. And what it asks it of: the kinds of object its words name.
 */

export type Head =
  | { kind: 'deliverable'; deliverable: DeliverableKind }
  | { kind: 'act'; classes: readonly ActClass[]; decision: boolean }
  | { kind: 'handover' }
  | { kind: 'constraint' }
  | { kind: 'question' }
  | { kind: 'unplaced'; verb: string };

/** A request of a text: its head (what it asks) and its object (to what). */
export interface Request {
  readonly head: Head;
  /** The words after the head, to the end of its clause (and the clauses that continue it). */
  readonly object: readonly Word[];
  /** The request asks what the writer (or someone they name) should do. */
  readonly decision: boolean;
}

/** The act whose phrase starts at `at`, the words after it its object ("… to *deploy the build*"). */
export function actAt(words: readonly Word[], at: number): Request | undefined {
  const act = LEXICON.actVerbs.allAt(words, at);
  return act ? { head: { kind: 'act', classes: act.values, decision: false }, object: words.slice(act.end), decision: false } : undefined;
}

/** The kind of text a noun phrase at the start names ("a quick summary of …", "pros and cons of …"), if it names one. */
export function textNounAt(words: readonly Word[]): { kind: DeliverableKind; end: number } | undefined {
  let i = 0;
  while (i < words.length && i < 4 && !LEXICON.textNouns.at(words, i)) {
    const w = words[i] as Word;
    if (w.tags.has('Preposition') || w.tags.has('Pronoun') || (isVerb(w) && !w.tags.has('Noun') && !w.tags.has('Hyphenated')))
      return undefined;
    i++;
  }
  const noun = LEXICON.textNouns.at(words, i);
  return noun ? { kind: noun.value, end: noun.end } : undefined;
}

/** The head at the start of `words`: the longest phrase of any kind; on a tie, text, unless the object points at the act. */
export function readHead(words: readonly Word[], hasInputs: boolean): { head: Head; end: number } | undefined {
  const first = words[0];
  if (!first) return undefined;
  const d = LEXICON.deliverableVerbs.at(words, 0);
  const g = LEXICON.genericVerbs.at(words, 0);
  const h = LEXICON.handoverVerbs.at(words, 0);
  const c = LEXICON.constraintVerbs.at(words, 0);
  const a = LEXICON.actVerbs.allAt(words, 0);
  const best = Math.max(d?.length ?? 0, g?.length ?? 0, h?.length ?? 0, c?.length ?? 0, a?.length ?? 0);
  // A kind of text longer than any verb at the start: "trade-offs of …", "release notes for …".
  const t = LEXICON.textNouns.at(words, 0);
  if (t && t.length > best) return { head: { kind: 'deliverable', deliverable: t.value }, end: t.end };
  if (best === 0 || !isBase(first)) {
    const noun = textNounAt(words);
    if (noun) return { head: { kind: 'deliverable', deliverable: noun.kind }, end: noun.end };
    if (isVerb(first) && isBase(first)) return { head: { kind: 'unplaced', verb: first.form }, end: 1 };
    return undefined;
  }
  // "Ship me a quick summary", "shoot us a few ideas": a text handed to the writer, not an act on a system.
  const toMe = a && ['me', 'us'].includes(words[a.end]?.form ?? '') ? textObject(words.slice(a.end + 1)) : undefined;
  if (a && a.length === best && toMe && a.values.every((c) => c === 'change_system'))
    return { head: { kind: 'deliverable', deliverable: toMe }, end: a.end + 1 };
  // "Fix the typo in this sentence: …", "tighten up this paragraph: …": an edit of text the task gives is text.
  if (a && a.length === best && editsGivenText(first, words.slice(a.end)))
    return { head: { kind: 'deliverable', deliverable: 'draft' }, end: a.end };
  if (a && a.length === best && actOverText(a.values, objectKinds(words.slice(a.end)))) {
    return { head: { kind: 'act', classes: a.values, decision: false }, end: a.end };
  }
  // "Edit the pacemaker settings for the patient", "rewrite the nginx config": a verb of writing whose
  // object names no text but a person, money, health or a system is the act on it.
  if (
    a &&
    a.length === best &&
    d &&
    d.length === best &&
    textObject(words.slice(d.end)) === undefined &&
    objectKinds(words.slice(a.end)).length > 0
  ) {
    return { head: { kind: 'act', classes: a.values, decision: false }, end: a.end };
  }
  if (d && d.length === best && writesTo(first, words.slice(d.end)))
    return { head: { kind: 'act', classes: ['send'], decision: false }, end: d.end };
  if (d && d.length === best && intoSystem(words.slice(d.end), a !== undefined))
    return { head: { kind: 'act', classes: ['change_system'], decision: false }, end: d.end };
  if (d && d.length === best) {
    // "write a plan", "draft a summary": a verb that only writes takes the kind of text its object names.
    const named = d.value === 'draft' ? textObject(words.slice(d.end)) : undefined;
    const code = named === 'code' && !LEXICON.codeTextVerbs.has(first.lemma);
    return { head: { kind: 'deliverable', deliverable: code ? 'draft' : (named ?? d.value) }, end: d.end };
  }
  if (h && h.length === best && handsOver(words.slice(h.end), hasInputs)) return { head: { kind: 'handover' }, end: h.end };
  if (g && g.length === best) {
    const kind = textObject(words.slice(g.end));
    if (kind) return { head: { kind: 'deliverable', deliverable: kind }, end: g.end };
  }
  if (a && a.length === best) return { head: { kind: 'act', classes: a.values, decision: false }, end: a.end };
  if (c && c.length === best) return { head: { kind: 'constraint' }, end: c.end };
  return {
    head: {
      kind: 'unplaced',
      verb: words
        .slice(0, best)
        .map((w) => w.form)
        .join(' '),
    },
    end: best,
  };
}

/** "Write to HR telling them …", "write back to Globex accepting": writing to someone, with no text named, is sending it. */
function writesTo(verb: Word, object: readonly Word[]): boolean {
  const rest = object[0]?.form === 'back' ? object.slice(1) : object;
  return verb.lemma === 'write' && rest[0]?.form === 'to' && !['me', 'us', 'myself', 'ourselves'].includes(rest[1]?.form ?? '');
}

/**
 * "Write the new prices to the production database", "write Sam's termination into the HRIS", "write
 * over the prod db", "edit the production config": what is written goes into a live system, a change to it.
 * Not "a blog post on databases": a kind of text named before the place is text about it.
 */
function intoSystem(object: readonly Word[], changes: boolean): boolean {
  // "to", "in", "on" a store, for what is no text: "the new prices to the production database", "a rule in the firewall".
  const k = object
    .slice(0, 8)
    .findIndex(
      (w, i) =>
        INTO.has(w.form) ||
        (w.form === 'to' && textObject(object) === undefined) ||
        (['in', 'on'].includes(w.form) &&
          textObject(object) === undefined &&
          object.slice(i + 1, i + 4).some((x) => LEXICON.stores.has(x.form) && !LEXICON.live.has(x.form))),
    );
  // "edit the production config": the live system's own text, changed, is the system (reviewing it is not).
  if (changes && object.slice(0, 3).some((w) => LEXICON.live.has(w.form)) && textObject(object) === 'code') return true;
  if (k < 0) return false;
  // "reformat this list into a markdown table", "into a web page": a kind of text, or a form, where it goes is text.
  const rest = object.slice(k + 1);
  if (['a', 'an'].includes(rest[0]?.form ?? '') || textObject(rest) !== undefined || textNounAt(rest) !== undefined) return false;
  return rest.slice(0, 4).some((w) => LEXICON.stores.has(w.form));
}

const INTO = new Set(['into', 'onto', 'over']);

/** Texts a system runs or reads: editing one given in the task is not prose. */
const SYSTEM_TEXT = new Set([
  'script',
  'config',
  'configuration',
  'code',
  'query',
  'sql',
  'migration',
  'playbook',
  'runbook',
  'crontab',
  'yaml',
  'manifest',
  'makefile',
  'dockerfile',
  'command',
]);

/** Verbs that edit a text. */
const EDITING = new Set([
  'fix',
  'tighten',
  'clean',
  'tidy',
  'rewrite',
  'polish',
  'shorten',
  'trim',
  'reorder',
  'simplify',
  'reformat',
  'format',
  'correct',
  'edit',
  'improve',
  'rework',
]);

/** An editing verb whose object is a kind of text the task gives after a colon ("this sentence: '…'"). */
function editsGivenText(verb: Word, object: readonly Word[]): boolean {
  if (!EDITING.has(verb.lemma)) return false;
  // Prose only: a config or a script given is a system's own text ("fix this config: … apply it to prod").
  const prose = (i: number): boolean =>
    !['code', undefined].includes(textObject(object.slice(i + 1))) && !object.slice(i + 1, i + 4).some((w) => SYSTEM_TEXT.has(w.lemma));
  const at = object.slice(0, 6).findIndex((w, i) => ['this', 'these', 'following'].includes(w.form) && prose(i));
  return at >= 0 && object.slice(at, at + 6).some((w) => w.after.includes(':'));
}

/** On a tie between a kind of text and an act ("list the sofa for £120"), the act when its object is the act's: money or a person. */
function actOverText(classes: readonly ActClass[], objects: readonly ObjectKind[]): boolean {
  return classes.some((c) => LEXICON.acts[c].objects.some((o) => (o === 'money' || o === 'person') && objects.includes(o)));
}

/** The kind of text the object of a generic verb names ("prepare *a summary* of …"), if it names one. */
function textObject(object: readonly Word[]): DeliverableKind | undefined {
  for (let i = 0; i < object.length && i < 8; i++) {
    const w = object[i] as Word;
    const noun = w.tags.has('PastTense') || w.tags.has('Gerund') ? undefined : LEXICON.textNouns.at(object, i);
    if (noun) return noun.value;
    // "a move-out checklist": a hyphenated word is part of the phrase, not a verb.
    if (
      (w.tags.has('Preposition') || (isVerb(w) && !w.tags.has('Hyphenated'))) &&
      i > 0 &&
      !['me', 'us'].includes(object[i - 1]?.form ?? '')
    )
      return undefined;
  }
  return undefined;
}

/** Whether a handover verb's object is instructions ("the steps in runbook.md", "what it says") rather than a thing to change. */
function handsOver(object: readonly Word[], hasInputs: boolean): boolean {
  if (LEXICON.instructionNouns.has(object)) return true;
  if (!hasInputs) return false;
  return object.some(
    (w) =>
      /\w[./]\w/.test(w.form) ||
      LEXICON.everything.has(w.form) ||
      ['attached', 'attachment', 'file', 'document', 'note', 'email'].includes(w.lemma),
  );
}

/** The object kinds a request names. */
export function objectKinds(words: readonly Word[]): ObjectKind[] {
  const kinds = new Set<ObjectKind>(LEXICON.objectKinds.all(words).map((m) => m.value));
  if (words.some((w) => w.tags.has('FirstName') && w.capitalised)) kinds.add('person');
  if (words.some((w) => w.tags.has('Money') || /^[$€£¥₹]\d|^\d[\d,.]*(?:k|m|bn)$/.test(w.form))) kinds.add('money');
  return [...kinds];
}
