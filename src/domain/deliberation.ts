import { arbitrate, domainRelevance, type ArbitrationResult } from './arbitration.js';
import type { BudgetExceeded } from './budget.js';
import { AppError } from './errors.js';
import type { HistoryView } from './history.js';
import { parseKnowledgeRequests } from './knowledge-request.js';
import { redactSensitive } from './sensitive/detector.js';
import type { Persona } from './persona.js';
import type { ChatMessage, KnowledgeBase, LlmClient, OnProgress } from './ports.js';
import { orchestratorSystemPrompt, renderKnowledgeResult, stepInstruction } from './prompts.js';
import type { KnowledgeResult, RunPlan, Step } from './run-state.js';
import { parseVerdict, VERDICT_SCHEMA, verdictRetryPrompt, type Verdict } from './verdict.js';

export interface DeliberationInput {
  readonly runId: string;
  readonly task: string;
  readonly plan: RunPlan;
  /** Every persona of the plan, by id. */
  readonly personas: ReadonlyMap<string, Persona>;
  /** The task briefing with the input artifacts, given to each persona on its first step. */
  readonly briefing: string;
  /** Each persona's persisted history, already bounded to the token budget. */
  readonly histories: ReadonlyMap<string, HistoryView>;
  /** Steps already finished (from the checkpoint); they are replayed, never called again. */
  readonly completed: readonly Step[];
  readonly maxRequestsPerTurn: number;
}

export interface DeliberationDeps {
  readonly llm: LlmClient;
  readonly knowledge: KnowledgeBase;
  readonly now: () => Date;
  readonly sha256: (text: string) => string;
  /** Persists a finished step (the checkpoint) before the next one starts. */
  readonly onStep: (step: Step) => Promise<void>;
  readonly onProgress?: OnProgress;
  readonly signal?: AbortSignal;
  /** Budget check before each step (`before`) and after it (`after`); a non-null result halts the run. */
  readonly checkBudget?: (steps: readonly Step[], phase: 'before' | 'after') => BudgetExceeded | null;
}

/** The deliberation cannot go on without a person: a budget was crossed. Finished steps are checkpointed. */
export class BudgetExceededError extends AppError {
  readonly code = 'BUDGET_EXCEEDED' as const;
  constructor(readonly exceeded: BudgetExceeded) {
    super(exceeded.message);
  }
}

export interface DeliberationResult {
  readonly steps: Step[];
  readonly verdicts: Verdict[];
  readonly arbitration: ArbitrationResult;
  readonly proposal: string;
}

interface ScheduledStep {
  readonly kind: Step['kind'];
  readonly persona: string;
  readonly round: number;
}

/** The fixed order of model calls for a round-robin run: rounds × speakers, verdicts, synthesis. */
export function scheduleSteps(plan: RunPlan): ScheduledStep[] {
  const steps: ScheduledStep[] = [];
  for (let round = 1; round <= plan.rounds; round++) {
    for (const persona of plan.personas) steps.push({ kind: 'turn', persona, round });
  }
  for (const persona of plan.personas) steps.push({ kind: 'verdict', persona, round: plan.rounds });
  steps.push({ kind: 'synthesis', persona: plan.synthesizer, round: plan.rounds });
  return steps;
}

/**
 * Runs (or resumes) a round-robin deliberation. Each persona sees its system prompt, its bounded
 * history, the briefing, and everything said and provided in this task since it last spoke.
 */
export async function runDeliberation(input: DeliberationInput, deps: DeliberationDeps): Promise<DeliberationResult> {
  const schedule = scheduleSteps(input.plan);
  const steps: Step[] = [];
  let arbitration: ArbitrationResult | undefined;

  for (const [index, scheduled] of schedule.entries()) {
    if (scheduled.kind === 'synthesis') arbitration = arbitrateVerdicts(input, steps);
    const done = input.completed[index];
    if (done) {
      if (done.kind !== scheduled.kind || done.persona !== scheduled.persona) {
        throw new Error(`checkpoint step ${index} is ${done.kind}/${done.persona}, expected ${scheduled.kind}/${scheduled.persona}`);
      }
      steps.push(done);
      continue;
    }
    deps.signal?.throwIfAborted();
    const before = deps.checkBudget?.(steps, 'before');
    if (before) throw new BudgetExceededError(before);
    const step = await runStep(input, deps, { index, scheduled, steps, arbitration });
    steps.push(step);
    await deps.onStep(step);
    const after = deps.checkBudget?.(steps, 'after');
    if (after) throw new BudgetExceededError(after);
  }
  const synthesis = steps.at(-1);
  return {
    steps,
    verdicts: collectVerdicts(steps),
    arbitration: arbitration ?? arbitrateVerdicts(input, steps),
    proposal: synthesis?.kind === 'synthesis' ? synthesis.reply : '',
  };
}

async function runStep(
  input: DeliberationInput,
  deps: DeliberationDeps,
  ctx: { index: number; scheduled: ScheduledStep; steps: readonly Step[]; arbitration?: ArbitrationResult },
): Promise<Step> {
  const { scheduled, steps } = ctx;
  const persona = input.personas.get(scheduled.persona);
  if (!persona) throw new Error(`persona "${scheduled.persona}" is not loaded`);
  deps.onProgress?.({
    kind: 'step_started',
    run_id: input.runId,
    step: scheduled.kind,
    persona: persona.id,
    round: scheduled.round,
    rounds: input.plan.rounds,
  });
  const prompt = composePrompt(input, ctx);
  const messages = buildMessages(input, persona, steps, prompt);
  const startedAt = deps.now();
  const verdict = scheduled.kind === 'verdict';
  const request = { persona: persona.id, purpose: scheduled.kind, round: scheduled.round, messages, ...(verdict ? { json: true, jsonSchema: VERDICT_SCHEMA } : {}) };
  let reply = await deps.llm.complete(request, deps.signal);
  let calls = 1;
  let usage = reply.usage;
  const notices = [...(reply.notices ?? [])];
  if (verdict) {
    // A malformed verdict is asked for once more, with the validation problem; then it fails closed.
    const first = parseVerdict(persona.id, reply.content);
    if (!first.valid) {
      const retry = await deps.llm.complete(
        {
          ...request,
          messages: [
            ...messages,
            { role: 'assistant', content: reply.content },
            { role: 'user', content: verdictRetryPrompt(first.problem ?? 'invalid') },
          ],
        },
        deps.signal,
      );
      calls = 2;
      notices.push(...(retry.notices ?? []));
      usage = sumUsage(usage, retry.usage);
      reply = retry;
    }
  }
  const durationMs = Math.max(0, deps.now().getTime() - startedAt.getTime());
  // What a model says is screened as it arrives: the checkpoint, the draft, the artifact, persona
  // memory and the next speakers only ever see the redacted form; the categories go on the record.
  const screened = redactSensitive(reply.content);
  const knowledge = scheduled.kind === 'turn' ? await fulfilRequests(input, deps, persona, screened.text) : [];
  return {
    index: ctx.index,
    kind: scheduled.kind,
    persona: persona.id,
    round: scheduled.round,
    prompt,
    prompt_sha256: deps.sha256(messages.map((m) => `${m.role}\n${m.content}`).join('\n\u0000')),
    reply: screened.text,
    ...(screened.categories.length > 0 ? { redacted: [...screened.categories] } : {}),
    model: reply.model,
    started_at: startedAt.toISOString(),
    duration_ms: durationMs,
    ...(usage ? { usage } : {}),
    calls,
    knowledge,
    ...(notices.length > 0 ? { notices } : {}),
  };
}

async function fulfilRequests(
  input: DeliberationInput,
  deps: DeliberationDeps,
  persona: Persona,
  reply: string,
): Promise<KnowledgeResult[]> {
  const results: KnowledgeResult[] = [];
  for (const [i, request] of parseKnowledgeRequests(reply).entries()) {
    const result: KnowledgeResult =
      i < input.maxRequestsPerTurn
        ? await deps.knowledge.fulfil(request, persona)
        : {
            action: request.action,
            argument: request.argument,
            status: 'refused',
            message: `request limit reached (${input.maxRequestsPerTurn} per reply)`,
            reason_code: 'KNOWLEDGE_LIMIT_EXCEEDED',
          };
    deps.onProgress?.({ kind: 'knowledge', run_id: input.runId, persona: persona.id, action: request.action, status: result.status });
    results.push(result);
  }
  return results;
}

/** The user message for a step: the briefing (first time) or what happened since the persona last spoke, then the instruction. */
function composePrompt(
  input: DeliberationInput,
  ctx: { scheduled: ScheduledStep; steps: readonly Step[]; arbitration?: ArbitrationResult },
): string {
  const { scheduled, steps } = ctx;
  let lastOwn = -1;
  steps.forEach((s, i) => {
    if (s.persona === scheduled.persona) lastOwn = i;
  });
  const parts: string[] = [];
  if (lastOwn === -1) parts.push(input.briefing);
  const since = steps.slice(lastOwn + 1).flatMap(renderStepForOthers);
  if (since.length > 0) parts.push(`--- Since you last spoke ---\n${since.join('\n\n')}`);
  const summary = ctx.arbitration ? `${ctx.arbitration.final_action} — ${ctx.arbitration.reasoning}` : undefined;
  parts.push(stepInstruction({ kind: scheduled.kind, round: scheduled.round, rounds: input.plan.rounds }, summary));
  return parts.join('\n\n');
}

function renderStepForOthers(step: Step): string[] {
  const label = step.kind === 'verdict' ? `${step.persona} (verdict)` : step.kind === 'synthesis' ? `${step.persona} (synthesis)` : step.persona;
  return [`[${label}, round ${step.round}]\n${step.reply}`, ...step.knowledge.map((k) => renderKnowledgeResult(k, step.persona))];
}

function buildMessages(input: DeliberationInput, persona: Persona, steps: readonly Step[], prompt: string): ChatMessage[] {
  const history = input.histories.get(persona.id);
  let system = orchestratorSystemPrompt(persona, input.maxRequestsPerTurn);
  if (history?.summary) system += `\n\n--- Memory of earlier tasks ---\n${history.summary}`;
  const messages: ChatMessage[] = [{ role: 'system', content: system }, ...(history?.messages ?? [])];
  for (const s of steps) {
    if (s.persona !== persona.id) continue;
    messages.push({ role: 'user', content: s.prompt }, { role: 'assistant', content: s.reply });
  }
  messages.push({ role: 'user', content: prompt });
  return messages;
}

function sumUsage(
  a: { prompt_tokens: number; completion_tokens: number } | undefined,
  b: { prompt_tokens: number; completion_tokens: number } | undefined,
): { prompt_tokens: number; completion_tokens: number } | undefined {
  if (!a) return b;
  if (!b) return a;
  return { prompt_tokens: a.prompt_tokens + b.prompt_tokens, completion_tokens: a.completion_tokens + b.completion_tokens };
}

function collectVerdicts(steps: readonly Step[]): Verdict[] {
  return steps.filter((s) => s.kind === 'verdict').map((s) => parseVerdict(s.persona, s.reply));
}

function arbitrateVerdicts(input: DeliberationInput, steps: readonly Step[]): ArbitrationResult {
  const weights: Record<string, number> = {};
  const relevance: Record<string, number> = {};
  for (const id of input.plan.personas) {
    const p = input.personas.get(id);
    weights[id] = p?.weight ?? 1;
    relevance[id] = domainRelevance(p?.focus_domains ?? [], input.task);
  }
  return arbitrate({ strategy: input.plan.arbitration, verdicts: collectVerdicts(steps), weights, relevance });
}
