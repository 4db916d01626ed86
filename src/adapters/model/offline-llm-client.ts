import { offlineSampleReply, offlineSynthesisAnswer } from './offline-answers.js';
import { type Conversation, hash, namedFiles, readConversation, topicOf } from './offline-reading.js';
import script from './offline-script.json' with { type: 'json' };
import type { CallContext, CallPurpose, LlmClient, LlmReply, LlmRequest } from '../../domain/ports.js';

export const OFFLINE_MODEL = 'offline-rehearsal-v1';

const RISK_MARKERS =
  /\b(irreversible|drop table|rm -rf|delete (all|every|production)|wipe|shut ?down production|wire (the )?money|transfer funds)\b/i;
const DOUBT_MARKERS = /\b(unclear|ambiguous|tbd|not sure|unknown requirements?|undecided|to be decided)\b/i;

/** What each default persona looks at (`offline-script.json`); other personas get a lens built from their name. */
const ANGLES: Readonly<Record<string, { readonly lens: string; readonly remark: string; readonly asks: readonly string[] }>> =
  script.angles;

/** The rehearsal's reply to each kind of call; a work item is a turn: the same reply the persona gives run directly. */
const REPLIES: Record<CallPurpose, (call: CallContext, v: Conversation) => string> = {
  turn: turnReply,
  item: turnReply,
  classify: turnReply,
  verdict: (call, v) => (call.step.startsWith('reviewer:') ? reviewerReply(call, v) : JSON.stringify(verdictOf(call, v))),
  synthesis: synthesisReply,
  plan: (_call, v) => (v.format === 'work_plan' ? workPlanReply(v) : planReply(v)),
  assessment: assessmentReply,
  review: reviewReply,
  decision: decisionReply,
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
    const notes = `notes/${call.persona}-context.md`;
    const hasNotes = call.round === 1 && (await this.options.hasFile?.(notes));
    const content =
      offlineSampleReply(request.messages, request.responseFormat) ??
      REPLIES[call.purpose](call, readConversation(request, hasNotes ? notes : undefined));
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

function lensOf(persona: string, v: Conversation): string {
  return ANGLES[persona]?.lens ?? `the concerns of a ${v.name.toLowerCase()}`;
}

function turnReply(call: CallContext, v: Conversation): string {
  const angle = ANGLES[call.persona] ?? {
    lens: lensOf(call.persona, v),
    remark: 'this deserves a closer look.',
    asks: ['What evidence would change our minds?'],
  };
  const seed = hash(`${call.persona}\n${v.task}`);
  const lines: string[] = [`**${v.name}, round ${call.round}** — looking at ${angle.lens}.`];
  if (v.ownTurns === 0) {
    lines.push(`As I read it, the task is about ${topicOf(v.task, 'the request as stated')}.`);
    if (v.memory !== undefined) lines.push(`From earlier tasks I recall: "${v.memory}".`);
  } else if (v.lastSpeaker && v.lastSpeaker !== call.persona) {
    lines.push(`Building on what ${v.lastSpeaker} just said, I want to sharpen one point.`);
  }
  for (const path of v.fresh) lines.push(`- I have read \`${path}\` ("${v.provided.get(path) ?? ''}").`);
  for (const path of v.freshMissing) lines.push(`- \`${path}\` could not be found, so I will not rely on it.`);
  if (v.facts.length > 0) {
    const fact = v.facts[(seed + call.round * 3) % v.facts.length] ?? '';
    lines.push(`- On "${fact.replace(/^([-*]|\d+\.)\s+/, '').slice(0, 120)}": ${angle.remark}`);
  }
  lines.push(`- ${angle.asks[(seed + call.round) % angle.asks.length]}`);
  if (RISK_MARKERS.test(v.task)) lines.push('- This touches something hard to undo; a person should confirm before anything is executed.');
  else if (DOUBT_MARKERS.test(v.task)) lines.push('- Parts of the request are not settled yet; we should not pretend otherwise.');

  const wanted = v.inputs.find((p) => !v.requested.has(p));
  if (wanted) lines.push('', `I am putting the input on the record for everyone: [ORCHESTRATOR_REQUEST: READ_FILE(${wanted})]`);
  if (v.notes && seed % 3 === 0 && !v.requested.has(v.notes)) {
    lines.push(`My earlier notes are here too: [ORCHESTRATOR_REQUEST: READ_FILE(${v.notes})]`);
  }
  return lines.join('\n');
}

const UNDO_RATIONALE = 'the task asks for something hard to undo; a person must decide';

function verdictOf(call: CallContext, v: Conversation): { action: string; confidence: number; rationale: string } {
  const seed = hash(`${call.persona}\n${v.task}\nverdict`);
  const confidence = Math.round((0.62 + (seed % 30) / 100) * 100) / 100;
  if (RISK_MARKERS.test(v.task)) return { action: 'escalate', confidence: 0.9, rationale: UNDO_RATIONALE };
  if (DOUBT_MARKERS.test(v.task)) return { action: 'investigate', confidence, rationale: 'the request is not settled enough to act on' };
  // Evidence the task itself names and nobody could find: the auditor will not proceed without it (a
  // speculative request of its own that found nothing is no gap in the task).
  const gaps = v.missing.filter((p) => namedFiles(v.wholeTask).includes(p));
  if (call.persona === 'auditor' && gaps.length > 0) {
    const rationale = `${gaps.length} file(s) the task names could not be found; the evidence is incomplete`;
    return { action: 'investigate', confidence: 0.55, rationale };
  }
  const basis = v.provided.size > 0 ? `the ${v.provided.size} file(s) read support the direction` : 'the direction is coherent as stated';
  return { action: 'proceed', confidence, rationale: basis };
}

/**
 * An assessment: its scores vary per persona and task (each vector's from a hash of the whole task),
 * deterministic, plainly a rehearsal. Its action follows what the task says, never a coin: escalate
 * when it asks for something hard to undo, investigate when it is unsettled, and the auditor
 * investigates a task that names a file it was not given (evidence it cannot check); else proceed.
 */
function assessmentReply(call: CallContext, v: Conversation): string {
  const seed = hash(`${call.persona}\n${v.wholeTask}\nassessment`);
  const lens = lensOf(call.persona, v);
  const vectors: Record<string, { score: number; rationale: string }> = {};
  script.vectors.forEach(([name = '', note], i) => {
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
  const unchecked = call.persona === 'auditor' && namedFiles(v.wholeTask).some((f) => !v.inputs.includes(f));
  const action = RISK_MARKERS.test(v.task) ? 'escalate' : DOUBT_MARKERS.test(v.task) || unchecked ? 'investigate' : 'proceed';
  const rationale =
    action === 'escalate'
      ? UNDO_RATIONALE
      : action === 'investigate'
        ? `from ${lens}, more facts are needed before acting`
        : `from ${lens}, the direction is coherent as stated`;
  return JSON.stringify({ action, confidence, rationale, vectors });
}

/**
 * The supervisor's decision: each specialist once, in the order offered, with an instruction from
 * its lens; then stop. It reads who it already delegated to from its own earlier decisions in this
 * task, and stops at once when no delegation is left.
 */
function decisionReply(_call: CallContext, v: Conversation): string {
  const prompt = v.messages.at(-1)?.content ?? '';
  const offered = [...(/^Specialists you may delegate to: (.+)\.$/m.exec(prompt)?.[1] ?? '').matchAll(/([a-z0-9][a-z0-9_-]*) \(/g)].map(
    (m) => m[1] ?? '',
  );
  const delegated = new Set(
    v.current.filter((m) => m.role === 'assistant').flatMap((m) => [...(/"target"\s*:\s*"([^"]+)"/.exec(m.content)?.slice(1, 2) ?? [])]),
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
function reviewerReply(call: CallContext, v: Conversation): string {
  const verdict = verdictOf(call, v);
  const subject = v.messages.at(-1)?.content ?? '';
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
function reviewReply(_call: CallContext, v: Conversation): string {
  const prompt = v.messages.at(-1)?.content ?? '';
  const shown = [...prompt.matchAll(/^Assessment ([A-Z]):\n\w+ \(confidence ([\d.]+)\)/gm)].map((m) => ({
    label: m[1] ?? '',
    confidence: Number(m[2]),
  }));
  const labels = [...prompt.matchAll(/^Assessment ([A-Z]):$/gm)].map((m) => m[1] ?? '');
  const ranked = [...shown].sort((a, b) => b.confidence - a.confidence || a.label.localeCompare(b.label)).map((s) => s.label);
  for (const l of labels) if (!ranked.includes(l)) ranked.push(l);
  return JSON.stringify({ ranking: ranked, rationale: 'ranked by how firmly each assessment is grounded (offline rehearsal)' });
}

function synthesisReply(_call: CallContext, v: Conversation): string {
  const outcome = /arbitrated: (\w+)/.exec(v.messages.at(-1)?.content ?? '')?.[1] ?? 'unknown';
  const files = [...v.provided.keys()];
  return [
    '### Recommendation',
    '',
    `After arbitration the council's position is: **${outcome}**. The task, in its key words: ${topicOf(v.task, 'as stated')}.`,
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
    ...script.synthesisSteps,
    ...[offlineSynthesisAnswer(v.messages)].filter((a) => a !== undefined).flatMap((a) => ['', a]),
  ].join('\n');
}

/** A planner's plan of work items (`plan` mode): one item per council member, in the order offered, each from its lens. */
function workPlanReply(v: Conversation): string {
  const prompt = v.messages.at(-1)?.content ?? '';
  const members = [...prompt.matchAll(/^- ([a-z0-9][a-z0-9_-]*) \(([^)]+)\)/gm)].map((m) => ({ id: m[1] ?? '', name: m[2] ?? '' }));
  const items = members.map((m) => ({
    id: `${m.id}-part`,
    assigned_agent: m.id,
    goal: `Cover ${topicOf(v.task, 'the task')} from the angle of ${ANGLES[m.id]?.lens ?? `a ${m.name.toLowerCase()}`}`,
    expected_output: 'a short section with its findings and next steps',
  }));
  return JSON.stringify({ items, rationale: `one part per council member, each from its own angle (offline rehearsal)` });
}

function planReply(v: Conversation): string {
  const head = `**Plan to resolve the repeated pauses** (offline rehearsal) on ${topicOf(v.task, 'this task')}:`;
  return [head, ...script.pausePlan].join('\n');
}
