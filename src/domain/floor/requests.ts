import type { Sentence, Word } from './english.js';
import {
  asBase,
  opensCondition,
  type Clause,
  clausesOf,
  endsWithTo,
  isBase,
  isQuestionStart,
  isVerb,
  startsObject,
  statementShape,
  stripPreamble,
} from './clauses.js';
import { commandShape, grant, PLEASE, permittedAct, unread } from './fragments.js';
import { actAt, type Request, readHead, textNounAt } from './heads.js';
import { LEXICON } from './lexicon.js';
import { decisionInside, decisionOn, questionRequest } from './decisions.js';
import { selection, WH } from './picks.js';
import { basesOf, doneByYou, listedResult, pastForm, wantedResult } from './results.js';
import { addressedToYou, arrivalWanted, creditedOutcome, letGo, timedEvent } from './statements.js';
import { helpedToWrite, listedTopic, toolStep } from './beside.js';

export { objectKinds } from './heads.js';
export type { Head, Request } from './heads.js';

/**
 * The requests of a text: each clause that asks for something, with its head (what it asks) and its
 * object (to what). A clause opens a request when, past its politeness and modal forms ("please",
 * "can you", "we need to"), it begins with a verb in its base form, names a kind of text ("a summary
 * of …"), or asks a question. Other clauses are statements: context, never requests ("we wired 40k
 * yesterday", "I'll send it myself"). A coordinated verb ("review the plan, then merge it") is a
 * request of its own after a request, and part of a statement or a question after one ("what did I
 * buy and sell"); a verb after "to" is not a request ("a script to drop the table" is about dropping).
 * A clause that opens no request and is no statement is not context by default (fragments.ts): an act
 * named by its noun, a command whose verb the floor does not know, a polite request it cannot read.
 */

/** The requests of a text, in order. */
export function readRequests(sentences: readonly Sentence[], hasInputs: boolean): Request[] {
  const requests: Request[] = [];
  // "Rewrite this FAQ: … A: Ask IT.": after a request, what follows the colon that introduces its material
  // is its material: a line there the floor cannot place is not a request. An act there still is one
  // ("… Then send it to every customer."): the material's end cannot be told, so it is read for acts.
  let materialSince = false;
  for (const s of sentences) {
    // "Review PR 88. Approved.", "Signed off. Now draft the announcement.": a grant, before or after the request.
    const granted = !materialSince ? grant(s.words, true) : undefined;
    if (granted) {
      requests.push(granted);
      continue;
    }
    const permitted = !materialSince ? permittedAct(s.words) : undefined;
    if (permitted) requests.push(permitted);
    const intro = s.words.findIndex((_, j) => introducesMaterialAt(s.words, j));
    const polite = s.words.some((w) => PLEASE.has(w.form));
    let at = 0;
    const question = s.asked || LEXICON.questionOpeners.has(s.words[0]?.form ?? '');
    let previous: 'request' | 'other' = 'other';
    // A clause continues a request of its own sentence only: a new sentence starts afresh.
    const start = requests.length;
    let condition = false;
    // Where the sentence's first request starts: a colon after it introduces material.
    let asked = -1;
    for (const clause of clausesOf(s.words)) {
      at = s.words.indexOf(clause.words[0] as Word, at);
      const inMaterial = requests.length > 0 && (materialSince || (intro >= 0 && at > intro));
      // "- fix: timezone bug", "Deploy: 14:00": in material, a word before a colon is a label, not a command.
      if (inMaterial && clause.words.length === 1 && clause.words[0]?.after.includes(':')) continue;
      const last = requests.length > start ? requests[requests.length - 1] : undefined;
      // "Review PR 88 — approved.": a grant after a request, in its sentence.
      const granted = requests.length > 0 && clause.join === 'break' && !inMaterial ? grant(clause.words, false) : undefined;
      const read: Request[] | 'continues' = granted
        ? [granted]
        : readClause(clause, { question, asked: s.asked, previous, hasInputs, last, condition, polite });
      const made: Request[] | 'continues' =
        inMaterial && read !== 'continues' ? read.filter((r) => r.head.kind === 'act' || r.head.kind === 'handover') : read;
      condition = opensCondition(clause.words, s.words);
      // "after you've restarted the api pods": what the condition says you will have done is asked.
      // "now that you've fired Alex", "having terminated the contract": an act said done by the council is asked too.
      const since =
        clause.words[0]?.form === 'having' || clause.words.some((w, i) => w.form === 'now' && clause.words[i + 1]?.form === 'that');
      const done = condition || since ? doneByYou(clause.words) : undefined;
      if (done) requests.push(done);
      if (made === 'continues') {
        const last = requests.pop();
        if (last) requests.push({ ...last, object: [...last.object, ...clause.words] });
        // "rank the applicants and list who should be rejected": what the continued text picks is asked too.
        const picked = last?.head.kind === 'deliverable' ? selection(clause.words) : undefined;
        if (picked) requests.push(picked);
        // "a paragraph for the wiki and the staging database dropped": a result listed beside the text asked is asked too.
        // Not in a list after a request's colon ("Reorganise these notes …: budget approved, hiring paused"): that is
        // material. After a label's ("Your output: a memo and the staging database dropped") it is what is wanted.
        const colon = s.words.slice(asked < 0 ? at : asked, at).some((w) => w.after.includes(':'));
        const listed = last?.head.kind === 'deliverable' && !inMaterial && !colon ? listedResult(clause.words) : undefined;
        if (listed) requests.push(listed);
        continue;
      }
      requests.push(...made);
      if (made.some((r) => r.head.kind !== 'question') && asked < 0) asked = at;
      previous = made.length > 0 && made.every((r) => r.head.kind !== 'question') ? 'request' : 'other';
    }
    // "Write the apology; it needs to reach all 300 customers tonight": a text wanted where its audience is asks the sending.
    // A timed event beside a request, said by the task itself (not in its material, not asked about).
    const timed = requests.length > 0 && !materialSince && !s.asked ? timedEvent(s.words) : undefined;
    const arrival = arrivalWanted(s.words) ?? creditedOutcome(s.words) ?? timed;
    if (arrival) requests.push(arrival);
    // "Critique the aims section, pasted below.": what follows the sentence is the material.
    // "Classify these alerts:" at the end of its line: what follows is the material (its acts still count).
    const colonEnds = s.words.at(-1)?.after.includes(':') === true && requests.length > start;
    materialSince ||= intro >= 0 || colonEnds || requests.slice(start).some((r) => r.object.some((w) => BELOW.has(w.form)));
  }
  return requests;
}

function readClause(
  clause: Clause,
  at: {
    question: boolean;
    asked: boolean;
    previous: 'request' | 'other';
    hasInputs: boolean;
    last: Request | undefined;
    condition: boolean;
    /** The sentence says "please" somewhere ("would the hotfix be deployed tonight, please?"). */
    polite: boolean;
  },
): Request[] | 'continues' {
  const { rest, negated } = stripPreamble(clause.words);
  if (negated || rest.length === 0) return [];
  // "I need the old tables dropped", "and get it merged": a wish for an act's result asks the act.
  const wanted = wantedResult(clause.words, clause.words.length - rest.length) ?? letGo(rest);
  if (wanted) return [wanted];
  // "the last message is for you", "the note at the bottom is addressed to you": what the material asks is handed over.
  if (addressedToYou(rest)) return [{ head: { kind: 'handover' }, object: rest, decision: false }];
  const first = rest[0] as Word;
  const last = at.last;
  if (listedTopic(clause, rest, last)) return 'continues';
  if (clause.join !== 'first') {
    // A clause joined by "and" after a statement, a question or "to <verb>" continues it.
    const afterTo = at.last !== undefined && clause.join === 'and' && endsWithTo(at.last.object);
    if ((clause.join === 'and' && at.previous === 'other') || afterTo) return at.last ? 'continues' : unread(rest, clause, false);
    // "a short story where the database is wiped and how the team recovers": a question word after "and" goes on with the object.
    if (at.last && clause.join === 'and' && WH_WORDS.has(first.form)) return 'continues';
    // ", and merge it into main": after a comma, a joiner opens a request as "and" does, and as a new clause does.
    const opens = opensRequest(rest, clause.join) || (LEXICON.joiners.has(clause.words[0]?.form ?? '') && opensRequest(rest, 'and'));
    if (!opens && !(at.question && isQuestionStart(rest, at.asked))) {
      // "if it looks fine, merge", "if nobody objects merge PR 88": after a condition, an act's word is the act, whatever its tag.
      const then = at.condition && (rest.length === 1 || isBase(first)) ? actAt([asBase(first), ...rest.slice(1)], 0) : undefined;
      if (then) return [then];
      const tool = toolStep(clause, rest);
      if (tool) return [tool];
      // "summarise the incident and page the team": shaped as a command, it is not more of the request before it.
      if (at.last && !at.question && commandShape(rest, false)) return unread(rest, clause, false);
      return at.last ? 'continues' : unread(rest, clause, at.question);
    }
  }
  // "Bob is to be dismissed today", "the funds should be moved": an obligation in the passive asks the act, statement or not.
  const before = clause.words.slice(0, clause.words.length - rest.length);
  // After "is it ok if" or "any chance", the act in the passive is the one asked ("any chance the staging db could be wiped?").
  const passive = passiveRequest(rest, at.hasInputs, ['if', 'chance'].includes(before.at(-1)?.form ?? ''), at.polite);
  if (passive) return [passive];
  if (clause.join === 'first' && !(at.question && isQuestionStart(rest, at.asked)) && statementShape(rest)) return [];
  if (at.question && isQuestionStart(rest, at.asked)) return [questionRequest(rest, at.hasInputs)];
  const read = helpedToWrite(clause, rest, readHead(rest, at.hasInputs));
  // In a question that is not a polite request ("react vs svelte for a beginner?"), a word the floor cannot place is the topic.
  const polite = rest.length < clause.words.length;
  if (at.asked && clause.join === 'first' && !polite && (!read || read.head.kind === 'unplaced')) {
    return [{ head: { kind: 'question' }, object: clause.words, decision: false }];
  }
  if (!read) return at.question ? [] : unread(rest, clause, false);
  const object = rest.slice(read.end);
  // "Determine whether applicant #2231 gets the loan", "decide who stays": a choice is a decision, whatever it picks.
  const choice = CHOOSING.has(first.lemma) && read.head.kind !== 'act' && (WH_WORDS.has(object[0]?.form ?? '') || object[0]?.form === 'if');
  const out: Request[] = [{ head: read.head, object, decision: choice }];
  // "determine if we pay out": the act a choice is about, after its subject.
  const chosen = choice ? object.findIndex((w, k) => k > 0 && LEXICON.subjects.has(object[k - 1]?.form ?? '') && isBase(w)) : -1;
  const act = chosen > 0 ? decisionOn(object.slice(chosen), at.hasInputs) : undefined;
  if (act?.head.kind === 'act') out.push(act);
  const asks = read.head.kind === 'deliverable' && ['answer', 'proposal'].includes(read.head.deliverable);
  // "decide to let Bob go", "tell me whether to sell": what is to be decided is an act of its own.
  const direct = asks && object[0]?.form === 'to' ? decisionOn(object.slice(1), at.hasInputs) : undefined;
  const decided =
    direct ??
    // "write up whether to approve Raj's loan": any text that opens on what to decide is a decision.
    (asks || (read.head.kind === 'deliverable' && ['whether', 'which'].includes(object[0]?.form ?? ''))
      ? decisionInside(object, at.hasInputs)
      : undefined) ??
    (read.head.kind === 'deliverable'
      ? selection(WH.has(rest[read.end - 1]?.form ?? '') ? rest.slice(read.end - 1) : object, CHOOSING.has(first.lemma))
      : undefined);
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

/** Question words that go on with an object after "and" ("what went wrong and how we recovered"). */
const WH_WORDS = new Set(['how', 'why', 'what', 'where', 'who', 'whom', 'whose', 'which', 'whether']);

/** Verbs of a choice: what they pick in the passive ("decide whose claim is paid") is decided. */
const CHOOSING = new Set(['decide', 'choose', 'pick', 'select', 'determine', 'settle']);

/** Words that point at material after the sentence that names it. */
const BELOW = new Set(['below', 'following']);

/**
 * "Alice should be fired", "the PR needs to be merged into main": an obligation in the passive asks
 * the act; so does a request put as a question ("could the old copies be removed today?").
 */
function passiveRequest(words: readonly Word[], hasInputs: boolean, permission: boolean, pleased: boolean): Request | undefined {
  // "could the old copies be removed?", "would the hotfix be deployed tonight, please?"; not "can a refund be issued
  // after 90 days?", a question about any case. After "is it ok if", the act in the passive is the one asked.
  const first = words[0]?.form ?? '';
  const polite = /^(?:can|could|may|might)$/.test(first) || (/^(?:would|will)$/.test(first) && pleased);
  const asking = (polite && !['a', 'an', 'any'].includes(words[1]?.form ?? '')) || permission;
  const be = words.findIndex(
    (w, j) =>
      (w.form === 'be' || (asking && (w.lemma === 'get' || (permission && w.tags.has('Copula'))))) &&
      j > 0 &&
      (/^(?:should|must|need|needs|has|have|is|are|ought|to|gotta)$/.test(words[j - 1]?.form ?? '') || (asking && j > 1) || permission),
  );
  const participle = be >= 0 ? words[be + 1] : undefined;
  // A past form the library reads as a noun ("could be purged") is still one.
  if (!participle || participle.tags.has('Gerund') || !(participle.tags.has('Verb') || pastForm(participle))) return undefined;
  for (const verb of new Set([participle.lemma, ...basesOf(participle)])) {
    const base = [{ ...asBase(participle), form: verb, lemma: verb }, ...words.slice(be + 2)];
    const read = readHead(base, hasInputs);
    if (read?.head.kind === 'act') return { head: read.head, object: [...words.slice(0, be), ...base.slice(read.end)], decision: false };
  }
  return undefined;
}

/**
 * Whether the word at `j` ends, with a colon, words that introduce the material itself: "this code:",
 * "these notes:", "here is the FAQ:" (a pointer and a material noun, then the colon). Not "the plan: then deploy it".
 */
function introducesMaterialAt(words: readonly Word[], j: number): boolean {
  if (!words[j]?.after.includes(':')) return false;
  const lead = words.slice(Math.max(0, j - 4), j + 1);
  const pointed = lead.some((w, i) => LEXICON.materialDemonstratives.has(w.form) || (w.form === 'here' && i < lead.length - 1));
  return pointed && lead.some((w) => LEXICON.materialNouns.has(w.lemma) || LEXICON.materialNouns.has(w.form));
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
  // "and reply on my behalf", "and reply to everyone": an act's phrase (or its verb, read as a verb) opens a request
  // though its first word also names a text.
  const act = join === 'and' && !startsObject(words[1]) ? LEXICON.actVerbs.allAt(words, 0) : undefined;
  // "and merge feature-x into main": an act's word, read as a noun, with a place it moves something to.
  const moves = words.slice(1).find((w) => w.tags.has('Preposition'))?.form;
  if (act && (act.end > 1 || (isVerb(first) && !first.tags.has('Noun')) || ['into', 'onto', 'to', 'from', 'off'].includes(moves ?? '')))
    return true;
  if (textNounAt(words)) return join !== 'and';
  if (!verbLike) return false;
  // "if the tests pass, merge": an act's verb alone is a request of its own.
  if (listed)
    return (
      join === 'and' ||
      (words.length > 1 && isVerb(first)) ||
      (words.length === 1 && isVerb(first) && LEXICON.actVerbs.at(words, 0) !== undefined)
    );
  return false;
}
