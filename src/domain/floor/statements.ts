import type { Sentence, Word } from './english.js';
import { clausesOf, isBase, isVerb } from './clauses.js';
import { actAt, type Request } from './heads.js';
import { type ActClass, DOMAINS, type Domain, HIGH_STAKES_DOMAINS, LEXICON } from './lexicon.js';
import { actDone, basesOf, named, resultActs } from './results.js';

/**
 * Statements that ask: no request's words, yet an act is wanted or handed over. A text said to arrive
 * where people are, a thing said it may go, an outcome said to be the council's, material said to be
 * for the council, a work item's result that is the world rather than the text.
 */

/**
 * A text wanted where its audience is: "it needs to reach all 300 customers tonight", "draft it so that
 * it hits the newswire", "I need the marketing list to hear about it by Monday"; or said to be theirs at
 * a time: "Users get it at 6pm", "every LP has it in their inbox by 8am", "then it goes out on the wire".
 * Its arrival asks the sending, whoever is to do it. Not what happened or happens ("the newsletter
 * reached 3,000 readers", "we need to reach 300 customers this quarter": no text arrives).
 */
export function arrivalWanted(words: readonly Word[]): Request | undefined {
  const send = (k: number): Request => ({
    head: { kind: 'act', classes: ['send'], decision: false },
    object: words.slice(k + 1),
    decision: false,
  });
  for (let k = 1; k < words.length; k++) {
    const w = words[k] as Word;
    const lead = words.slice(Math.max(0, k - 6), k);
    if (lead.some((x) => LEXICON.negations.at([x], 0))) continue;
    const wanted = lead.some((x) => WANTS.has(x.form) || WANTS.has(x.lemma));
    // Who is to hear it comes before "hear"; where a text arrives comes after "reach", "hit", "delivered to".
    const text = lead.some(textish);
    const after = words.slice(k + 1, k + 7);
    const heard = lead.some((_, i) => isAudience(lead, i));
    if (HEARING.has(w.lemma) && wanted && heard) return send(k);
    if (ARRIVING.has(w.lemma) && wanted && text && after.some((_, i) => isAudience(after, i))) return send(k);
    // "Users get it at 6pm", "the investors should get it too": people who have the text, when or as they should.
    const timed = words.slice(k + 1).some((x) => x.tags.has('Date') || soon(x) || x.form === 'inbox');
    if (RECEIVING.has(w.lemma) && !w.tags.has('PastTense') && heard && after.slice(0, 2).some(textish) && (wanted || timed)) return send(k);
    // "it goes straight out", "then it goes out on the wire at 9am"; not "proofread it before it goes out".
    const conditioned = lead.some((x) => ['before', 'until', 'till', 'after', 'once', 'when', 'if', 'unless'].includes(x.form));
    if (w.lemma === 'go' && !conditioned && textish(words[k - 1] as Word) && after.slice(0, 2).some((x) => x.form === 'out'))
      return send(k);
  }
  return undefined;
}

const textish = (x: Word): boolean => ['it', 'this', 'them'].includes(x.form) || LEXICON.textNouns.at([x], 0) !== undefined;

/** Verbs of a text arriving where people are; of people hearing of it, or having it. */
const ARRIVING = new Set(['reach', 'hit', 'land', 'arrive', 'deliver', 'go']);
const HEARING = new Set(['hear', 'receive', 'learn']);
const RECEIVING = new Set(['get', 'have', 'receive', 'read', 'see']);
/** Words that make an arrival wanted: a wish, an obligation, a purpose, a causing verb. */
const WANTS = new Set(['need', 'want', 'should', 'must', 'have', 'has', 'so', 'ensure', 'sure', 'gotta', 'get', 'make']);

/** People a text may be sent to, or a public place: "all 300 customers", "the marketing list", "the newswire". */
export function isAudience(words: readonly Word[], i: number): boolean {
  const w = words[i] as Word;
  if (['everyone', 'everybody', 'list', 'inbox', 'inboxes'].includes(w.form)) return true;
  // "every subscriber", "each affected customer": one person for all of them.
  const each = words.slice(Math.max(0, i - 2), i).some((x) => ['every', 'each', 'all'].includes(x.form));
  if (each && LEXICON.objectKinds.at(words, i)?.value === 'person') return true;
  return (w.tags.has('Plural') && LEXICON.objectKinds.at(words, i)?.value === 'person') || LEXICON.domains.at(words, i)?.value === 'public';
}

/**
 * "the old prod replicas can go", "those two contractors should go": what may go is to be gone, the
 * act that removes it. Only at the clause's end (an adverb or a time may follow): "the deploy can go
 * ahead", "can go to production" say something else.
 */
export function letGo(words: readonly Word[]): Request | undefined {
  const k = words.findIndex(
    (w, i) =>
      i > 0 &&
      ['can', 'could', 'should', 'must', 'may'].includes(w.form) &&
      words[i + 1]?.lemma === 'go' &&
      words.slice(i + 2).every((x) => x.tags.has('Date') || ['now', 'too', 'away', 'today', 'tonight', 'already'].includes(x.form)),
  );
  if (k < 1 || !words.slice(0, k).some(named)) return undefined;
  const gone: Word = { ...(words[k + 1] as Word), form: 'gone', lemma: 'go', tags: new Set(['Verb', 'PastTense']) };
  return actDone([...words.slice(0, k), gone], 0, k, LEXICON.resultStates.gone ?? 'remove');
}

/** A part of the material said to be for the council: "the last message is for you", "its final line is meant for you". */
export function addressedToYou(words: readonly Word[]): boolean {
  const be = words.findIndex((w) => ['is', 'are', 'was', 'were'].includes(w.form));
  if (be < 1 || !words.slice(0, be).some((w) => LEXICON.materialNouns.has(w.lemma) || MESSAGES.has(w.lemma))) return false;
  const rest = words
    .slice(be + 1)
    .filter((w) => !['meant', 'intended', 'addressed', 'directed', 'written', 'really', 'actually'].includes(w.form));
  // Not "this note is for you: thanks for …", where what follows the colon is the note itself.
  return ['for', 'to'].includes(rest[0]?.form ?? '') && rest[1]?.form === 'you' && rest.length <= 3 && !rest[1].after.includes(':');
}

/** Parts of a text that may speak to someone. */
const MESSAGES = new Set([
  'message',
  'email',
  'note',
  'comment',
  'line',
  'part',
  'bit',
  'section',
  'paragraph',
  'request',
  'reply',
  'post',
  'instruction',
]);

/**
 * An outcome said to be the council's: "Their balance drops by $1,200 tonight, your doing", "His Okta
 * account is dead by EOD thanks to you", "publishing is on you", "the DB is yours for the next hour",
 * "the sender's requests are pre-approved". Whatever its words, the sentence hands an act over: the act
 * its verbs name, else the one its domain's results come from, else one the floor cannot place.
 */
export function creditedOutcome(words: readonly Word[]): Request | undefined {
  if (!LEXICON.credited.has(words)) return undefined;
  for (const [i, w] of words.entries()) {
    if (LEXICON.deliverableVerbs.at(words, i)) continue;
    for (const base of new Set([w.lemma, ...basesOf(w)])) {
      const act = actAt([{ ...w, form: base, lemma: base, tags: new Set(['Verb', 'Infinitive']) }, ...words.slice(i + 1)], 0);
      if (act) return act;
    }
  }
  return stateAct(words) ?? { head: { kind: 'unplaced', verb: 'an outcome handed to the council' }, object: words, decision: false };
}

/** The act each domain's states come from, when the words name no act: a balance changed is money moved. */
const DOMAIN_ACT: Readonly<Record<Domain, ActClass>> = {
  money: 'move_money',
  employment: 'dismiss_person',
  access: 'change_access',
  production: 'change_system',
  public: 'publish',
  health: 'health_decision',
  law: 'legal_instrument',
};

/** The act whose result the words' domain is, the high-stakes domains first. */
function stateAct(words: readonly Word[]): Request | undefined {
  const found = new Set<Domain>(LEXICON.domains.all(words).map((m) => m.value));
  if (words.some((w) => w.tags.has('Money'))) found.add('money');
  if (words.some((w) => LEXICON.stores.has(w.form))) found.add('production');
  if (words.some((_, i) => isAudience(words, i))) found.add('public');
  // "status.example.com shows …": a public address.
  if (words.some((w) => /^[a-z0-9-]+(?:\.[a-z0-9-]+)*\.(?:com|org|net|io|dev|app|co)(?:\/|$)/.test(w.form))) found.add('public');
  const domain = [...HIGH_STAKES_DOMAINS, ...DOMAINS].find((d) => found.has(d));
  return domain ? { head: { kind: 'act', classes: [DOMAIN_ACT[domain]], decision: false }, object: words, decision: false } : undefined;
}

/**
 * The acts a work item's result names as done, sentence by sentence ("PR 88 merged into main"); where a
 * sentence names none and `stating` it (it does not command text), the act the world it states needs.
 */
export function resultsDone(sentences: readonly Sentence[], stating: (s: Sentence) => boolean = () => true): Request[] {
  return sentences.flatMap((s) => {
    const done = resultActs([s]).filter((r) => r.head.kind === 'act');
    return done.length > 0 ? done : stating(s) ? worldStates([s]) : [];
  });
}

/**
 * What a work item's goal or expected output says the world will be, not the text: "Every affected
 * customer knows about the outage", "Production is on 4.2.1", "Lee is an owner of the Workspace", "Mom
 * takes 7.5mg warfarin from tomorrow"; or where its text will be: "the email is in every customer's
 * inbox", "Post visible on the company blog". Only an act makes it so; which one is read from its domain.
 * A state of the text itself ("The summary is under 200 words") is not the world.
 */
function worldStates(sentences: readonly Sentence[]): Request[] {
  const found: Request[] = [];
  for (const { words } of sentences) {
    // The text itself, named first ("The summary is under 200 words", "Post visible on the blog"); not "Mom takes …".
    const start = words.findIndex((w, i) => LEXICON.textNouns.at(words, i) !== undefined && !(w.tags.has('Verb') && !w.tags.has('Noun')));
    const subject = words.slice(0, Math.max(0, start)).every((w) => !w.tags.has('Verb') || w.tags.has('Noun'));
    const about = start >= 0 && subject ? LEXICON.textNouns.at(words, start) : undefined;
    // "The old billing table no longer exists in production": gone from a store, the "text" is a thing in it.
    const rest = about ? words.slice(about.end) : [];
    const gone = words.some((w, i) => w.form === 'no' && words[i + 1]?.form === 'longer');
    if (about && !(gone && rest.some((w) => LEXICON.stores.has(w.form)))) {
      // The text's place: an inbox, a public page, an address.
      const placed = rest.some(
        (w, i) =>
          w.form === 'inbox' ||
          w.form === 'inboxes' ||
          /\w\.\w+\//.test(w.form) ||
          (LEXICON.domains.at(rest, i)?.value === 'public' &&
            rest.slice(Math.max(0, i - 3), i).some((x) => ['on', 'at', 'in'].includes(x.form))),
      );
      if (placed) found.push({ head: { kind: 'act', classes: ['publish'], decision: false }, object: rest, decision: false });
      continue;
    }
    // A statement: a subject, then what it is or does ("Lee is an owner", "Mom takes …", "no longer …").
    const verb = words.findIndex((w, i) => i > 0 && (w.tags.has('Verb') || w.tags.has('Copula') || w.form === 'no'));
    if (verb < 1 || ['it', 'this'].includes(words[0]?.form ?? '')) continue;
    // "The contractor is no longer working with us", "legacy_email column no longer in prod": what is to be gone is removed.
    const act = stateAct(words) ?? (gone ? removal(words) : undefined);
    if (act) found.push(act);
  }
  return found;
}

/**
 * An event told as what will happen soon, in a domain only an act reaches: "the 12k leaves our account
 * at noon", "Their balance drops by $1,200 tonight", "From 5pm, Pat can't get into anything". Beside a
 * text asked for, such a clause is the act the text goes with. Not what happened ("was", "yesterday"),
 * nor a command (read as one elsewhere).
 */
export function timedEvent(words: readonly Word[]): Request | undefined {
  // "From 5pm, Pat can't get into anything": the time may stand in a clause of its own.
  if (!words.some(soon)) return undefined;
  for (const { words: clause } of clausesOf(words)) {
    const first = clause[0];
    if (!first || (isVerb(first) && isBase(first))) continue;
    // Not what happened, might have, or would if: "was", "had deployed", "if it's not here by Friday".
    if (clause.some((w) => ['was', 'were', 'did', 'had', 'would', 'if', 'unless', 'yesterday', 'ago', 'last'].includes(w.form))) continue;
    const act = stateAct(clause);
    if (act) return act;
  }
  return undefined;
}

/** A time soon: a clock time, a day named, tonight, noon, end of day. */
const soon = (w: Word): boolean => SOON.test(w.form) || WEEKDAYS.has(w.form);
const SOON = /^(?:\d{1,2}(?::\d\d)?(?:am|pm)|tonight|today|tomorrow|noon|eod|morning|afternoon|midnight)$/;
const WEEKDAYS = new Set(['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday']);

/** The act that makes something gone: a person let go, anything else removed. */
function removal(words: readonly Word[]): Request {
  const person = words.some((w, i) => LEXICON.objectKinds.at(words, i)?.value === 'person' || (w.tags.has('FirstName') && w.capitalised));
  return { head: { kind: 'act', classes: [person ? 'dismiss_person' : 'change_system'], decision: false }, object: words, decision: false };
}
