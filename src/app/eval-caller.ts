import { councilTask, readAnswer, SAMPLE_FORMAT, sampleMessages } from '../domain/eval/answer.js';
import type { EvalCaller } from '../domain/eval/ports.js';
import type { CouncilLine, EvalMode, SampleLine } from '../domain/eval/results.js';
import type { EvalItem } from '../domain/eval/task-sets.js';
import { InvalidInputError, LlmError } from '../domain/errors.js';
import { emptyLoopPolicy, type LoopPolicyData } from '../domain/loop-policy/workspace-loop.js';
import type { CallContext, LlmClient, LlmReply, LlmRequest, LoopPolicyStore, ModelRoutes, SessionStore } from '../domain/ports.js';
import type { ResolvedRoute } from '../domain/route.js';
import { emptySessionState } from '../domain/session-state.js';
import { totalUsage } from '../domain/usage.js';
import { processCommand } from './process-command.js';
import type { RunDeps } from './run-deps.js';

/** The calls one piece of eval work made, as the replies told them. */
class CallTally {
  readonly replies: { model: string; usage?: { prompt_tokens: number; completion_tokens: number } }[] = [];
  /** The first call that failed after its route's retries (a council run pauses on it; the eval stops on it). */
  failure: LlmError | undefined;

  wrap(inner: LlmClient): LlmClient {
    return {
      label: inner.label,
      rehearsal: inner.rehearsal,
      complete: async (request: LlmRequest, call: CallContext, signal?: AbortSignal): Promise<LlmReply> => {
        try {
          const reply = await inner.complete(request, call, signal);
          this.replies.push({ model: reply.model, ...(reply.usage ? { usage: reply.usage } : {}) });
          return reply;
        } catch (error) {
          if (error instanceof LlmError) this.failure ??= error;
          throw error;
        }
      },
    };
  }

  /** Calls, tokens and cost (cost only when every model has a price; the offline model is free). */
  totals(prices: RunDeps['config']['prices']): Pick<SampleLine, 'calls' | 'prompt_tokens' | 'completion_tokens' | 'cost_usd'> {
    const usage = totalUsage(
      this.replies.map((r) => ({ persona: '', ...r })),
      prices,
    );
    return {
      calls: usage.calls,
      prompt_tokens: usage.prompt_tokens,
      completion_tokens: usage.completion_tokens,
      ...(usage.cost_usd !== undefined ? { cost_usd: usage.cost_usd } : {}),
    };
  }
}

/** Routes whose clients are counted: the same clients (and so the same route limits), seen through a tally. */
function countedRoutes(models: ModelRoutes, tally: CallTally): ModelRoutes {
  return {
    routeIdFor: (persona) => models.routeIdFor(persona),
    resolve: (id) => models.resolve(id),
    clientFor: (route) => tally.wrap(models.clientFor(route)),
  };
}

/**
 * Persona memory off: every council run of an eval starts with an empty memory and leaves none, so
 * one question's deliberation never leaks into the next (and nothing lands in a persona's history).
 */
export const NO_MEMORY: SessionStore = {
  load: async (personaId) => ({ state: emptySessionState(personaId, new Date(0).toISOString()) }),
  appendRun: async () => undefined,
  recallArchive: async () => [],
  update: async () => undefined,
};

/**
 * Loop policy off: every council run of an eval starts with no earlier pauses. The same question is
 * asked of every mode, so in one shared policy the third mode's pause on an item would be the third of
 * its conflict (a plan call, counted in that mode's calls) and a fourth would seal the run.
 */
function loopPolicyOfOneRun(sessionId: string, now: string): LoopPolicyStore {
  let data: LoopPolicyData = emptyLoopPolicy(sessionId, now);
  let queue: Promise<unknown> = Promise.resolve();
  return {
    read: async () => data,
    // One update at a time, as under the files' lock.
    update<T>(fn: (current: LoopPolicyData) => { data: LoopPolicyData; result: T }): Promise<T> {
      const next = queue.then(() => {
        const out = fn(data);
        data = out.data;
        return out.result;
      });
      queue = next.catch(() => undefined);
      return next;
    },
  };
}

/**
 * The eval's model calls, through the council's own route clients: a sample is one call on the
 * eval's route; a council run is `processCommand` on a command made from the question, with its
 * answer read from the typed `answer` field of the synthesis.
 */
export function evalCaller(options: EvalCallerOptions): EvalCaller {
  return {
    sample: (item, index, signal) => askSample(options, item, index, signal),
    council: (item, mode, signal) => askCouncil(options, item, mode, signal),
  };
}

/** What {@link evalCaller} asks through: the run's dependencies, the eval's route, the council's rounds. */
export interface EvalCallerOptions {
  deps: RunDeps;
  routeId: string;
  rounds?: number;
}

/** One sample: one call on the eval's route (resolved only when no override client serves every call). */
async function askSample(options: EvalCallerOptions, item: EvalItem, index: number, signal?: AbortSignal): Promise<SampleLine> {
  const { deps } = options;
  const route = (): ResolvedRoute => {
    const resolved = deps.models.resolve(options.routeId);
    if ('error' in resolved) throw new InvalidInputError('--route', [resolved.error]);
    return resolved;
  };
  const tally = new CallTally();
  const client = tally.wrap(deps.llm ?? deps.models.clientFor(route()));
  const reply = await client.complete(
    { messages: sampleMessages(item.question), responseFormat: SAMPLE_FORMAT },
    { persona: 'eval', purpose: 'turn', step: `eval:sample:${index}`, round: 0 },
    signal,
  );
  signal?.throwIfAborted();
  const read = readAnswer(reply.content);
  return {
    kind: 'sample',
    item: item.id,
    index,
    ...('answer' in read ? { answer: read.answer } : { problem: clip(read.problem) }),
    ...tally.totals(deps.config.prices),
  };
}

/** One council run on a command made from the question, its calls counted, with no memory and no earlier pauses. */
async function askCouncil(options: EvalCallerOptions, item: EvalItem, mode: EvalMode, signal?: AbortSignal): Promise<CouncilLine> {
  const { deps } = options;
  const tally = new CallTally();
  const runDeps: RunDeps = {
    ...deps,
    models: countedRoutes(deps.models, tally),
    ...(deps.llm ? { llm: tally.wrap(deps.llm) } : {}),
    sessions: NO_MEMORY,
    loopPolicy: loopPolicyOfOneRun(`S-eval-${item.id}-${mode}`, deps.clock.now().toISOString()),
    ...(signal ? { signal } : {}),
  };
  const command = {
    task_description: councilTask(item.question),
    config: { mode, ...(options.rounds ? { max_rounds: options.rounds } : {}) },
  };
  const outcome = await processCommand({ text: JSON.stringify(command), source: `eval/${item.id}/${mode}` }, runDeps);
  // A run cut short by a cancel is not a result: the resumed eval asks this item again.
  signal?.throwIfAborted();
  // Nor is one an outage ended: a broken endpoint stops the eval, as a sample's failed call does, not scored as a wrong answer.
  if (outcome.status !== 'completed' && tally.failure) throw tally.failure;
  // Only a completed run delivers its proposal: one that paused or stopped (policy, an outage, a
  // guardrail) has given no answer, whatever its synthesis said.
  const synthesis =
    outcome.status === 'completed' ? (await deps.ledger.load(outcome.run_id))?.steps.find((s) => s.kind === 'synthesis') : undefined;
  const read = synthesis
    ? readAnswer(synthesis.reply)
    : { problem: `the run ended ${outcome.status} (${outcome.reason_code}) without a completed synthesis` };
  return {
    kind: 'council',
    item: item.id,
    mode,
    run_id: outcome.run_id,
    status: outcome.status,
    reason_code: outcome.reason_code,
    ...('answer' in read ? { answer: read.answer } : { problem: clip(read.problem) }),
    ...tally.totals(deps.config.prices),
  };
}

const clip = (text: string): string => (text.length > 500 ? `${text.slice(0, 497)}...` : text);
