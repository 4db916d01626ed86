import data from './lexicon.json' with { type: 'json' };
import type { Word } from './english.js';

/**
 * The floor's words (`lexicon.json`), compiled into phrases matched on a sentence's words. A phrase
 * is a list of words; `~` stands for one to four words (an object inside a phrasal verb: "let ~ go").
 * A word matches a phrase's word by its form or its lemma.
 */

export type Phrase = readonly string[];

/** Phrases with a value each, indexed by their first word. */
export class PhraseSet<T = true> {
  readonly #byFirst = new Map<string, { phrase: Phrase; value: T }[]>();

  constructor(entries: readonly (readonly [string, T])[]) {
    for (const [text, value] of entries) {
      const p = text
        .toLowerCase()
        .split(/[\s-]+/)
        .filter(Boolean);
      const first = p[0];
      if (first === undefined || first === '~') continue;
      const list = this.#byFirst.get(first) ?? [];
      list.push({ phrase: p, value });
      this.#byFirst.set(first, list);
    }
  }

  static of(list: readonly string[]): PhraseSet {
    return new PhraseSet(list.map((s) => [s, true] as const));
  }

  /** The longest phrase that matches at `at`: its value and the index after its last word. */
  at(words: readonly Word[], at: number): { value: T; end: number; length: number } | undefined {
    const w = words[at];
    if (!w) return undefined;
    let best: { value: T; end: number; length: number } | undefined;
    for (const key of w.form === w.lemma ? [w.form] : [w.form, w.lemma]) {
      for (const { phrase, value } of this.#byFirst.get(key) ?? []) {
        const end = matchAt(words, at, phrase);
        if (end >= 0 && (!best || phrase.length > best.length)) best = { value, end, length: phrase.length };
      }
    }
    return best;
  }

  /** The values of every phrase of the longest length that matches at `at` ("remove" names several acts). */
  allAt(words: readonly Word[], at: number): { values: T[]; end: number; length: number } | undefined {
    const w = words[at];
    if (!w) return undefined;
    let best: { values: T[]; end: number; length: number } | undefined;
    for (const key of w.form === w.lemma ? [w.form] : [w.form, w.lemma]) {
      for (const { phrase, value } of this.#byFirst.get(key) ?? []) {
        const end = matchAt(words, at, phrase);
        if (end < 0) continue;
        if (!best || phrase.length > best.length) best = { values: [value], end, length: phrase.length };
        else if (phrase.length === best.length && !best.values.includes(value)) best.values.push(value);
      }
    }
    return best;
  }

  /** Every match in `words`, left to right, each starting where the last one ended. */
  all(words: readonly Word[]): { value: T; start: number; end: number }[] {
    const found: { value: T; start: number; end: number }[] = [];
    for (let i = 0; i < words.length; i++) {
      const m = this.at(words, i);
      if (m) {
        found.push({ value: m.value, start: i, end: m.end });
        i = m.end - 1;
      }
    }
    return found;
  }

  has(words: readonly Word[]): boolean {
    return words.some((_, i) => this.at(words, i) !== undefined);
  }
}

export const DELIVERABLE_KINDS = [
  'review',
  'summary',
  'plan',
  'outline',
  'draft',
  'comparison',
  'explanation',
  'answer',
  'list',
  'checklist',
  'analysis',
  'proposal',
  'test_ideas',
  'code',
] as const;
export type DeliverableKind = (typeof DELIVERABLE_KINDS)[number];

export const DOMAINS = ['health', 'money', 'law', 'employment', 'production', 'access', 'public'] as const;
export type Domain = (typeof DOMAINS)[number];
export const HIGH_STAKES_DOMAINS = data.high_stakes_domains as readonly Domain[];

export const ACT_CLASSES = [
  'dismiss_person',
  'hire_person',
  'move_money',
  'trade',
  'change_system',
  'delete_data',
  'change_access',
  'send',
  'publish',
  'legal_instrument',
  'health_decision',
  'execute_instructions',
] as const;
export type ActClass = (typeof ACT_CLASSES)[number];

export const OBJECT_KINDS = ['person', 'money', 'system', 'legal_instrument', 'health'] as const;
export type ObjectKind = (typeof OBJECT_KINDS)[number];

export interface ActEntry {
  readonly label: string;
  readonly domain: Domain;
  /** The gate that pauses on it: ethics for high-stakes acts, acc for acts on systems and others. */
  readonly gate: 'ethics' | 'acc';
  readonly irreversible: boolean;
  readonly verbs: readonly string[];
  /** The objects that mark this class when a verb may name several ("remove Priya from admin" → access). */
  readonly objects: readonly ObjectKind[];
}

const set = (list: readonly string[]): PhraseSet => PhraseSet.of(list);

/** Verbs of pressing a button. */
const BUTTONS = ['hit', 'press', 'click', 'tap', 'smash'];
const keyed = <K extends string>(map: Record<string, K>): PhraseSet<K> => new PhraseSet(Object.entries(map));
const word = (s: string): string => s.toLowerCase().split(/\s+/).filter(Boolean).join(' ');

export const LEXICON = {
  deliverableVerbs: keyed(data.deliverable_verbs as Record<string, DeliverableKind>),
  genericVerbs: set(data.generic_verbs),
  textNouns: keyed(data.text_nouns as Record<string, DeliverableKind>),
  codeTextVerbs: new Set(data.code_text_verbs),
  preamble: set(data.preamble),
  negations: set(data.negations),
  questionOpeners: new Set(data.question_openers),
  decisionModals: new Set(data.decision_modals),
  decisionPhrases: set(data.decision_phrases),
  decisionSubjects: new Set(data.decision_subjects),
  handoverVerbs: set(data.handover_verbs),
  instructionNouns: set(data.instruction_nouns),
  constraintVerbs: set(data.constraint_verbs),
  /** Every act verb, with the classes it may name (the object decides between them). */
  actVerbs: new PhraseSet(
    Object.entries(data.acts).flatMap(([k, v]) =>
      // "hit send", "click publish", "press merge": a button named by an act's verb is the act.
      v.verbs.flatMap((verb) =>
        [verb, ...(/^[a-z]+$/.test(verb) ? BUTTONS.map((b) => `${b} ${verb}`) : [])].map((p) => [p, k as ActClass] as const),
      ),
    ),
  ),
  acts: data.acts as unknown as Record<ActClass, ActEntry>,
  objectKinds: new PhraseSet(Object.entries(data.object_kinds).flatMap(([k, v]) => v.map((w) => [w, k as ObjectKind] as const))),
  domains: new PhraseSet(Object.entries(data.domains).flatMap(([k, v]) => v.map((w) => [w, k as Domain] as const))),
  relations: new Set(data.case_markers.relations),
  firstPerson: new Set(data.case_markers.first_person),
  personalObjects: set(data.case_markers.personal_objects),
  healthCase: set(data.case_markers.health),
  emergency: set(data.case_markers.emergency),
  /** Words that say it is happening now: an emergency then is a case. */
  now: new Set(data.case_markers.now),
  /** Words of a proceeding: the writer's own is their legal case whatever text they ask for. */
  proceedings: new Set(data.case_markers.proceedings),
  /** What is done to the writer in one: "I got served", "I was sued". */
  againstMe: new Set(data.case_markers.against_me),
  /** Nouns of a permission given ("my approval to …"), and words of being permitted, said of "you". */
  permits: new Set(data.clause.permits),
  cleared: new Set(data.clause.cleared),
  /** Nouns of a time before "to" and an act: "the best time to post" picks no object. */
  times: new Set(data.clause.times),
  /** Live systems: the words that make a text the system's own ("the production config"), and stores text is written into. */
  live: new Set(data.stores.live),
  stores: new Set([...data.stores.live, ...data.stores.names]),
  /** Results named by a word the library may not read as an act's participle ("paid", "gone"), with the verb. */
  resultStates: data.result_states as Readonly<Record<string, string>>,
  scaleQuantifiers: new Set(data.scale.quantifiers),
  scaleAlone: set(data.scale.alone),
  urgency: set(data.urgency),
  irreversibility: set(data.irreversibility),
  pronouns: new Set(data.pronouns),
  vagueNouns: new Set(data.vague_nouns),
  materialMarkers: new Set(data.material.markers),
  materialPositions: new Set(data.material.positions),
  materialDemonstratives: new Set(data.material.demonstratives),
  materialNouns: new Set(data.material.nouns),
  emptyWords: new Set(data.empty_words),
  bareRequests: new Set(data.bare_requests.map(word)),
  boundary: set(data.boundary),
  joiners: new Set(data.clause.joiners),
  openers: new Set(data.clause.openers),
  /** Words after which "if" and "when" open a question, not a condition: "tell me if …", "let us know when …". */
  embedsQuestion: new Set(data.clause.embeds_question),
  /** Words that finish a phrasal verb: "signs off", "checks out", "comes back". */
  particles: new Set(data.clause.particles),
  questionAuxiliaries: new Set(data.clause.question_auxiliaries),
  finite: new Set(data.clause.finite),
  relative: new Set(data.clause.relative),
  subjects: new Set(data.clause.subjects),
  everything: new Set(data.clause.everything),
  decisionWords: new Set(data.clause.decision_words),
  /** Words that make the council's text what is done ("the dean will expel him if you say so", "a final decision HR can act on directly"). */
  binding: set(data.clause.binding),
  /** Words that make an outcome the council's: "your doing", "thanks to you", "publishing is on you", "pre-approved". */
  credited: set(data.clause.credited),
} as const;

const same = (w: Word | undefined, part: string): boolean => w !== undefined && (w.form === part || w.lemma === part);

/**
 * Where `p` matches `words` starting at `at`: the index after its last word, or -1. A `~` takes
 * one to four words, as few as let the rest match.
 */
export function matchAt(words: readonly Word[], at: number, p: Phrase): number {
  const go = (i: number, k: number): number => {
    // "give the files to Bob", not "give me ways to approach it": the "to" closing an object's phrase is no infinitive's.
    if (k === p.length) return p[k - 1] === 'to' && p.includes('~') && infinitive(words[i]) ? -1 : i;
    if (p[k] === '~') {
      // The gap is the act's object, a noun phrase: it never crosses a preposition, "to" or a verb, but for
      // a word a phrase opened by a determiner goes on with ("the summer *intern*", "the three *attached* quotes").
      const phrase = words[i]?.tags.has('Determiner') === true || words[i]?.tags.has('Possessive') === true;
      for (let gap = 1; gap <= 4 && i + gap <= words.length; gap++) {
        const w = words[i + gap - 1] as Word;
        const verb = w.tags.has('Verb') && !w.tags.has('Noun') && !(phrase && gap > 1);
        if (w.form === 'to' || w.tags.has('Preposition') || w.tags.has('Conjunction') || verb) break;
        const end = go(i + gap, k + 1);
        if (end >= 0) return end;
      }
      return -1;
    }
    return same(words[i], p[k] as string) ? go(i + 1, k + 1) : -1;
  };
  return go(at, 0);
}

const infinitive = (w: Word | undefined): boolean =>
  w?.tags.has('Verb') === true && (w.tags.has('Infinitive') || w.form === w.lemma) && !w.tags.has('Noun') && !w.tags.has('Gerund');
