import type { Sentence, Word } from './english.js';
import { type ActClass, type DeliverableKind, LEXICON, type ObjectKind } from './lexicon.js';

/**
 * The requests of a text: each clause that asks for something, with its head (what it asks) and its
 * object (to what). A clause opens a request when, past its politeness and modal forms ("please",
 * "can you", "we need to"), it begins with a verb in its base form, names a kind of text ("a summary
 * of …"), or asks a question. Other clauses are statements: context, never requests ("we wired 40k
 * yesterday", "I'll send it myself"). A coordinated verb ("review the plan, then merge it") is a
 * request of its own after a request, and part of a statement or a question after one ("what did I
 * buy and sell"); a verb after "to" is not a request ("a script to drop the table" is about dropping).
 */

export type Head =
  | { kind: 'deliverable'; deliverable: DeliverableKind }
  | { kind: 'act'; classes: readonly ActClass[]; decision: boolean }
  | { kind: 'handover' }
  | { kind: 'constraint' }
  | { kind: 'question' }
  | { kind: 'unplaced'; verb: string };

export interface Request {
  readonly head: Head;
  /** The words after the head, to the end of its clause (and the clauses that continue it). */
  readonly object: readonly Word[];
  /** The request asks what the writer (or someone they name) should do. */
  readonly decision: boolean;
}

const HARD = /[;:()—–]|\s-\s/;
const SOFT = /,/;
const JOINERS = new Set(['and', 'or', 'plus', 'nor']);
const OPENERS = new Set([
  'then',
  'also',
  'afterwards',
  'afterward',
  'next',
  'finally',
  'once',
  'after',
  'before',
  'if',
  'when',
  'unless',
  'so',
  'but',
]);
const AUX_QUESTION = new Set([
  'is',
  'are',
  'was',
  'were',
  'am',
  'do',
  'does',
  'did',
  'can',
  'could',
  'should',
  'shall',
  'would',
  'will',
  'may',
  'might',
  'must',
  'has',
  'have',
  'had',
]);

const isVerb = (w: Word | undefined): boolean =>
  w?.tags.has('Verb') === true && !w.tags.has('Gerund') && !w.tags.has('PastTense') && !w.tags.has('Auxiliary') && !w.tags.has('Copula');
const isBase = (w: Word): boolean => w.form === w.lemma || w.tags.has('Infinitive') || w.tags.has('Imperative');
const startsObject = (w: Word | undefined): boolean =>
  w !== undefined &&
  (w.tags.has('Determiner') || w.tags.has('Pronoun') || w.tags.has('Possessive') || w.tags.has('ProperNoun') || w.tags.has('Value'));

interface Clause {
  readonly words: Word[];
  /** How it is joined to the clause before it: first, by "and"/"or", or by punctuation or "then". */
  readonly join: 'first' | 'and' | 'break';
}

/** Splits a sentence into clauses at punctuation and coordinating words (which are dropped). */
function clausesOf(words: readonly Word[]): Clause[] {
  const out: { words: Word[]; join: Clause['join'] }[] = [{ words: [], join: 'first' }];
  for (const w of words) {
    const current = out[out.length - 1] as Clause;
    if ((JOINERS.has(w.form) || OPENERS.has(w.form)) && current.words.length > 0) {
      out.push({ words: [], join: JOINERS.has(w.form) ? 'and' : 'break' });
      continue;
    }
    if (OPENERS.has(w.form) && current.words.length === 0 && current.join === 'and') (current as { join: Clause['join'] }).join = 'break';
    current.words.push(w);
    if (HARD.test(w.after) || SOFT.test(w.after)) out.push({ words: [], join: 'break' });
  }
  return out.filter((c) => c.words.length > 0);
}

/** Politeness, urgency and modal forms before a head, taken off one after another. */
function stripPreamble(words: readonly Word[]): { rest: Word[]; negated: boolean } {
  let rest = [...words];
  let negated = false;
  for (;;) {
    const neg = LEXICON.negations.at(rest, 0);
    if (neg && neg.end < rest.length) {
      negated = true;
      rest = rest.slice(neg.end);
      continue;
    }
    const pre = LEXICON.preamble.at(rest, 0);
    if (!pre || pre.end >= rest.length) break;
    rest = rest.slice(pre.end);
  }
  // "help me write …", "need help saying it": the verb after "help" is the request.
  if (rest[0]?.form === 'help' && (isVerb(rest[1]) || rest[1]?.tags.has('Gerund'))) rest = [asBase(rest[1] as Word), ...rest.slice(2)];
  return { rest, negated };
}

const asBase = (w: Word): Word => ({ ...w, form: w.lemma, tags: new Set([...w.tags, 'Infinitive']) });

/** The kind of text a noun phrase at the start names ("a quick summary of …", "pros and cons of …"), if it names one. */
function textNounAt(words: readonly Word[]): { kind: DeliverableKind; end: number } | undefined {
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
  if (a && a.length === best && actOverText(a.values, objectKinds(words.slice(a.end)))) {
    return { head: { kind: 'act', classes: a.values, decision: false }, end: a.end };
  }
  if (d && d.length === best) {
    const code = d.value === 'draft' && LEXICON.codeTextVerbs.has(first.lemma) && textObject(words.slice(d.end)) === 'code';
    return { head: { kind: 'deliverable', deliverable: code ? 'code' : d.value }, end: d.end };
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
    if ((w.tags.has('Preposition') || isVerb(w)) && i > 0 && !['me', 'us'].includes(object[i - 1]?.form ?? '')) return undefined;
  }
  return undefined;
}

const EVERYTHING = new Set(['everything', 'whatever', 'what', 'all', 'each', 'every']);

/** Whether a handover verb's object is instructions ("the steps in runbook.md", "what it says") rather than a thing to change. */
function handsOver(object: readonly Word[], hasInputs: boolean): boolean {
  if (LEXICON.instructionNouns.has(object)) return true;
  if (!hasInputs) return false;
  return object.some(
    (w) =>
      /\w[./]\w/.test(w.form) ||
      EVERYTHING.has(w.form) ||
      ['attached', 'attachment', 'file', 'document', 'note', 'email'].includes(w.lemma),
  );
}

/** The requests of a text, in order. */
export function readRequests(sentences: readonly Sentence[], hasInputs: boolean): Request[] {
  const requests: Request[] = [];
  for (const s of sentences) {
    const question = s.asked || LEXICON.questionOpeners.has(s.words[0]?.form ?? '');
    let previous: 'request' | 'other' = 'other';
    for (const clause of clausesOf(s.words)) {
      const made = readClause(clause, { question, asked: s.asked, previous, hasInputs, last: requests[requests.length - 1] });
      if (made === 'continues') {
        const last = requests.pop();
        if (last) requests.push({ ...last, object: [...last.object, ...clause.words] });
        continue;
      }
      requests.push(...made);
      previous = made.length > 0 && made.every((r) => r.head.kind !== 'question') ? 'request' : 'other';
    }
  }
  return requests;
}

function readClause(
  clause: Clause,
  at: { question: boolean; asked: boolean; previous: 'request' | 'other'; hasInputs: boolean; last: Request | undefined },
): Request[] | 'continues' {
  const { rest, negated } = stripPreamble(clause.words);
  if (negated || rest.length === 0) return [];
  const first = rest[0] as Word;
  if (clause.join !== 'first') {
    // A clause joined by "and" after a statement, a question or "to <verb>" continues it.
    const afterTo = at.last !== undefined && clause.join === 'and' && endsWithTo(at.last.object);
    if ((clause.join === 'and' && at.previous === 'other') || afterTo) return at.last ? 'continues' : [];
    if (!opensRequest(rest, clause.join) && !(at.question && isQuestionStart(rest, at.asked))) return at.last ? 'continues' : [];
  }
  if (clause.join === 'first' && !(at.question && isQuestionStart(rest, at.asked)) && statementShape(rest)) return [];
  const passive = passiveRequest(rest, at.hasInputs);
  if (passive) return [passive];
  if (at.question && isQuestionStart(rest, at.asked)) return [questionRequest(rest, at.hasInputs)];
  const read = readHead(rest, at.hasInputs);
  // In a question that is not a polite request ("react vs svelte for a beginner?"), a word the floor cannot place is the topic.
  const polite = rest.length < clause.words.length;
  if (at.asked && clause.join === 'first' && !polite && (!read || read.head.kind === 'unplaced')) {
    return [{ head: { kind: 'question' }, object: clause.words, decision: false }];
  }
  if (!read) return [];
  const object = rest.slice(read.end);
  const out: Request[] = [{ head: read.head, object, decision: false }];
  const asks = read.head.kind === 'deliverable' && ['answer', 'proposal'].includes(read.head.deliverable);
  // "decide to let Bob go", "tell me whether to sell": what is to be decided is an act of its own.
  const direct = asks && object[0]?.form === 'to' ? decisionOn(object.slice(1), at.hasInputs) : undefined;
  const decided = direct ?? (asks ? decisionInside(object, at.hasInputs) : undefined);
  if (decided) out.push(decided);
  // "use the console to wipe the database": the purpose is a request too.
  const to = read.head.kind === 'constraint' ? object.findIndex((w, j) => w.form === 'to' && isVerb(object[j + 1])) : -1;
  if (to >= 0) {
    const purpose = readHead(object.slice(to + 1), at.hasInputs);
    if (purpose) out.push({ head: purpose.head, object: object.slice(to + 1 + purpose.end), decision: false });
  }
  void first;
  return out;
}

const FINITE = new Set([
  'is',
  'are',
  'was',
  'were',
  'has',
  'have',
  'had',
  'looks',
  'look',
  'seems',
  'seem',
  'fails',
  'keeps',
  'does',
  "doesn't",
  "don't",
  "isn't",
  "aren't",
  "won't",
  "can't",
]);
const RELATIVE = new Set(['that', 'which', 'who', 'whom', 'whose', 'where', 'when', 'if', 'because', 'so', 'and', 'or', 'but', 'to']);

/** "Deploy pipeline is red", "Transfer speeds are slow": a noun phrase and its verb, not a request ("Drop users table which is old" is one). */
function statementShape(words: readonly Word[]): boolean {
  const next = words[1];
  if (!next?.tags.has('Noun') || startsObject(next)) return false;
  for (const w of words.slice(2, 8)) {
    if (RELATIVE.has(w.form) || w.tags.has('Determiner') || w.tags.has('Preposition')) return false;
    if (FINITE.has(w.form) || w.tags.has('Copula')) return true;
  }
  return false;
}

const endsWithTo = (words: readonly Word[]): boolean => words.length >= 2 && words[words.length - 2]?.form === 'to';

const SUBJECTS = new Set(['i', 'we', 'you', 'they', 'he', 'she', 'it', 'there', 'this', 'that']);

function isQuestionStart(words: readonly Word[], asked: boolean): boolean {
  const first = words[0]?.form ?? '';
  if (!LEXICON.questionOpeners.has(first)) return false;
  if (!AUX_QUESTION.has(first)) return true;
  // "Is the plan sound?", "Do we need it"; not "Do what the email asks", "Do everything on the list".
  const next = words[1];
  if (!next || LEXICON.questionOpeners.has(next.form) || EVERYTHING.has(next.form)) return false;
  return SUBJECTS.has(next.form) || (asked && (next.tags.has('Noun') || next.tags.has('Determiner') || next.tags.has('Adjective')));
}

/** Whether a clause that follows another opens a request of its own. */
function opensRequest(words: readonly Word[], join: Clause['join']): boolean {
  const first = words[0] as Word;
  const verbLike = isBase(first) && !first.tags.has('Gerund') && !first.tags.has('PastTense');
  const listed =
    LEXICON.deliverableVerbs.at(words, 0) ??
    LEXICON.actVerbs.at(words, 0) ??
    LEXICON.genericVerbs.at(words, 0) ??
    LEXICON.handoverVerbs.at(words, 0);
  if (verbLike && (isVerb(first) || listed) && startsObject(words[1])) return true;
  // After "and", a noun continues a phrase ("pros and cons", "the risks and the gaps"); only a verb opens a request.
  if (textNounAt(words)) return join !== 'and';
  if (!verbLike) return false;
  if (listed) return join === 'and' || (words.length > 1 && isVerb(first));
  return false;
}

/** "Alice should be fired", "the PR needs to be merged into main": an obligation in the passive asks the act. */
function passiveRequest(words: readonly Word[], hasInputs: boolean): Request | undefined {
  const be = words.findIndex(
    (w, j) => w.form === 'be' && j > 0 && /^(?:should|must|need|needs|has|have|is|are|ought|to|gotta)$/.test(words[j - 1]?.form ?? ''),
  );
  const participle = be >= 0 ? words[be + 1] : undefined;
  if (!participle?.tags.has('Verb') || participle.form === participle.lemma) return undefined;
  const base = [asBase(participle), ...words.slice(be + 2)];
  const read = readHead(base, hasInputs);
  if (read?.head.kind !== 'act') return undefined;
  return { head: read.head, object: [...words.slice(0, be), ...base.slice(read.end)], decision: false };
}

/**
 * A question (a polite request, "could you merge it?", was taken off as preamble before this). It
 * asks for an answer, or for a decision ("should I sell my shares?", "is it safe to …", "what dose
 * should my son take?"), whose act the floor reads like a request's.
 */
function questionRequest(words: readonly Word[], hasInputs: boolean): Request {
  const phrase = LEXICON.decisionPhrases.at(words, 0);
  if (phrase) return decisionOn(words.slice(phrase.end), hasInputs) ?? { head: { kind: 'question' }, object: words, decision: true };
  const modal = words.findIndex((w, j) => LEXICON.decisionModals.has(w.form) && LEXICON.decisionSubjects.has(words[j + 1]?.form ?? ''));
  if (modal >= 0) {
    // Past the subject ("we", "my dad", "our game day"), the verb is what would be decided.
    let v = modal + 2;
    if (!SUBJECTS.has(words[modal + 1]?.form ?? '')) {
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
  return decisionInside(words, hasInputs) ?? { head: { kind: 'question' }, object: words, decision: false };
}

/** "tell me whether to plead guilty", "what to put it in": a decision inside a request. */
function decisionInside(words: readonly Word[], hasInputs: boolean): Request | undefined {
  const at = words.findIndex((w, j) => {
    if (!['whether', 'what', 'which', 'how', 'who', 'whom'].includes(w.form)) return false;
    // "whether to sell", "which fund to pick", "how much to give"; not "what tends to go wrong".
    const to = words.slice(j + 1, j + 4).findIndex((x) => x.form === 'to');
    return to >= 0 && words.slice(j + 1, j + 1 + to).every((x) => !isVerb(x)) && isVerb(words[j + 2 + to]);
  });
  if (at < 0) return undefined;
  const to = words.findIndex((w, j) => j > at && w.form === 'to');
  return decisionOn(words.slice(to + 1), hasInputs);
}

function decisionOn(words: readonly Word[], hasInputs: boolean): Request | undefined {
  const read = readHead(words, hasInputs);
  if (!read) return undefined;
  const head: Head = read.head.kind === 'act' ? { ...read.head, decision: true } : read.head;
  return { head, object: words.slice(read.end), decision: true };
}

/** The object kinds a request names. */
export function objectKinds(words: readonly Word[]): ObjectKind[] {
  const kinds = new Set<ObjectKind>(LEXICON.objectKinds.all(words).map((m) => m.value));
  if (words.some((w) => w.tags.has('FirstName') && w.capitalised)) kinds.add('person');
  if (words.some((w) => w.tags.has('Money') || /^[$€£¥₹]\d|^\d[\d,.]*(?:k|m|bn)$/.test(w.form))) kinds.add('money');
  return [...kinds];
}
