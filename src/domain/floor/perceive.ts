import type { EnglishReader, Sentence, Word } from './english.js';
import { type ActClass, type DeliverableKind, type Domain, LEXICON, type ObjectKind } from './lexicon.js';
import type { Act, FloorReading, Unclear } from './reading.js';
import { objectKinds, type Request, readRequests } from './requests.js';
import { readHead, textNounAt } from './heads.js';
import { ADVICE, ADVICE_WORDS, atScale, materialCases, particularCases } from './cases.js';
import { resultsDone } from './statements.js';

/** A command's input file: its path, and its content when it was read. */
export interface TaskInput {
  readonly path: string;
  readonly content?: string;
}

export interface TaskText {
  readonly task: string;
  readonly inputs: readonly TaskInput[];
  /** Work items' goals: part of what the task asks. */
  readonly goals?: readonly string[];
  /** Work items' expected outputs, as text: what each gives back (an act done there is asked). */
  readonly results?: readonly string[];
  /** Material given with the task, by where it is (`facts.window`, `work_items.0.inputs.host`): an act asked there counts. */
  readonly material?: readonly { readonly source: string; readonly text: string }[];
}

/**
 * Perception and context (seed 000's first two layers) of a task, from its words: what it asks for
 * (text the council writes, acts in the world, things the floor cannot place), to what, which inputs
 * it hands over to be carried out (their content is then read as part of the task), and its context
 * (domains, particular cases in high-stakes domains, irreversibility, scale, urgency, clarity).
 * Pure: the reader is the English library, loaded by the caller.
 */
export function perceiveTask(read: EnglishReader, text: TaskText): FloorReading {
  const { said, fenced } = fences(text.task);
  // Fenced material is the task's own input: "explain this:" points at it.
  const hasInputs = text.inputs.length > 0 || (text.goals ?? []).length > 0 || fenced.length > 0;
  const sentences = read(said);
  const words = sentences.flatMap((s) => s.words);
  // A work item's goal is part of the task: read once, for what it asks and for its context.
  const goals = (text.goals ?? []).map((goal) => read(goal));
  const sources = [
    { source: 'task', requests: readRequests(sentences, hasInputs) },
    // A goal is what the item is to bring about: a state named there ("Acme is paid") asks the act, as in an expected output.
    ...goals.map((inner, i) => {
      // Read for acts done only where it states, not where it commands ("List merged PRs" is a command for text).
      const states = inner.filter(
        (s) => readHead(s.words, true) === undefined || (textNounAt(s.words) && !LEXICON.deliverableVerbs.at(s.words, 0)),
      );
      const done = resultsDone(states);
      return { source: `work_items.${i}.goal`, requests: [...readRequests(inner, true), ...done] };
    }),
  ];
  const asked = collect(sources, { inputs: text.inputs, hasInputs, words });
  // What an input handed over asks is part of the task: its acts are the task's acts.
  const handedWords: Word[] = [];
  for (const input of text.inputs.filter((i) => asked.handedOver.has(i.path) || asked.followed.has(i.path))) {
    // As much of it as a task may hold: the handover pauses whatever the rest says; this names what it asks.
    const inner = read((input.content ?? '').slice(0, HANDED_OVER_CHARS));
    handedWords.push(...inner.flatMap((s) => s.words));
    const more = collect([{ source: input.path, requests: readRequests(inner, false) }], { inputs: [], hasInputs: false, words: [] });
    asked.acts.push(...more.acts.filter((a) => a.class !== 'execute_instructions'));
    if (asked.handedOver.has(input.path)) asked.unplaced.push(...more.unplaced);
  }
  // A work item's expected output describes the text it gives back; an act asked or named as done there is asked.
  for (const [i, result] of (text.results ?? []).entries()) asked.acts.push(...actsIn(read(result), `work_items.${i}.expected_output`));
  // Facts and items' inputs are material given with the task: an act said there as a command still counts.
  const material = (text.material ?? []).map((m) => ({ ...m, sentences: read(m.text) }));
  // Read as the task is read (a statement or a description asks nothing), keeping only the acts.
  for (const m of material) {
    const requests = readRequests(m.sentences, true).filter((r) => r.head.kind === 'act' || r.head.kind === 'handover');
    asked.acts.push(...collect([{ source: m.source, requests }], { inputs: [], hasInputs: true, words: [] }).acts);
  }
  const materialWords = material.flatMap((m) => m.sentences.flatMap((s) => s.words));
  // Material between code fences is data: what it is about counts as context, what it says asks nothing.
  // A goal's words give context as the task's do ("Bed 6 on 10 units of insulin").
  const goalWords = goals.flat().flatMap((s) => s.words);
  const fencedWords = fenced.flatMap((f) => read(f).flatMap((s) => s.words));
  const all = [...words, ...goalWords, ...handedWords, ...fencedWords, ...materialWords];
  const givenToRead = text.inputs.filter((i) => !asked.handedOver.has(i.path) && !asked.followed.has(i.path));
  const fromData = materialCases(read, givenToRead, [...handedWords, ...fencedWords, ...materialWords]);
  const domains = new Set<Domain>(LEXICON.domains.all(all).map((m) => m.value));
  if (all.some((w) => w.tags.has('Money'))) domains.add('money');
  if (LEXICON.emergency.has(all)) domains.add('health');
  for (const a of asked.acts) if (a.class !== 'other') domains.add(LEXICON.acts[a.class].domain);
  for (const d of fromData) domains.add(d);
  const { acts, unclear, deliverables } = asked;
  if (asked.unplaced.length > 0) unclear.add('unplaced');
  // Text that says what to do is advice, whatever its kind: "a summary of my options", "a list of what to do".
  const advises = sources.some((s) => s.requests.some((r) => ADVICE_WORDS.has(r.object)));
  // A text said to be acted on as it is ("HR can act on it directly", "if you say so") is a decision, whatever its kind.
  const advice = asked.decision || LEXICON.binding.has(all) ? 'decision' : advises || [...deliverables].some((k) => ADVICE.has(k));
  return {
    perception: {
      deliverables: [...deliverables],
      acts,
      unplaced: [...new Set(asked.unplaced)].map((v) => v.slice(0, 40)),
      objects: [...new Set(sources.flatMap((s) => s.requests.flatMap((r) => objectKinds(r.object))))],
      inputs: text.inputs.map((i) => ({ path: i.path, role: asked.handedOver.has(i.path) ? 'instructions' : 'reference' })),
    },
    context: {
      domains: [...domains],
      high_stakes_case: [...new Set([...particularCases([...words, ...goalWords], domains, advice), ...fromData])],
      irreversible:
        acts.some((a) => a.class !== 'other' && LEXICON.acts[a.class].irreversible) ||
        (acts.length > 0 && LEXICON.irreversibility.has(all)),
      scale: atScale(all),
      urgency: LEXICON.urgency.has(words),
      intent: unclear.size > 0 ? 'unclear' : 'clear',
      unclear: [...unclear],
      boundary: LEXICON.boundary.has(words),
    },
  };
}

/**
 * The acts a work item's expected output asks, read as the task is ("Merge PR 88", "Then drop the old
 * table"), and those it names as done where it does not command ("PR 88 is merged"); a description asks nothing.
 */
function actsIn(sentences: Sentence[], source: string): Act[] {
  const commands = sentences.filter((s) => readHead(s.words, true) !== undefined && !textNounAt(s.words));
  const requests = [...readRequests(sentences, true), ...resultsDone(sentences, (s) => !commands.includes(s))].filter(
    (r) => r.head.kind === 'act' || r.head.kind === 'handover',
  );
  return collect([{ source, requests }], { inputs: [], hasInputs: true, words: [] }).acts;
}

/**
 * The task without its fenced blocks (```…```), and their contents. A fence says where pasted
 * material starts and ends, so nothing in it is read as a request; a task that asks to carry the
 * material out says so outside it ("run these commands"), and that pauses. A fence left open is no fence.
 */
function fences(task: string): { said: string; fenced: string[] } {
  const fenced: string[] = [];
  const said = task.replace(/(```|~~~)[^\n`~]*\n([\s\S]*?)\1/g, (_, _fence: string, body: string) => {
    fenced.push(body);
    return '\n';
  });
  return { said, fenced };
}

/** How much of a handed-over file the floor reads, as much as a task may hold. */
const HANDED_OVER_CHARS = 20_000;

interface Asked {
  deliverables: Set<DeliverableKind>;
  acts: Act[];
  unplaced: string[];
  unclear: Set<Unclear>;
  handedOver: Set<string>;
  /** Inputs the work follows ("per checklist.md"): their acts count, what the floor cannot place there does not. */
  followed: Set<string>;
  /** A request asks what someone should do. */
  decision: boolean;
}

/** What the requests of each source ask for, and whether the task says to what. */
function collect(
  sources: readonly { source: string; requests: readonly Request[] }[],
  at: { inputs: readonly TaskInput[]; hasInputs: boolean; words: readonly Word[] },
): Asked {
  const asked: Asked = {
    deliverables: new Set(),
    acts: [],
    unplaced: [],
    unclear: new Set(),
    handedOver: new Set(),
    followed: new Set(),
    decision: false,
  };
  // The intent is clear when one request at least says to what: "pros and cons of each" leans on the rest.
  const clarity: (Unclear | undefined)[] = [];
  for (const { source, requests } of sources) {
    for (const r of requests) {
      asked.decision ||= r.decision;
      const objects = objectKinds(r.object);
      const head = r.head;
      if (head.kind === 'deliverable') asked.deliverables.add(head.deliverable);
      else if (head.kind === 'question') asked.deliverables.add('answer');
      else if (head.kind === 'unplaced') asked.unplaced.push(head.verb);
      else if (head.kind === 'act')
        asked.acts.push({ class: chooseClass(head.classes, objects, headKind(r.object)), objects, decision: head.decision, source });
      else if (head.kind === 'handover') {
        asked.acts.push({ class: 'execute_instructions', objects, decision: r.decision, source });
        for (const p of referencedInputs(r.object, at.inputs)) asked.handedOver.add(p);
      }
      // "Review PR 88 per checklist.md", "grade it according to rubric.md": what the file asks is part of the work (its acts count).
      if (head.kind !== 'handover' && at.inputs.length > 0 && followsFile(r.object, at.inputs)) {
        for (const p of referencedInputs(r.object, at.inputs)) asked.followed.add(p);
      }
      if (head.kind !== 'constraint') clarity.push(clarityOf(r, at.hasInputs, at.words));
    }
  }
  if (clarity.length > 0 && clarity.every((c) => c !== undefined)) asked.unclear.add(clarity[0] as Unclear);
  if (asked.deliverables.size === 0 && asked.acts.length === 0 && asked.unplaced.length === 0) asked.unclear.add('no_request');
  if (LEXICON.bareRequests.has(at.words.map((w) => w.form).join(' '))) asked.unclear.add('no_object');
  return asked;
}

/**
 * Of the classes an act's words may name, the one its objects point to ("remove Priya from admin" →
 * access); on a tie, the one the object's head noun names ("get rid of the customer *records*" → data).
 */
function chooseClass(classes: readonly ActClass[], objects: readonly ObjectKind[], head: ObjectKind | undefined): ActClass {
  let best = classes[0] ?? 'change_system';
  let score = -1;
  for (const c of classes) {
    const named = LEXICON.acts[c].objects;
    const s = named.filter((o) => objects.includes(o)).length + (head !== undefined && named.includes(head) ? 0.5 : 0);
    if (s > score) [best, score] = [c, s];
  }
  return best;
}

/** The kind of thing the object's first noun phrase is about: its last kind named before a preposition. */
function headKind(object: readonly Word[]): ObjectKind | undefined {
  const stop = object.findIndex((w, i) => i > 0 && w.tags.has('Preposition'));
  return LEXICON.objectKinds.all(stop > 0 ? object.slice(0, stop) : object).at(-1)?.value;
}

const isContent = (w: Word): boolean =>
  !LEXICON.emptyWords.has(w.form) &&
  !LEXICON.pronouns.has(w.form) &&
  !LEXICON.vagueNouns.has(w.lemma) &&
  !LEXICON.questionOpeners.has(w.form) &&
  !w.tags.has('Preposition') &&
  !w.tags.has('Determiner') &&
  !w.tags.has('Conjunction') &&
  !w.tags.has('Modal') &&
  !w.tags.has('Copula') &&
  !w.tags.has('Auxiliary') &&
  !w.tags.has('Pronoun') &&
  !(w.tags.has('Verb') && LEXICON.emptyWords.has(w.lemma)) &&
  /\p{L}{2,}|\d/u.test(w.form);

/**
 * Why a request's object does not say to what (undefined when it does). With input files or work
 * items, a bare verb or a pronoun refers to them; a pronoun may also refer back to a noun the
 * task named before it.
 */
function clarityOf(r: Request, hasInputs: boolean, task: readonly Word[]): Unclear | undefined {
  if (hasInputs) return undefined;
  if (pointsAtMaterial(r.object, task)) return 'unresolved_reference';
  // "what happened during the outage", "who approved the change": a clause the object is, about its content.
  if (LEXICON.questionOpeners.has(r.object[0]?.form ?? '') && r.object[1]?.tags.has('Verb') && r.object.some(isContent)) return undefined;
  // The direct object decides ("translate *it* into Spanish"); without one, the rest of the clause.
  const stop = r.object.findIndex((w, i) => i > 0 && !w.tags.has('Hyphenated') && (w.tags.has('Preposition') || w.tags.has('Conjunction')));
  const direct = r.head.kind === 'question' ? r.object : stop > 0 ? r.object.slice(0, stop) : r.object;
  if (direct.some(isContent)) return undefined;
  // A pronoun must point at something; a vague noun may be made particular by the rest ("the thread *about the outage*").
  const pointing = direct.some((w) => LEXICON.pronouns.has(w.form) && !LEXICON.vagueNouns.has(w.lemma));
  if (!pointing && r.object.some(isContent)) return undefined;
  const first = r.object[0];
  const before = first ? task.slice(0, Math.max(0, task.indexOf(first))) : [];
  if (r.object.some((w) => LEXICON.pronouns.has(w.form))) {
    const antecedent = before.some((w) => isContent(w) && w.tags.has('Noun'));
    return antecedent ? undefined : 'unresolved_reference';
  }
  if (r.object.some((w) => LEXICON.vagueNouns.has(w.lemma))) return 'vague_object';
  return 'no_object';
}

/** Words after a pointer that may be the material itself (pasted after the request, at length). */
const MATERIAL_WORDS = 12;

/**
 * Whether the object points at material the command does not carry ("the attached notes", "the
 * email below", "this function") with neither input files nor the material itself after it in the
 * task (after a colon, or at length).
 */
function pointsAtMaterial(object: readonly Word[], task: readonly Word[]): boolean {
  const pointer = object.findIndex((w, i) => {
    const before = object[i - 1];
    if (LEXICON.materialMarkers.has(w.form)) return true;
    if (LEXICON.materialPositions.has(w.form))
      return before !== undefined && (before.form === 'the' || LEXICON.materialNouns.has(before.lemma));
    return LEXICON.materialDemonstratives.has(w.form) && LEXICON.materialNouns.has(object[i + 1]?.lemma ?? '');
  });
  if (pointer < 0) return false;
  const rest = task.slice(Math.max(0, task.indexOf(object[pointer] as Word)));
  return !rest.some((w) => w.after.includes(':')) && rest.length < MATERIAL_WORDS;
}

/** Inputs a handover points at: named by path or file name, else (it, the attached file, the steps) all of them. */
/** Words after which a named input is what the work follows: "per checklist.md", "according to", "as described in". */
const FOLLOWING = new Set(['per', 'according', 'described', 'following', 'accordance']);

function followsFile(object: readonly Word[], inputs: readonly TaskInput[]): boolean {
  const names = new Set(inputs.flatMap((i) => [i.path.toLowerCase(), i.path.toLowerCase().split('/').pop() ?? '']));
  return object.some((w, k) => names.has(w.form) && object.slice(Math.max(0, k - 3), k).some((x) => FOLLOWING.has(x.form)));
}

function referencedInputs(object: readonly Word[], inputs: readonly TaskInput[]): string[] {
  const said = object.map((w) => w.form);
  const named = inputs.filter((i) => {
    const p = i.path.toLowerCase();
    const base = p.split('/').pop() ?? p;
    return said.some((w) => w === p || w === base || w.endsWith(`/${base}`));
  });
  return (named.length > 0 ? named : inputs).map((i) => i.path);
}
