import type { AuditDetails } from '../domain/audit.js';
import { BudgetExceededError, LlmError } from '../domain/errors.js';
import { describeModelFailure, modelFailureDetails } from '../domain/model-failure.js';
import { decideRun, REROUTABLE_FAILURES, type Call, type Ending } from '../domain/run/policy.js';
import { RerouteRefusedError } from './routed-llm.js';

/** What a failed call means for the run: the policy's ending, the words for people, the record's fields. */
export interface CallFailure {
  readonly ending: Ending;
  readonly message: string;
  readonly details: AuditDetails;
}

/**
 * A call could not be made or finished — a crossed budget, a refused REROUTE, a model failure — as
 * the policy table decides it, on whichever call it happened (the mediator's classification, a turn,
 * a verdict, a supervisor decision, a work item, the reviewer, the synthesizer). The steps that
 * finished stay recorded. Anything else is not a call failure (undefined): a bug, for the caller.
 */
export function callFailure(error: unknown, call: Call, step?: { id: string; persona: string }): CallFailure | undefined {
  const where = step ? ` (step ${step.id}, ${step.persona})` : '';
  const stepDetails = step ? { step_id: step.id, persona: step.persona } : {};
  if (error instanceof BudgetExceededError) {
    return {
      ending: decideRun({ kind: 'budget_exceeded' }),
      message: `budget limit reached — ${error.message}`,
      details: { limit: error.exceeded.limit },
    };
  }
  if (error instanceof RerouteRefusedError) {
    const failure = error.cause instanceof LlmError ? error.cause : undefined;
    const { outcome } = error;
    const ending = decideRun({
      kind: 'route_failed',
      call,
      failure: failure?.kind ?? 'server',
      condition: outcome.condition ?? 'no_fallback_route',
    });
    const message = `a model call${where} failed and REROUTE was refused (${outcome.condition ?? 'refused'}): ${outcome.detail}${failure ? `. The failure: ${describeModelFailure(failure)}` : ''}`;
    return {
      ending,
      message,
      details: {
        condition: outcome.condition ?? null,
        ...(outcome.failed.length > 1 ? { conditions: [...outcome.failed] } : {}),
        ...(failure ? modelFailureDetails(failure) : {}),
        ...stepDetails,
      },
    };
  }
  if (!(error instanceof LlmError)) return undefined;
  // Not rerouted at all: the failure is of a kind never rerouted, or one client serves everyone.
  const condition = REROUTABLE_FAILURES.has(error.kind) ? 'not_routed' : 'not_reroutable';
  const ending = decideRun({ kind: 'route_failed', call, failure: error.kind, condition });
  return {
    ending,
    message: `a model call${where} failed: ${describeModelFailure(error)}`,
    details: { ...modelFailureDetails(error), ...stepDetails },
  };
}
