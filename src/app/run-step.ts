import type { ChatMessage } from '../domain/chat.js';
import { LlmError } from '../domain/errors.js';
import { addUsage, splitPrompt } from '../domain/usage.js';
import { parseKnowledgeRequests } from '../domain/knowledge-request.js';
import type { StepSpec } from '../domain/modes/mode.js';
import type { Persona } from '../domain/persona.js';
import type { KnowledgeBase, LlmClient, LlmNotice, LlmReply, OnProgress, RouteWait } from '../domain/ports.js';
import { startCallClock, waitMessage } from './call-clock.js';
import type { KnowledgeResult, Step } from '../domain/run-state.js';
import { redactSensitive } from '../domain/sensitive/detector.js';

export interface StepRunnerDeps {
  readonly runId: string;
  readonly rounds: number;
  readonly llm: LlmClient;
  readonly knowledge: KnowledgeBase;
  readonly personas: ReadonlyMap<string, Persona>;
  readonly maxRequestsPerTurn: number;
  /** The task briefing (the task and its inputs): the part of a prompt counted as the task. */
  readonly briefing?: string;
  readonly now: () => Date;
  readonly sha256: (text: string) => string;
  readonly onProgress?: OnProgress;
  readonly signal?: AbortSignal;
  /** Per-call time limit (parallel mode); the call is aborted and fails as a timeout. */
  readonly timeoutMs?: number;
  /** Whether the budget has room for one more call (the question asked again), which it then holds; absent: always. */
  readonly mayAskAgain?: () => boolean;
}

/**
 * Makes one model call a mode asked for: the request (knowing nothing of its caller) with the
 * persona and step beside it; a structured reply that does not read is asked for once more with
 * the problem quoted; the reply is screened by the detector as it arrives (everything kept and
 * shown after this point sees the redacted form); knowledge requests in it are fulfilled.
 */
export async function runStep(spec: StepSpec, deps: StepRunnerDeps, withheld?: Step): Promise<Step> {
  const persona = deps.personas.get(spec.persona);
  if (!persona) throw new Error(`persona "${spec.persona}" is not loaded`);
  deps.onProgress?.({
    kind: 'step_started',
    run_id: deps.runId,
    step: spec.kind,
    step_id: spec.id,
    persona: persona.id,
    round: spec.round,
    rounds: deps.rounds,
  });
  const startedAt = deps.now();
  const answer = await askModel(spec, deps, persona, withheld);
  const durationMs = Math.max(0, deps.now().getTime() - startedAt.getTime());
  const screened = redactSensitive(answer.reply.content);
  const knowledge = spec.knowledge ? await fulfilRequests(deps, { persona, stepId: spec.id }, screened.text) : [];
  deps.onProgress?.({
    kind: 'step_finished',
    run_id: deps.runId,
    step: spec.kind,
    step_id: spec.id,
    persona: persona.id,
    reply: screened.text,
    model: answer.reply.model,
    duration_ms: durationMs,
  });
  const promptHash = deps.sha256(spec.messages.map((m) => `${m.role}\n${m.content}`).join('\n\u0000'));
  return finishedStep({ spec, persona, answer, screened, knowledge, promptHash, startedAt, durationMs });
}

/** What the model answered a step: its last reply, how many calls that took, and their usage and notices together. */
interface Answer {
  readonly reply: LlmReply;
  readonly calls: number;
  readonly usage: Step['usage'];
  readonly notices: readonly LlmNotice[];
  /** The reply did not read and the budget had no room to ask again. */
  readonly withheld?: true;
}

/** A reply's usage with where its prompt's tokens went. */
function splitUsage(messages: readonly ChatMessage[], reply: LlmReply, briefing: string | undefined): Step['usage'] {
  return reply.usage && { ...reply.usage, prompt_split: splitPrompt(messages, reply.usage.prompt_tokens, briefing) };
}

/**
 * The step's call, and once more with the problem quoted when the mode's check finds the reply does not
 * read — when the budget has room for that call; otherwise the answer says it was withheld. A step
 * whose question was withheld before (`withheld`) makes only the call asked again.
 */
async function askModel(spec: StepSpec, deps: StepRunnerDeps, persona: Persona, withheld?: Step): Promise<Answer> {
  const request = { messages: spec.messages, ...(spec.responseFormat ? { responseFormat: spec.responseFormat } : {}) };
  const call = {
    persona: persona.id,
    purpose: spec.purpose,
    step: spec.id,
    round: spec.round,
    ...(deps.onProgress
      ? { onText: (delta: string) => deps.onProgress?.({ kind: 'text', run_id: deps.runId, step_id: spec.id, persona: persona.id, delta }) }
      : {}),
  };
  const complete = (messages = spec.messages): Promise<LlmReply> =>
    withTimeout(deps, persona.id, (signal, onWait) => deps.llm.complete({ ...request, messages }, { ...call, onWait }, signal));
  const answer = withheld ? answerOf(withheld) : await firstAnswer(spec, deps, await complete());
  const first = spec.check?.(answer.reply.content);
  if (!first || first.ok) return answer;
  if (deps.mayAskAgain && !deps.mayAskAgain()) return { ...answer, withheld: true };
  const again: ChatMessage[] = [
    ...spec.messages,
    { role: 'assistant', content: answer.reply.content },
    { role: 'user', content: first.retryPrompt },
  ];
  const retry = await complete(again);
  return {
    reply: retry,
    calls: answer.calls + 1,
    usage: addUsage(answer.usage, splitUsage(again, retry, deps.briefing)),
    notices: [...answer.notices, ...(retry.notices ?? [])],
  };
}

/** The first call's answer. */
function firstAnswer(spec: StepSpec, deps: StepRunnerDeps, reply: LlmReply): Answer {
  return { reply, calls: 1, usage: splitUsage(spec.messages, reply, deps.briefing), notices: [...(reply.notices ?? [])] };
}

/** The answer a step whose question was withheld kept: its reply (screened as it arrived), calls and usage. */
function answerOf(step: Step): Answer {
  const identity = step.identity ?? { provider: 'unknown', model: step.model, rehearsal: false };
  return {
    reply: { content: step.reply, model: step.model, identity },
    calls: step.calls,
    usage: step.usage,
    notices: step.notices ?? [],
  };
}

/** The step as the run records it, its reply screened. */
function finishedStep(options: {
  spec: StepSpec;
  persona: Persona;
  answer: Answer;
  screened: ReturnType<typeof redactSensitive>;
  knowledge: KnowledgeResult[];
  promptHash: string;
  startedAt: Date;
  durationMs: number;
}): Step {
  const { spec, answer, screened } = options;
  return {
    id: spec.id,
    index: 0, // set when the step is recorded: its position in the order steps finished
    kind: spec.kind,
    persona: options.persona.id,
    round: spec.round,
    prompt: spec.prompt,
    prompt_sha256: options.promptHash,
    reply: screened.text,
    ...(screened.categories.length > 0 ? { redacted: [...screened.categories] } : {}),
    model: answer.reply.model,
    identity: { ...answer.reply.identity },
    started_at: options.startedAt.toISOString(),
    duration_ms: options.durationMs,
    ...(answer.usage ? { usage: answer.usage } : {}),
    calls: answer.calls,
    ...(answer.withheld ? { reask_withheld: true as const } : {}),
    knowledge: options.knowledge,
    ...(answer.notices.length > 0 ? { notices: [...answer.notices] } : {}),
  };
}

/**
 * A call with its own signal: linked to the run's, aborted after `timeoutMs` of the call's own time
 * when set (time spent waiting for its route's limits does not count). A wait is shown as a notice.
 */
async function withTimeout<T>(
  deps: StepRunnerDeps,
  persona: string,
  fn: (signal: AbortSignal | undefined, onWait: (wait: RouteWait | undefined) => void) => Promise<T>,
): Promise<T> {
  const clock = startCallClock({
    signal: deps.signal,
    timeoutMs: deps.timeoutMs,
    show: (wait) => {
      deps.onProgress?.({ kind: 'notice', run_id: deps.runId, message: waitMessage(persona, wait) });
      deps.onProgress?.({ kind: 'route_wait', run_id: deps.runId, persona, wait: { ...wait, since: deps.now().toISOString() } });
    },
    hide: () => deps.onProgress?.({ kind: 'route_wait', run_id: deps.runId, persona, wait: null }),
  });
  try {
    return await fn(clock.signal, clock.onWait);
  } catch (error) {
    if (clock.timedOut() && !deps.signal?.aborted) {
      throw new LlmError(`the call took longer than its per-call limit of ${deps.timeoutMs} ms (config.call_timeout_ms)`, true, undefined, {
        kind: 'timeout',
        limit: 'call_timeout_ms',
      });
    }
    throw error;
  } finally {
    clock.dispose();
  }
}

async function fulfilRequests(
  deps: StepRunnerDeps,
  asker: { persona: Persona; stepId: string },
  reply: string,
): Promise<KnowledgeResult[]> {
  const { persona } = asker;
  const results: KnowledgeResult[] = [];
  for (const [i, request] of parseKnowledgeRequests(reply).entries()) {
    const result: KnowledgeResult =
      i < deps.maxRequestsPerTurn
        ? await deps.knowledge.fulfil(request, persona)
        : {
            action: request.action,
            argument: request.argument,
            status: 'refused',
            message: `request limit reached (${deps.maxRequestsPerTurn} per reply)`,
            reason_code: 'KNOWLEDGE_LIMIT_EXCEEDED',
          };
    deps.onProgress?.({
      kind: 'knowledge',
      run_id: deps.runId,
      step_id: asker.stepId,
      persona: persona.id,
      action: request.action,
      argument: request.argument,
      status: result.status,
      reason_code: result.reason_code,
      ...(result.path ? { path: result.path } : {}),
      message: result.message,
    });
    results.push(result);
  }
  return results;
}
