import { auditEvent } from '../audit.js';
import type { ReasonCode } from '../codes.js';
import { runDecision } from '../decision.js';
import type { LoopProgress } from '../progress.js';
import type { Step } from '../run-state.js';
import type { ModeEvent } from './mode.js';
import { describeGuardrail, type LoopEnd, type LoopState } from './supervisor-loop.js';

/**
 * What the supervisor loop puts on the record as a step is recorded: seed 002's loop events
 * (`LOOP_ITERATION_STARTED`, `LOOP_ITERATION_STOPPED`, `LOOP_GUARDRAIL_STOP`) and each step towards a
 * guardrail, in the audit log (category-level: no model text) and, with the supervisor's words, to
 * whoever follows the run (`--follow`, `--follow --json`).
 */
export function loopEvents(supervisor: string, loop: LoopState, step: Step): ModeEvent[] {
  const it = loop.iterations.find((i) => i.decision.id === step.id || i.turn?.id === step.id);
  if (!it) return [];
  const end = loop.end?.iteration === it.n ? loop.end : undefined;
  const events: ModeEvent[] = [];
  // Each record goes to the audit log (category-level: no model text) and to whoever follows the run.
  const record = (
    event: Parameters<typeof auditEvent>[0],
    reason: ReasonCode,
    details: Record<string, unknown>,
    live: Omit<LoopProgress, 'iteration' | 'supervisor'>,
  ): void => {
    events.push({ audit: auditEvent(event, runDecision('deliberation', reason), details), live: { iteration: it.n, supervisor, ...live } });
  };
  const instruction = it.read?.instruction?.trim() ? { instruction: it.read.instruction.trim() } : {};
  if (step.id === it.decision.id) {
    if (it.outcome === 'delegated' && it.specialist)
      record(
        'LOOP_ITERATION_STARTED',
        'LOOP_DELEGATED',
        { iteration: it.n, specialist: it.specialist },
        {
          event: 'iteration_started',
          specialist: it.specialist,
          ...instruction,
          message: `iteration ${it.n}: ${supervisor} delegates to ${it.specialist}`,
        },
      );
    if (it.outcome === 'stop' || it.outcome === 'respond')
      record(
        'LOOP_ITERATION_STOPPED',
        'LOOP_STOPPED_BY_SUPERVISOR',
        { iteration: it.n, reason: it.outcome },
        {
          event: 'iteration_stopped',
          reason: it.outcome,
          ...instruction,
          message: `iteration ${it.n}: ${supervisor} ends the loop (${it.outcome}) after ${loop.delegations} delegation(s)`,
        },
      );
    if (it.outcome === 'unreadable')
      record(
        'LOOP_ITERATION_STOPPED',
        'SUPERVISOR_DECISION_INVALID',
        { iteration: it.n, reason: 'unreadable_decision' },
        {
          event: 'iteration_stopped',
          reason: 'unreadable_decision',
          message: `iteration ${it.n}: the decision of ${supervisor} could not be read (${it.problem ?? 'unreadable'}); a person decides`,
        },
      );
    if (it.outcome === 'invalid_target')
      record(
        'LOOP_INVALID_TARGET',
        'LOOP_TARGET_INVALID',
        { iteration: it.n, consecutive: it.streak ?? 1 },
        {
          event: 'invalid_target',
          consecutive: it.streak ?? 1,
          message: `iteration ${it.n} named no valid specialist (${it.problem ?? 'invalid target'}); nothing was delegated`,
        },
      );
  } else if (it.noOp) {
    record(
      'LOOP_NO_OP_TURN',
      'LOOP_TURN_NO_OP',
      { iteration: it.n, specialist: it.specialist, consecutive: it.streak ?? 1 },
      {
        event: 'no_op_turn',
        ...(it.specialist ? { specialist: it.specialist } : {}),
        consecutive: it.streak ?? 1,
        message: `the turn of ${it.specialist} in iteration ${it.n} brought nothing new`,
      },
    );
  }
  if (end?.kind === 'guardrail_stop') {
    record(
      'LOOP_GUARDRAIL_STOP',
      GUARDRAIL_REASONS[end.limit],
      { iteration: end.iteration, limit: end.limit, threshold: end.threshold },
      { event: 'guardrail_stop', limit: end.limit, threshold: end.threshold, message: `guardrail_stop — ${describeGuardrail(end)}` },
    );
  }
  return events;
}

export const GUARDRAIL_REASONS: Record<Extract<LoopEnd, { kind: 'guardrail_stop' }>['limit'], ReasonCode> = {
  max_iterations: 'LOOP_GUARDRAIL_MAX_ITERATIONS',
  invalid_targets: 'LOOP_GUARDRAIL_INVALID_TARGETS',
  no_op_turns: 'LOOP_GUARDRAIL_NO_OP_TURNS',
};
