import { MEMORY_HEADER } from '../../domain/memory/recall.js';
import { settledFacts } from '../../domain/memory/summary.js';
import { BRIEFING_HEADER } from '../../domain/prompts.js';
import { offlineSampleReply, offlineSynthesisAnswer } from './offline-answers.js';
import type { CallContext, ChatMessage, LlmClient, LlmReply, LlmRequest } from '../../domain/ports.js';

export const OFFLINE_MODEL = 'offline-rehearsal-v1';

const RISK_MARKERS =
  /\b(irreversible|drop table|rm -rf|delete (all|every|production)|wipe|shut ?down production|wire (the )?money|transfer funds)\b/i;
const DOUBT_MARKERS = /\b(unclear|ambiguous|tbd|not sure|unknown requirements?|undecided|to be decided)\b/i;

interface Angle {
  readonly lens: string;
  readonly remark: string;
  readonly asks: readonly string[];
}

/** What each default persona looks at; other personas get a lens built from their name. */
const ANGLES: Record<string, Angle> = {
  coordinator: {
    lens: 'scope, sequencing and ownership',
    remark: 'this needs an owner and a date before it can go in the plan.',
    asks: ['What is the smallest first step that proves the direction?', 'Who owns each step, and what does "done" look like?'],
  },
  strategist: {
    lens: 'options, trade-offs and long-term consequences',
    remark: 'worth comparing with at least one cheaper alternative before we commit.',
    asks: ['Which alternative did we not consider, and why would it lose?', 'What would make this plan obsolete in a year?'],
  },
  auditor: {
    lens: 'risks, evidence and what could fail',
    remark: 'how would we know it worked, and how would we undo it?',
    asks: ['Which claim here is not backed by a document we have read?', 'What is the rollback if the first step fails?'],
  },
};

/**
 * The embedded default model: deterministic, no network, and plainly a rehearsal. Its replies are
 * shaped by the persona and the task, request each input artifact once with a READ_FILE token,
 * sometimes ask for a persona's earlier notes when the workspace has them, and answer verdict
 * requests with strict JSON — so the whole pipeline runs anywhere, including in tests.
 */
export class OfflineLlmClient implements LlmClient {
  readonly label = `offline (${OFFLINE_MODEL})`;
  readonly rehearsal = true;
  /** Whether a workspace file exists: the rehearsal asks only for notes that are there (without it, for none). */
  constructor(private readonly options: { readonly hasFile?: (relative: string) => Promise<boolean> } = {}) {}

  async complete(request: LlmRequest, call: CallContext, signal?: AbortSignal): Promise<LlmReply> {
    signal?.throwIfAborted();
    const view = readConversation(request.messages);
    const notes = `notes/${call.persona}-context.md`;
    const asked = {
      ...call,
      messages: request.messages,
      notes: call.round === 1 && (await this.options.hasFile?.(notes)) ? notes : undefined,
    };
    const content =
      offlineSampleReply(request.messages, request.responseFormat) ??
      (call.purpose === 'verdict' && call.step.startsWith('reviewer:')
        ? reviewerReply(asked, view)
        : call.purpose === 'verdict'
          ? verdictReply(asked, view)
          : call.purpose === 'synthesis'
            ? synthesisReply(asked, view)
            : call.purpose === 'plan' && request.responseFormat?.name === 'work_plan'
              ? workPlanReply(asked, view)
              : call.purpose === 'plan'
                ? planReply(view)
                : call.purpose === 'assessment'
                  ? assessmentReply(asked, view)
                  : call.purpose === 'review'
                    ? reviewReply(asked)
                    : call.purpose === 'decision'
                      ? decisionReply(asked)
                      : turnReply(asked, view)); // a work item is a turn: the same reply the persona gives run directly
    const promptChars = request.messages.reduce((n, m) => n + m.content.length, 0);
    call.onText?.(content);
    return {
      content,
      model: OFFLINE_MODEL,
      identity: { provider: 'offline', model: OFFLINE_MODEL, rehearsal: true },
      usage: { prompt_tokens: Math.ceil(promptChars / 4), completion_tokens: Math.ceil(content.length / 4) },
    };
  }
}

/** A call as the script reads it: who asks, and the messages. */
type Asked = CallContext & { readonly messages: readonly ChatMessage[]; readonly notes: string | undefined };

interface ConversationView {
  readonly name: string;
  readonly task: string;
  /** The task as given, every paragraph (`task` is its first). */
  readonly wholeTask: string;
  readonly inputs: string[];
  /** Every path some speaker already asked for in this task. */
  readonly requested: Set<string>;
  /** Files provided in this task: path → first meaningful line. */
  readonly provided: Map<string, string>;
  /** Files whose content arrived since this persona last spoke. */
  readonly fresh: Set<string>;
  /** List items and numbered steps found in the files provided so far. */
  readonly facts: string[];
  readonly missing: string[];
  readonly freshMissing: string[];
  readonly lastSpeaker?: string;
  readonly ownTurns: number;
  /** What its memory of earlier tasks holds that is closest to this task (settled, or decided, or said). */
  readonly memory?: { readonly best: string };
}

function readConversation(messages: readonly ChatMessage[]): ConversationView {
  const system = messages[0]?.content ?? '';
  const name = /^You are (.+?), one member/m.exec(system)?.[1] ?? 'Council member';
  let start = -1;
  messages.forEach((m, i) => {
    if (m.role === 'user' && m.content.includes(BRIEFING_HEADER)) start = i;
  });
  const current = start >= 0 ? messages.slice(start) : messages.slice(1);
  const briefing = start >= 0 ? (messages[start]?.content ?? '') : '';
  const task = /TASK:\s*([\s\S]*?)(?:\n\n|$)/.exec(briefing)?.[1]?.trim() ?? '';
  const wholeTask = /TASK:\s*([\s\S]*?)\n\n(?:Input artifacts \(|No input artifacts were provided\.)/.exec(briefing)?.[1]?.trim() ?? task;
  const inputs = [...briefing.matchAll(/^- INPUT ARTIFACT: (.+)$/gm)].map((m) => (m[1] ?? '').trim());
  const requested = new Set<string>();
  const provided = new Map<string, string>();
  const facts: string[] = [];
  const missing: string[] = [];
  let lastSpeaker: string | undefined;
  for (const m of current) {
    for (const t of m.content.matchAll(/READ_FILE\(\s*["'`]?([^)"'`]+?)["'`]?\s*\)/g)) requested.add((t[1] ?? '').trim());
    for (const b of m.content.matchAll(/<<<BEGIN (.+)\n([\s\S]*?)\nEND \1>>>/g)) {
      const lines = (b[2] ?? '').split('\n').map((l) => l.trim());
      const first = lines.map((l) => l.replace(/^#+\s*/, '')).find((l) => l.length > 0) ?? '(empty)';
      provided.set((b[1] ?? '').trim(), first.slice(0, 100));
      for (const l of lines) if (/^([-*]|\d+\.)\s+\S/.test(l) && !facts.includes(l)) facts.push(l);
    }
    for (const e of m.content.matchAll(/CONTEXT_ERROR \(requested by [^)]+\): READ_FILE\((.+?)\) — not found/g)) {
      if (!missing.includes(e[1] ?? '')) missing.push(e[1] ?? '');
    }
    for (const s of m.content.matchAll(/^\[([a-z0-9_-]+)(?: \((?:verdict|synthesis)\))?, (?:round|iteration) \d+\]$/gm)) lastSpeaker = s[1];
  }
  // What arrived since this persona last spoke: only the newest user message.
  const latest = current.at(-1)?.content ?? '';
  const fresh = new Set([...latest.matchAll(/<<<BEGIN (.+)\n/g)].map((b) => (b[1] ?? '').trim()));
  return {
    name,
    task,
    wholeTask,
    inputs,
    requested,
    provided,
    fresh,
    facts,
    missing,
    freshMissing: missing.filter((p) => latest.includes(`READ_FILE(${p}) — not found`)),
    ownTurns: current.filter((m) => m.role === 'assistant').length,
    ...rememberedFor(system, task),
    ...(lastSpeaker ? { lastSpeaker } : {}),
  };
}

function turnReply(request: Asked, v: ConversationView): string {
  const angle = ANGLES[request.persona] ?? {
    lens: `the concerns of a ${v.name.toLowerCase()}`,
    remark: 'this deserves a closer look.',
    asks: ['What evidence would change our minds?'],
  };
  const seed = hash(`${request.persona}\n${v.task}`);
  const topic = keywords(v.task);
  const lines: string[] = [`**${v.name}, round ${request.round}** — looking at ${angle.lens}.`];
  if (v.ownTurns === 0) {
    lines.push(`As I read it, the task is about ${topic.length > 0 ? topic.join(', ') : 'the request as stated'}.`);
    if (v.memory) lines.push(`From earlier tasks I recall: "${v.memory.best}".`);
  } else if (v.lastSpeaker && v.lastSpeaker !== request.persona) {
    lines.push(`Building on what ${v.lastSpeaker} just said, I want to sharpen one point.`);
  }
  for (const path of v.fresh) lines.push(`- I have read \`${path}\` ("${v.provided.get(path) ?? ''}").`);
  for (const path of v.freshMissing) lines.push(`- \`${path}\` could not be found, so I will not rely on it.`);
  if (v.facts.length > 0) {
    const fact = v.facts[(seed + request.round * 3) % v.facts.length] ?? '';
    lines.push(`- On "${fact.replace(/^([-*]|\d+\.)\s+/, '').slice(0, 120)}": ${angle.remark}`);
  }
  lines.push(`- ${angle.asks[(seed + request.round) % angle.asks.length]}`);
  if (RISK_MARKERS.test(v.task)) lines.push('- This touches something hard to undo; a person should confirm before anything is executed.');
  else if (DOUBT_MARKERS.test(v.task)) lines.push('- Parts of the request are not settled yet; we should not pretend otherwise.');

  const wanted = v.inputs.find((p) => !v.requested.has(p));
  if (wanted) lines.push('', `I am putting the input on the record for everyone: [ORCHESTRATOR_REQUEST: READ_FILE(${wanted})]`);
  if (request.notes && seed % 3 === 0 && !v.requested.has(request.notes)) {
    lines.push(`My earlier notes are here too: [ORCHESTRATOR_REQUEST: READ_FILE(${request.notes})]`);
  }
  return lines.join('\n');
}

function verdictReply(request: Asked, v: ConversationView): string {
  const seed = hash(`${request.persona}\n${v.task}\nverdict`);
  const confidence = Math.round((0.62 + (seed % 30) / 100) * 100) / 100;
  if (RISK_MARKERS.test(v.task)) {
    return JSON.stringify({
      action: 'escalate',
      confidence: 0.9,
      rationale: 'the task asks for something hard to undo; a person must decide',
    });
  }
  if (DOUBT_MARKERS.test(v.task)) {
    return JSON.stringify({ action: 'investigate', confidence, rationale: 'the request is not settled enough to act on' });
  }
  // Evidence the task itself names and nobody could find: the auditor will not proceed without it (a
  // speculative request of its own that found nothing is no gap in the task).
  const gaps = v.missing.filter((p) => namedFiles(v.wholeTask).includes(p));
  if (request.persona === 'auditor' && gaps.length > 0) {
    return JSON.stringify({
      action: 'investigate',
      confidence: 0.55,
      rationale: `${gaps.length} file(s) the task names could not be found; the evidence is incomplete`,
    });
  }
  const basis = v.provided.size > 0 ? `the ${v.provided.size} file(s) read support the direction` : 'the direction is coherent as stated';
  return JSON.stringify({ action: 'proceed', confidence, rationale: basis });
}

/**
 * An assessment: its scores vary per persona and task (each vector's from a hash of the whole task),
 * deterministic, plainly a rehearsal. Its action follows what the task says, never a coin: escalate
 * when it asks for something hard to undo, investigate when it is unsettled, and the auditor
 * investigates a task that names a file it was not given (evidence it cannot check); else proceed.
 */
function assessmentReply(request: Asked, v: ConversationView): string {
  const seed = hash(`${request.persona}\n${v.wholeTask}\nassessment`);
  const lens = ANGLES[request.persona]?.lens ?? `the concerns of a ${v.name.toLowerCase()}`;
  const vectors: Record<string, { score: number; rationale: string }> = {};
  VECTOR_NOTES.forEach(([name, note], i) => {
    const wobble = hash(`${seed}:${name}`) % 41; // 0–40
    let score = 0.45 + wobble / 100; // 0.45–0.85
    if (name === 'uncertainty') score = 0.15 + wobble / 100; // 0.15–0.55
    if (name === 'context' && v.inputs.length === 0) score -= 0.2; // nothing attached: less context
    if (name === 'impact' && RISK_MARKERS.test(v.task)) score = 0.2;
    vectors[name] = {
      score: Math.round(Math.min(1, Math.max(0, score)) * 100) / 100,
      rationale: `${note} (${lens}; rehearsal ${i + 1}/13)`,
    };
  });
  const confidence = Math.round((0.55 + (seed % 40) / 100) * 100) / 100;
  const unchecked = request.persona === 'auditor' && namedFiles(v.wholeTask).some((f) => !v.inputs.includes(f));
  const action = RISK_MARKERS.test(v.task) ? 'escalate' : DOUBT_MARKERS.test(v.task) || unchecked ? 'investigate' : 'proceed';
  const rationale =
    action === 'escalate'
      ? 'the task asks for something hard to undo; a person must decide'
      : action === 'investigate'
        ? `from ${lens}, more facts are needed before acting`
        : `from ${lens}, the direction is coherent as stated`;
  return JSON.stringify({ action, confidence, rationale, vectors });
}

/** Workspace paths a task names (`docs/plan.md`, `report.csv`): what an auditor would want to read. */
function namedFiles(task: string): string[] {
  return [...task.matchAll(/(?:^|[\s(`'"])((?:[\w.-]+\/)*[\w-]+\.(?:md|txt|json|csv|ya?ml|sql|ts|js|py|log))\b/g)].map((m) => m[1] ?? '');
}

const VECTOR_NOTES: readonly (readonly [string, string])[] = [
  ['engagement', 'how fully this persona can engage'],
  ['know', 'domain knowledge at hand'],
  ['do', 'capability to act on it'],
  ['context', 'context given by the task and its inputs'],
  ['clarity', 'how clear the request is'],
  ['coherence', 'how well its parts fit'],
  ['signal', 'relevant information against noise'],
  ['density', 'information load'],
  ['state', 'current state understood'],
  ['change', 'what must change'],
  ['completion', 'what done looks like'],
  ['impact', 'consequences understood'],
  ['uncertainty', 'overall uncertainty'],
];

/**
 * The supervisor's decision: each specialist once, in the order offered, with an instruction from
 * its lens; then stop. It reads who it already delegated to from its own earlier decisions in this
 * task, and stops at once when no delegation is left.
 */
function decisionReply(request: Asked): string {
  const prompt = request.messages.at(-1)?.content ?? '';
  const offered = [...(/^Specialists you may delegate to: (.+)\.$/m.exec(prompt)?.[1] ?? '').matchAll(/([a-z0-9][a-z0-9_-]*) \(/g)].map(
    (m) => m[1] ?? '',
  );
  let start = 0;
  request.messages.forEach((m, i) => {
    if (m.role === 'user' && m.content.includes(BRIEFING_HEADER)) start = i;
  });
  const delegated = new Set(
    request.messages
      .slice(start)
      .filter((m) => m.role === 'assistant')
      .flatMap((m) => [...(/"target"\s*:\s*"([^"]+)"/.exec(m.content)?.slice(1, 2) ?? [])]),
  );
  const next = offered.find((p) => !delegated.has(p));
  if (!next || /No delegations are left/.test(prompt)) {
    return JSON.stringify({
      action: 'stop',
      target: null,
      instruction: `the specialists have each spoken (${delegated.size}); the council can give its verdicts (offline rehearsal)`,
    });
  }
  const lens = ANGLES[next]?.lens ?? 'your own angle';
  return JSON.stringify({
    action: 'delegate',
    target: next,
    instruction: `look at the task from ${lens} and say what the others have not (offline rehearsal)`,
  });
}

/** The reviewer gate: the rehearsal's verdict on the result, with findings when the task is risky or unsettled. */
function reviewerReply(request: Asked, v: ConversationView): string {
  const verdict = JSON.parse(verdictReply(request, v)) as { action: string; confidence: number; rationale: string };
  const subject = request.messages.at(-1)?.content ?? '';
  const items = (subject.match(/^### Work item \d+ of \d+/gm) ?? []).length;
  const unfinished = (subject.match(/_\(no result: this item did not finish\)_/g) ?? []).length;
  const findings = [
    ...(RISK_MARKERS.test(v.task) ? ['the task asks for something hard to undo; a person must confirm first'] : []),
    ...(DOUBT_MARKERS.test(v.task) ? ['parts of the request are not settled; the result rests on assumptions'] : []),
    ...(unfinished > 0 ? [`${unfinished} work item(s) have no result`] : []),
  ];
  const rationale =
    findings.length > 0
      ? verdict.rationale
      : `checked ${items > 0 ? `${items} work item(s)` : 'the result'} against the task: consistent, nothing contradicts (offline rehearsal)`;
  return JSON.stringify({
    ...verdict,
    ...(unfinished > 0 && verdict.action === 'proceed' ? { action: 'investigate' } : {}),
    rationale,
    findings,
  });
}

/** A ranking of the anonymised assessments: by their stated confidence, highest first (ties by label). */
function reviewReply(request: Asked): string {
  const prompt = request.messages.at(-1)?.content ?? '';
  const shown = [...prompt.matchAll(/^Assessment ([A-Z]):\n\w+ \(confidence ([\d.]+)\)/gm)].map((m) => ({
    label: m[1] ?? '',
    confidence: Number(m[2]),
  }));
  const labels = [...prompt.matchAll(/^Assessment ([A-Z]):$/gm)].map((m) => m[1] ?? '');
  const ranked = [...shown].sort((a, b) => b.confidence - a.confidence || a.label.localeCompare(b.label)).map((s) => s.label);
  for (const l of labels) if (!ranked.includes(l)) ranked.push(l);
  return JSON.stringify({ ranking: ranked, rationale: 'ranked by how firmly each assessment is grounded (offline rehearsal)' });
}

function synthesisReply(request: Asked, v: ConversationView): string {
  const topic = keywords(v.task);
  const last = request.messages.at(-1)?.content ?? '';
  const outcome = /arbitrated: (\w+)/.exec(last)?.[1] ?? 'unknown';
  const files = [...v.provided.keys()];
  return [
    '### Recommendation',
    '',
    `After arbitration the council's position is: **${outcome}**. The task, in its key words: ${topic.length > 0 ? topic.join(', ') : 'as stated'}.`,
    '',
    '### Reasons',
    '',
    files.length > 0
      ? `- Grounded in ${files.map((f) => `\`${f}\``).join(', ')}.`
      : '- No input documents were provided; the reasoning rests on the task text alone.',
    '- Coordinator, strategist and auditor views were each heard in every round.',
    '',
    '### Open risks',
    '',
    v.missing.length > 0
      ? `- Missing references: ${v.missing.map((f) => `\`${f}\``).join(', ')}.`
      : '- None beyond those named in the transcript.',
    '',
    '### Next steps',
    '',
    '1. Agree on the smallest first step and its owner.',
    '2. Check the open risks against the evidence before committing.',
    '3. Re-run the council with a real model for substantive advice (this is an offline rehearsal).',
    ...[offlineSynthesisAnswer(request.messages)].filter((a) => a !== undefined).flatMap((a) => ['', a]),
  ].join('\n');
}

/** A planner's plan of work items (`plan` mode): one item per council member, in the order offered, each from its lens. */
function workPlanReply(request: Asked, v: ConversationView): string {
  const prompt = request.messages.at(-1)?.content ?? '';
  const members = [...prompt.matchAll(/^- ([a-z0-9][a-z0-9_-]*) \(([^)]+)\)/gm)].map((m) => ({ id: m[1] ?? '', name: m[2] ?? '' }));
  const topic = keywords(v.task);
  const items = members.map((m) => ({
    id: `${m.id}-part`,
    assigned_agent: m.id,
    goal: `Cover ${topic.length > 0 ? topic.join(', ') : 'the task'} from the angle of ${ANGLES[m.id]?.lens ?? `a ${m.name.toLowerCase()}`}`,
    expected_output: 'a short section with its findings and next steps',
  }));
  return JSON.stringify({ items, rationale: `one part per council member, each from its own angle (offline rehearsal)` });
}

function planReply(v: ConversationView): string {
  const topic = keywords(v.task);
  return [
    `**Plan to resolve the repeated pauses** (offline rehearsal) on ${topic.length > 0 ? topic.join(', ') : 'this task'}:`,
    '1. The person states the decision the council cannot make (the preference, the boundary or the missing fact).',
    '2. The council re-runs with that decision written into the task, or with the missing input attached.',
    '3. If the conflict is about risk, narrow the task to a reversible first step and re-run.',
  ].join('\n');
}

const STOPWORDS = new Set(
  'the and for with that this from into onto about what which when where your their there then than them they have will would should could must propose next steps step plan assess review please make give write'.split(
    ' ',
  ),
);

/** Up to five distinctive words of the task, in order of appearance. */
function keywords(task: string): string[] {
  const words = (task.toLowerCase().match(/[a-z][a-z0-9-]{3,}/g) ?? []).filter((w) => !STOPWORDS.has(w));
  return [...new Set(words)].slice(0, 5);
}

/**
 * What a reply quotes of the memory block: of its lines sharing two of the task's words or more, the
 * fact settled there (a date, a decision, a name) sharing most that the task does not already say; else
 * the part (asked, decided) sharing most that the task does not already say.
 */
function rememberedFor(system: string, task: string): { memory: { best: string } } | Record<string, never> {
  const asked = new Set(keywords(task));
  const shared = (text: string): number => (text.toLowerCase().match(/[a-z][a-z0-9-]{3,}/g) ?? []).filter((w) => asked.has(w)).length;
  const parts = (system.split(MEMORY_HEADER)[1] ?? '')
    .split('\n')
    .filter((l) => l.startsWith('- ') && shared(l) >= 2)
    .flatMap((l) => l.replace(/^- (?:\([^)]*\) |\S+ asked(?: \(\d+ times\))?: )?/, '').split(/ \| (?:decided|settled): /));
  const facts = settledFacts(parts, [task]);
  const candidates = facts.length > 0 ? facts : parts.filter((p) => !task.includes(p.replace(/…$/, '').trim()));
  const best = candidates.sort((a, b) => shared(b) - shared(a))[0];
  return best === undefined ? {} : { memory: { best: best.trim().slice(0, 120) } };
}

/** FNV-1a: a small deterministic hash, the offline model's only source of variety. */
function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
