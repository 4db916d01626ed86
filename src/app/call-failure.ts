import { pauseDecision } from '../domain/decision.js';
import { BudgetExceededError, LlmError } from '../domain/errors.js';
import type { ReasonCode } from '../domain/codes.js';
import { describeModelFailure, modelFailureDetails } from '../domain/model-failure.js';
import type { AuditSink } from '../domain/ports.js';
import { finishRun, pauseRun } from './finish-run.js';
import { RerouteRefusedError } from './routed-llm.js';
import type { RunRecorder } from './run-recorder.js';
import type { RunDeps, RunOutcome } from './run-deps.js';

/** Reason codes for model failures that are not rerouted. */
const MODEL_FAILURE_REASONS: Partial<Record<string, ReasonCode>> = {
  quota: 'MODEL_QUOTA_EXCEEDED',
  auth: 'MODEL_AUTH_FAILED',
  cassette: 'MODEL_REPLAY_MISMATCH',
  bad_request: 'MODEL_BAD_REQUEST',
};

/**
 * A call could not be made or finished: a crossed budget, a refused REROUTE, a model failure. The
 * run pauses (or, for a sealed reroute refusal, stops) with a message a person can act on; the
 * steps that finished stay recorded. Anything else is a bug and goes on to the caller.
 */
export async function pauseForCallFailure(options: {
  error: unknown;
  run: RunRecorder;
  audit: AuditSink;
  deps: RunDeps;
  requestPlan: () => Promise<string>;
  /** The step whose call failed, when it is known (several run at once): named in the message and the record. */
  step?: { id: string; persona: string };
}): Promise<RunOutcome> {
  const { error, run, audit, deps, requestPlan } = options;
  const where = options.step ? ` (step ${options.step.id}, ${options.step.persona})` : '';
  const stepDetails = options.step ? { step_id: options.step.id, persona: options.step.persona } : {};
  if (error instanceof BudgetExceededError) {
    return pauseRun({ run, audit, deps, decision: pauseDecision('model', 'BUDGET_EXCEEDED'), message: `budget exceeded — ${error.message}`, details: { limit: error.exceeded.limit }, requestPlan });
  }
  if (error instanceof RerouteRefusedError) {
    const { decision } = error.outcome;
    const failure = error.cause instanceof LlmError ? error.cause : undefined;
    const message = `a model call${where} failed and REROUTE was refused (${error.outcome.condition ?? 'refused'}): ${error.outcome.detail}${failure ? `. The failure: ${describeModelFailure(failure)}` : ''}`;
    if (decision.decision === 'STOPPED') return finishRun({ run, audit, deps, decision, message });
    return pauseRun({ run, audit, deps, decision, message, details: { condition: error.outcome.condition ?? null, ...(failure ? modelFailureDetails(failure) : {}), ...stepDetails }, requestPlan });
  }
  if (!(error instanceof LlmError)) throw error;
  const decision = pauseDecision('model', MODEL_FAILURE_REASONS[error.kind] ?? 'MODEL_CALL_FAILED');
  return pauseRun({ run, audit, deps, decision, message: `a model call${where} failed: ${describeModelFailure(error)}`, details: { ...modelFailureDetails(error), ...stepDetails }, requestPlan });
}
