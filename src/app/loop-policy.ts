import { auditEvent } from '../domain/audit.js';
import { sealedStopDecision, type DecisionRecord, type Layer } from '../domain/decision.js';
import type { LoopEvent } from '../domain/loop-policy/events.js';
import { recordPause, recordPlan } from '../domain/loop-policy/workspace-loop.js';
import type { OpenRun, StartedRun } from '../domain/ports.js';
import type { PauseRecord, RunPlan, RunState } from '../domain/run-state.js';
import { runDecision } from '../domain/decision.js';
import { orchestratorSystemPrompt, planRequestPrompt } from '../domain/prompts.js';
import { redactSensitive } from '../domain/sensitive/detector.js';
import type { PreparedModels } from './prepare-models.js';
import { screenText } from '../domain/screen.js';
import type { RunDeps } from './run-deps.js';

/** The task as the conflict's digest reads it: lower case, white space folded. */
const normaliseTask = (task: string): string => task.toLowerCase().replace(/\s+/g, ' ').trim();

/**
 * The conflict a run belongs to: its `conflict_key`, else a digest of the normalised task. Both are
 * screened first: the fingerprint is kept (`.maestro/loop-policy.json`), and the command as given
 * and the one its checkpoint keeps must name the same conflict.
 */
export function conflictFingerprint(state: Pick<RunState, 'command'>, sha256: (s: string) => string): string {
  const key = state.command.config.conflict_key;
  return key !== undefined ? screenText(key) : `task:${sha256(normaliseTask(screenText(state.command.task_description))).slice(0, 16)}`;
}

export interface LoopPolicyOutcome {
  readonly count: number;
  /** The plan the synthesizer proposed at the third pause of this conflict. */
  readonly plan?: string;
  /** At the fourth pause: the sealed stop that ends this conflict line; on a line already stopped, the terminal guard's (ACC_STOPPED_IS_TERMINAL). */
  readonly stop?: DecisionRecord;
}

/**
 * Feeds one HITL pause to the Stage 3 loop policy: counts it (the pause id dedupes replays), runs the
 * plan flow once at three pauses, and at four recommends ending the session and issues a sealed stop.
 * A pause on a line already stopped is not counted: it is answered with the terminal guard's stop.
 */
export async function applyLoopPolicy(options: {
  state: RunState;
  pause: PauseRecord;
  deps: RunDeps;
  /** Where the loop policy's records go. */
  run: Pick<OpenRun, 'commit'>;
  requestPlan?: () => Promise<string>;
}): Promise<LoopPolicyOutcome> {
  const { state, pause, deps, run } = options;
  const fingerprint = conflictFingerprint(state, deps.sha256);
  const out = await deps.loopPolicy.update((data) => {
    const o = recordPause(data, {
      pauseId: pause.pause_id,
      runId: state.run_id,
      fingerprint,
      reasonCode: pause.reason_code,
      timestamp: pause.requested_at,
    });
    return { data: o.data, result: o };
  });
  if (out.events.length > 0) await run.commit({ records: out.events.map((e) => toAudit(e, out.count)) });

  let plan: string | undefined;
  if (out.dispatch && options.requestPlan) {
    const dispatch = out.dispatch;
    try {
      plan = await options.requestPlan();
    } catch (error) {
      plan = `(no plan: the synthesizer could not be asked — ${(error as Error).message})`;
    }
    const text = screenText(plan);
    plan = text;
    const events = await deps.loopPolicy.update((data) => {
      const r = recordPlan(data, dispatch, text);
      return { data: r.data, result: r.events };
    });
    if (events.length > 0) await run.commit({ records: events.map((e) => toAudit(e, out.count, text)) });
  }
  const guarded = out.stop?.reason_code === 'ACC_STOPPED_IS_TERMINAL';
  const stop = out.stop ? sealedStopDecision('acc', guarded ? 'ACC_STOPPED_IS_TERMINAL' : 'ACC_END_SESSION_AFTER_4_HITL') : undefined;
  return { count: out.count, ...(plan !== undefined ? { plan } : {}), ...(stop ? { stop } : {}) };
}

function toAudit(e: LoopEvent, count: number, plan?: string) {
  // Sealed records may only come from the acc layer (invariant I2); the rest are the loop policy's.
  const layer: Layer = e.sealed ? 'acc' : 'loop_policy';
  return auditEvent(
    e.kind,
    {
      decision: e.decision,
      reason_code: e.reason_code,
      sealed: e.sealed,
      overrideable: e.overrideable,
      final_decider: 'SYSTEM',
      layer,
    },
    {
      event_id: e.event_id,
      conflict_fingerprint: e.conflict_fingerprint,
      hitl_count: count,
      ...(plan !== undefined && e.kind === 'K_PLAN_PROPOSED' ? { plan_chars: plan.length } : {}),
    },
  );
}

/**
 * Asks the synthesizer for a plan (the loop policy's third pause of a conflict): a model call of the
 * run, screened, recorded and counted in its usage. It is one of the run's calls under its budget: when
 * the budget has no room for it (`budgetSpent` says why), it is not asked, and the plan says so.
 */
export function planRequester(options: {
  run: StartedRun;
  deps: RunDeps;
  models: Pick<PreparedModels, 'llm' | 'personas'>;
  plan: RunPlan;
  task: string;
  budgetSpent?: () => string | undefined;
}): () => Promise<string> {
  const { run, deps, models, plan, task } = options;
  return async () => {
    const synthesizer = models.personas.get(plan.synthesizer);
    if (!synthesizer) return '(no synthesizer persona to ask for a plan)';
    const spent = options.budgetSpent?.();
    if (spent) return `(no plan: the synthesizer was not asked, the run's budget is spent — ${spent})`;
    const messages = [
      { role: 'system' as const, content: orchestratorSystemPrompt(synthesizer, deps.config.knowledge.max_requests_per_turn) },
      {
        role: 'user' as const,
        // Screened whatever the workspace's PII policy: the pause may be the very gate that found it, before a person saw it.
        content: planRequestPrompt(
          redactSensitive(task).text,
          run.state.hitl.map((h) => h.reason_code),
        ),
      },
    ];
    const reply = await models.llm.complete(
      { messages },
      { persona: synthesizer.id, purpose: 'plan', step: 'plan', round: plan.rounds },
      deps.signal,
    );
    // What a model says is screened before it is kept (the checkpoint, hitl.json, the CLI).
    const screened = redactSensitive(reply.content);
    // Not a deliberation step, but a model call all the same: it goes on the record with its usage.
    const call = auditEvent('MODEL_CALL', runDecision('model', 'MODEL_CALL_OK'), {
      kind: 'plan',
      persona: synthesizer.id,
      model: reply.model,
      reply_sha256: deps.sha256(screened.text),
      reply_chars: screened.text.length,
      ...(screened.categories.length > 0 ? { reply_redacted: [...screened.categories] } : {}),
      ...(reply.usage ? { prompt_tokens: reply.usage.prompt_tokens, completion_tokens: reply.usage.completion_tokens } : {}),
    });
    // The call and its usage in the run's state: one commit.
    const counted = { model: reply.model, calls: 1, ...(reply.usage ? { usage: reply.usage } : {}) };
    await run.commit({ event: { type: 'plan_asked', call: counted }, records: [call] });
    return screened.text;
  };
}
