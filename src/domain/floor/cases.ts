import type { EnglishReader, Word } from './english.js';
import { type DeliverableKind, type Domain, HIGH_STAKES_DOMAINS, LEXICON, PhraseSet } from './lexicon.js';

/**
 * The context a task's words give (seed 000's second layer), beside what it asks: whether it is about
 * a particular case in a high-stakes domain (a person's health, money, job or legal position) rather
 * than a topic, and whether it reaches many. Words are data (`lexicon.json`, "case_markers", "scale").
 */

/** Words with which a text says what to do. */
export const ADVICE_WORDS = PhraseSet.of([
  'options',
  'what to do',
  'next steps',
  'what i should',
  'what we should',
  'what to tell',
  'how to handle',
  // A text that carries a decision or a measure: "a reply with our decision on her request", "the ruling", "how many mg".
  'whether',
  'decision',
  'decide',
  'deciding',
  'ruling',
  'verdict',
  'eligibility',
  'how much',
  'how many',
  'what do i do',
  'what should i do',
]);

/** Kinds of text that advise: about a particular case in a high-stakes domain, a person decides. */
export const ADVICE: ReadonlySet<DeliverableKind> = new Set([
  'answer',
  'proposal',
  'comparison',
  'analysis',
  'review',
  'plan',
  'explanation',
]);

/**
 * High-stakes domains in which the task is about a particular case, not a topic: it asks what
 * someone should do, names a person or a relation ("my son", "the candidate"), speaks of the
 * writer's own affairs ("my mortgage", "for me"), or of a sum of money.
 */
export function particularCases(words: readonly Word[], domains: ReadonlySet<Domain>, advice: boolean | 'decision'): Domain[] {
  const stakes = HIGH_STAKES_DOMAINS.filter((d) => domains.has(d));
  const signals = caseSignals(words);
  const { named, relation, own, ownProceeding, emergencyNow, patient } = signals;
  // Any text: a named person's health is theirs ("a letter to Tom Baker's employer explaining his diagnosis").
  if (advice === false) return textCases(signals, domains, named);
  if (stakes.length === 0) return ownProceeding ? ['law'] : [];
  if (advice === 'decision') return stakes;
  // Health is judged closer: any person (even "a child"), the writer, or a dose makes it a case.
  const health =
    patient ||
    emergencyNow ||
    words.some((w, i) => ['i', 'me', 'my', 'myself'].includes(w.form) || LEXICON.relations.has(w.lemma) || isDose(words, i)) ||
    LEXICON.healthCase.has(words);
  return [
    ...new Set([
      ...stakes.filter((d) => named || relation || own || (d === 'health' && health)),
      ...(ownProceeding ? ['law' as const] : []),
    ]),
  ];
}

/**
 * Whose case the material a task works on is (an input, a pasted block): read as data, it is a case
 * only where it is one person's health or legal matter, not where it merely names people. A clinical
 * record (a dose, a bed, "72M"), an emergency now, the writer's own health or proceeding, a relation's
 * health, or a named person's health in a record about them ("Patient: John Smith", "Employee: …");
 * an article quoting "Dr. Jane Lee" on diabetes, or notes naming who is on sick leave, are not.
 */
function dataCases(words: readonly Word[], domains: ReadonlySet<Domain>): Domain[] {
  const signals = caseSignals(words);
  return textCases(signals, domains, signals.named && words.some((w) => LEXICON.relations.has(w.lemma) && w.after.trim().startsWith(':')));
}

/**
 * Whose case a text is, whatever it asks: health for an emergency happening now, a clinical document for
 * one patient, the writer's own health, a relation's, or `person`'s (the caller says who counts); law
 * for the writer's own proceeding.
 */
function textCases(s: ReturnType<typeof caseSignals>, domains: ReadonlySet<Domain>, person: boolean): Domain[] {
  const found: Domain[] = [];
  if (domains.has('health') && (s.emergencyNow || s.patient || s.own || s.relation || person)) found.push('health');
  if (s.ownProceeding) found.push('law');
  return found;
}

/** What in a text makes it someone's case: a person named, a relation, the writer, a patient, an emergency now. */
function caseSignals(words: readonly Word[]) {
  // A person by name ("Aisha", "Mr. Greene", "the Nguyens") or by number ("employee 4471", "applicant #221").
  const named = words.some(
    (w, i) =>
      (w.tags.has('FirstName') && w.capitalised) ||
      (HONORIFICS.has(w.form) && words[i + 1]?.capitalised === true) ||
      // "Greg Hall" (which the library may take for a place), when the text speaks of "his" or "her".
      (i > 0 && w.capitalised && words[i + 1]?.capitalised === true && words.some((x) => ['his', 'her', 'him'].includes(x.form))) ||
      (words[i - 1]?.form === 'the' && w.capitalised && /s$/.test(w.form) && ['family', 'household'].includes(words[i + 1]?.form ?? '')) ||
      (LEXICON.objectKinds.at(words, i)?.value === 'person' && /^#?\d+$/.test(words[i + 1]?.form ?? '')),
  );
  const relation = words.some(
    (w, i) => LEXICON.relations.has(w.lemma) && /^(?:my|our|his|her|their|the|this|that|your)$|'s$/.test(words[i - 1]?.form ?? ''),
  );
  // An emergency happening to someone now is their case whatever the text is: a note for the doctor, a list for the paramedics.
  const someone = named || relation || words.some((w) => ['i', 'me', 'myself', 'my'].includes(w.form));
  // So is a clinical document for one patient: a dose, a bed, an age and sex, a blood pressure ("72M, BP 85/50").
  const patient = words.some(
    (w, i) =>
      isDose(words, i) || (w.form === 'bed' && /^\d/.test(words[i + 1]?.form ?? '')) || /^\d{1,3}[mf]$|^\d{2,3}\/\d{2,3}$/.test(w.form),
  );
  // The writer's own affairs: "my mortgage", "for me", or what happens to them ("I was fired", "I'm being evicted").
  const own =
    words.some(
      (w, i) => LEXICON.firstPerson.has(w.form) && [1, 2, 3].some((k) => LEXICON.personalObjects.at(words, i + k) !== undefined),
    ) ||
    words.some((_, i) => stakesAt(words, i) && ['me', 'us'].includes(words[i + 1]?.form ?? '')) ||
    words.some((w, i) => ['i', 'we'].includes(w.form) && happensTo(words, i + 1)) ||
    words.some((w, i) => w.form === 'for' && ['me', 'us', 'myself'].includes(words[i + 1]?.form ?? ''));
  // A proceeding against the writer: "my immigration hearing", "my response to the IRS audit", "the eviction I got served with".
  const ownProceeding = words.some(
    (w, i) =>
      (w.form === 'my' && words.slice(i + 1, i + 6).some((x) => LEXICON.proceedings.has(x.form))) ||
      (w.form === 'i' && words.slice(i + 1, i + 4).some((x) => LEXICON.againstMe.has(x.form))),
  );
  // An emergency said to be now ("Quick – someone collapsed by the lifts") is a case even with nobody named.
  const emergencyNow = (someone || words.some((w) => LEXICON.now.has(w.form))) && LEXICON.emergency.has(words);
  return { named, relation, own, ownProceeding, emergencyNow, patient };
}

const HONORIFICS = new Set(['mr', 'mrs', 'ms', 'miss', 'mx', 'dr', 'prof']);

const DOSE_UNITS = new Set([
  'mg',
  'mcg',
  'µg',
  'ml',
  'units',
  'unit',
  'iu',
  'tablets',
  'tablet',
  'pills',
  'pill',
  'capsules',
  'drops',
  'puffs',
  'g',
  'kg',
]);

/** A quantity of a medicine: "10 units", "5mg", "two tablets". */
function isDose(words: readonly Word[], i: number): boolean {
  const w = words[i] as Word;
  if (/^\d+(?:[.,]\d+)?(?:mg|mcg|ml|iu|g)$/.test(w.form)) return true;
  return (w.tags.has('Value') || /^\d/.test(w.form)) && DOSE_UNITS.has(words[i + 1]?.form ?? '');
}

/** It reaches many: "everyone", "all customers", "every account". */
export function atScale(words: readonly Word[]): boolean {
  if (LEXICON.scaleAlone.has(words)) return true;
  return words.some(
    (w, i) =>
      LEXICON.scaleQuantifiers.has(w.form) &&
      words.slice(i + 1, i + 4).some((n) => n.tags.has('Plural') || LEXICON.objectKinds.at(words, words.indexOf(n))?.value === 'person'),
  );
}

/** "(I) was fired", "(I)'m being evicted", "(we) got laid off": the writer is what a high-stakes event is done to. */
function happensTo(words: readonly Word[], i: number): boolean {
  const be = words
    .slice(i, i + 3)
    .findIndex((w) => ['be', 'get', 'got', 'been'].includes(w.lemma) || w.tags.has('Copula') || w.tags.has('Passive'));
  return be >= 0 && [1, 2].some((k) => stakesAt(words, i + be + k));
}

/** Whether a word of a high-stakes domain stands at `i`. */
function stakesAt(words: readonly Word[], i: number): boolean {
  const d = LEXICON.domains.at(words, i)?.value;
  return d !== undefined && (HIGH_STAKES_DOMAINS as readonly string[]).includes(d);
}

/**
 * How much of a file given as data the floor reads for whose case it is: a record names its person at
 * its head. (The English reader takes about 50 ms for this much; a whole file could take 300.)
 */
const DATA_CASE_CHARS = 4_000;

/**
 * Material the task works on is data, but whose case it is counts: a pasted or attached patient record
 * ("Summarise docs/discharge.md") is one person's health, whatever the task asks of it. `material` is
 * what was read already (handed-over inputs, fenced blocks); the inputs given to read (`inputs`) are read here.
 */
export function materialCases(read: EnglishReader, inputs: readonly { content?: string }[], material: readonly Word[]): Domain[] {
  const reference = inputs.flatMap((i) => read((i.content ?? '').slice(0, DATA_CASE_CHARS)).flatMap((s) => s.words));
  const words = [...material, ...reference];
  return dataCases(words, new Set(LEXICON.domains.all(words).map((m) => m.value)));
}
