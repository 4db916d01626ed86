/**
 * English, read by a library (compromise): sentences, words in lower case with their lemma ("fired"
 * → "fire", "customers" → "customer") and part-of-speech tags, contractions expanded ("don't" → "do",
 * "not"). Parsing English is not our domain; what the floor makes of the words is (`perceive.ts`).
 * Lines are read one at a time, list markers ("1.", "-", "[ ]") taken off, so a runbook's steps are
 * sentences of their own. Pure and deterministic; the library is loaded once, on first use.
 */

export interface Word {
  /** Lower case, punctuation off; a contraction's expanded part ("not"). */
  readonly form: string;
  /** The dictionary form when the library knows one ("fired" → "fire"), else `form`. */
  readonly lemma: string;
  readonly tags: ReadonlySet<string>;
  /** Punctuation after the word (",", "; ", "? "). */
  readonly after: string;
  /** Written with a capital and then small letters ("Alice", not "IRA" or "alice"): a name's shape. */
  readonly capitalised: boolean;
}

export interface Sentence {
  readonly words: readonly Word[];
  /** Ends with a question mark. */
  readonly asked: boolean;
}

export type EnglishReader = (text: string) => Sentence[];

interface Term {
  text: string;
  normal?: string;
  implicit?: string | null;
  root?: string | null;
  tags?: string[];
  post?: string;
}
type Nlp = (text: string) => {
  compute(what: string): void;
  json(): { terms: Term[] }[];
  verbs(): { toInfinitive(): { text(): string } };
};

let loading: Promise<EnglishReader> | undefined;

/** The reader, loaded once per process (the library's dictionaries take a few hundred ms to load). */
export function loadEnglish(): Promise<EnglishReader> {
  loading ??= import('compromise').then((m) => readerOf(m.default as unknown as Nlp));
  return loading;
}

/**
 * "Venmo'd", "OK'd", "DM'd": a verb made of a name, in the past with an apostrophe, which the library
 * would read as "Venmo had". Not after a pronoun ("I'd", "they'd", "who'd"), where it is "had" or "would".
 */
const PAST_D =
  /\b(?!(?:i|you|he|she|we|they|it|who|that|there|what|where|how|why|this|which|someone|everyone)['’]d\b)([A-Za-z][A-Za-z0-9]+)['’]d\b/gi;

const LIST_MARKER = /^\s*(?:[-*•>+]+|\d{1,3}[.)]|[a-z][.)]|\[[ xX]\]|#{1,6})\s+/;

function readerOf(nlp: Nlp): EnglishReader {
  return (text) => {
    const sentences: Sentence[] = [];
    for (const raw of text.split(/\r?\n/)) {
      const line = raw.replace(LIST_MARKER, '').replace(/`/g, ' ').replace(PAST_D, '$1ed').trim();
      if (line.length === 0) continue;
      const doc = nlp(line);
      doc.compute('root');
      for (const s of doc.json()) {
        const words = s.terms.flatMap((t) => wordOf(t, nlp));
        if (words.length === 0) continue;
        const last = s.terms[s.terms.length - 1];
        sentences.push({ words, asked: /\?/.test(last?.post ?? '') || /\?\s*$/.test(last?.text ?? '') });
      }
    }
    return sentences;
  };
}

function wordOf(t: Term, nlp: Nlp): Word[] {
  const form = (t.implicit || t.normal || t.text || '').toLowerCase().replace(/^[^\p{L}\p{N}$€£¥-]+|[^\p{L}\p{N}%]+$/gu, '');
  if (form.length === 0) return [];
  // An irregular participle the root step leaves as it is ("taken", "chosen"), or one read as an adjective
  // ("is approved"): the library conjugates it back.
  const participle =
    !t.root && (t.tags?.includes('PastTense') || (t.tags?.includes('Adjective') && /ed$/.test(form))) && /^\p{L}+$/u.test(form);
  const lemma = ((participle && nlp(form).verbs().toInfinitive().text()) || t.root || form).toLowerCase();
  return [{ form, lemma, tags: new Set(t.tags ?? []), after: t.post ?? '', capitalised: /^\p{Lu}\p{Ll}/u.test(t.text ?? '') }];
}
