import { auditEvent } from '../audit.js';
import type { ReasonCode } from '../codes.js';
import { runDecision } from '../decision.js';
import type { LoopProgress } from '../progress.js';
import type { Step } from '../run-state.js';
import type { ModeEvent } from './mode.js';
import { describeGuardrail, type Iteration, type LoopEnd, type LoopState } from './supervisor-loop.js';

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
  const found = step.id === it.decision.id ? decisionEvent(it, supervisor, loop.delegations) : it.noOp ? noOpEvent(it) : undefined;
  const guardrail = end?.kind === 'guardrail_stop' ? guardrailEvent(end) : undefined;
  // Each goes to the audit log (category-level: no model text) and, with the supervisor's words, to whoever follows the run.
  return [found, guardrail].flatMap((e) =>
    e
      ? [{ audit: auditEvent(e.event, runDecision('deliberation', e.reason), e.details), live: { iteration: it.n, supervisor, ...e.live } }]
      : [],
  );
}

interface LoopRecord {
  readonly event: Parameters<typeof auditEvent>[0];
  readonly reason: ReasonCode;
  readonly details: Record<string, unknown>;
  readonly live: Omit<LoopProgress, 'iteration' | 'supervisor'>;
}

/** What a decision did: delegated (seed 002's `loop.iteration_started`), ended the loop, could not be read, or named no specialist. */
function decisionEvent(it: Iteration, supervisor: string, delegations: number): LoopRecord | undefined {
  const n = it.n;
  const instruction = it.read?.instruction?.trim() ? { instruction: it.read.instruction.trim() } : {};
  switch (it.outcome) {
    case 'delegated': {
      const specialist = it.specialist ?? '';
      const live = {
        event: 'iteration_started',
        specialist,
        ...instruction,
        message: `iteration ${n}: ${supervisor} delegates to ${specialist}`,
      } as const;
      return { event: 'LOOP_ITERATION_STARTED', reason: 'LOOP_DELEGATED', details: { iteration: n, specialist }, live };
    }
    case 'stop':
    case 'respond': {
      const message = `iteration ${n}: ${supervisor} ends the loop (${it.outcome}) after ${delegations} delegation(s)`;
      const live = { event: 'iteration_stopped', reason: it.outcome, ...instruction, message } as const;
      return { event: 'LOOP_ITERATION_STOPPED', reason: 'LOOP_STOPPED_BY_SUPERVISOR', details: { iteration: n, reason: it.outcome }, live };
    }
    case 'unreadable': {
      const message = `iteration ${n}: the decision of ${supervisor} could not be read (${it.problem ?? 'unreadable'}); a person decides`;
      const live = { event: 'iteration_stopped', reason: 'unreadable_decision', message } as const;
      return {
        event: 'LOOP_ITERATION_STOPPED',
        reason: 'SUPERVISOR_DECISION_INVALID',
        details: { iteration: n, reason: 'unreadable_decision' },
        live,
      };
    }
    case 'invalid_target': {
      const consecutive = it.streak ?? 1;
      const message = `iteration ${n} named no valid specialist (${it.problem ?? 'invalid target'}); nothing was delegated`;
      return {
        event: 'LOOP_INVALID_TARGET',
        reason: 'LOOP_TARGET_INVALID',
        details: { iteration: n, consecutive },
        live: { event: 'invalid_target', consecutive, message },
      };
    }
    case 'over_limit':
      return undefined; // the guardrail's own record says it
  }
}

function noOpEvent(it: Iteration): LoopRecord {
  const consecutive = it.streak ?? 1;
  const specialist = it.specialist ?? '';
  const message = `the turn of ${specialist} in iteration ${it.n} brought nothing new`;
  return {
    event: 'LOOP_NO_OP_TURN',
    reason: 'LOOP_TURN_NO_OP',
    details: { iteration: it.n, specialist, consecutive },
    live: { event: 'no_op_turn', specialist, consecutive, message },
  };
}

function guardrailEvent(end: Extract<LoopEnd, { kind: 'guardrail_stop' }>): LoopRecord {
  return {
    event: 'LOOP_GUARDRAIL_STOP',
    reason: GUARDRAIL_REASONS[end.limit],
    details: { iteration: end.iteration, limit: end.limit, threshold: end.threshold },
    live: { event: 'guardrail_stop', limit: end.limit, threshold: end.threshold, message: `guardrail_stop — ${describeGuardrail(end)}` },
  };
}

export const GUARDRAIL_REASONS: Record<Extract<LoopEnd, { kind: 'guardrail_stop' }>['limit'], ReasonCode> = {
  max_iterations: 'LOOP_GUARDRAIL_MAX_ITERATIONS',
  invalid_targets: 'LOOP_GUARDRAIL_INVALID_TARGETS',
  no_op_turns: 'LOOP_GUARDRAIL_NO_OP_TURNS',
};
