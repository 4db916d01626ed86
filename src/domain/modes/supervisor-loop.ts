import { z } from 'zod';
import type { Step } from '../run-state.js';
import { containment, NOTHING_NEW } from '../novelty.js';
import { jsonSchemaOf, readStructured } from '../structured-reply.js';
import { clip, replyCheck } from './conversation.js';
import type { ReplyCheck } from './mode.js';

/**
 * The supervisor loop (seed 002) as a pure reading of the finished steps: which iteration the run
 * is in, what was decided, which guardrail (if any) ended it. Each iteration N is a decision step
 * `decision:i<N>` and, when it delegated to a valid specialist, that specialist's turn
 * `turn:i<N>:<persona>` — so a run paused inside iteration N resumes at N and nothing is asked twice.
 */

export const LOOP_ACTIONS = ['delegate', 'respond', 'stop'] as const;

/** The supervisor's decision as read: tolerant (missing or null target and instruction are fine here; the target is checked after). */
export const SupervisorDecision = z.strictObject({
  action: z.enum(LOOP_ACTIONS),
  target: z.string().max(200).nullish(),
  instruction: z.string().max(4_000).nullish(),
});
export type SupervisorDecision = z.infer<typeof SupervisorDecision>;

/** What is asked of endpoints with a JSON Schema (strict mode wants every key, so the optional ones are nullable). */
const DecisionWire = z.strictObject({ action: z.enum(LOOP_ACTIONS), target: z.string().nullable(), instruction: z.string().nullable() });
export const DECISION_SCHEMA = { name: 'supervisor_decision', schema: jsonSchemaOf(DecisionWire) };

export const DECISION_CONTRACT =
  '{"action": "delegate" | "respond" | "stop", "target": "<specialist id, for delegate>", "instruction": "<what the specialist should do; or your response, for respond>"}';

export function readDecision(reply: string): { ok: true; value: SupervisorDecision } | { ok: false; error: string } {
  const read = readStructured(reply, SupervisorDecision);
  return read.ok ? { ok: true, value: read.value } : { ok: false, error: read.error };
}

/** The step's check: a decision that does not read is asked for once more with the problem quoted. */
export function checkDecision(reply: string): ReplyCheck {
  const read = readDecision(reply);
  return replyCheck(
    read.ok ? undefined : read.error,
    (problem) => `That was not a valid decision (${problem}). Reply with ONE JSON object and nothing else: ${DECISION_CONTRACT}`,
  );
}

/** Which guardrail ended the loop. */
export type LoopLimit = 'max_iterations' | 'invalid_targets' | 'no_op_turns';
/** Seed 002's thresholds: two in a row. */
export const CONSECUTIVE_LIMIT = 2;

export type IterationOutcome = 'delegated' | 'invalid_target' | 'stop' | 'respond' | 'unreadable' | 'over_limit';

export interface Iteration {
  readonly n: number;
  readonly decision: Step;
  readonly outcome: IterationOutcome;
  /** The decision as read (absent when it could not be read). */
  readonly read?: SupervisorDecision;
  /** Why it could not be read, or why the target is not valid. */
  readonly problem?: string;
  /** The specialist delegated to (valid, within the limit). */
  readonly specialist?: string;
  /** The specialist's turn, once it is done. */
  readonly turn?: Step;
  /** The turn brought nothing new. */
  readonly noOp?: boolean;
  /** How many invalid targets / no-op turns in a row this iteration makes. */
  readonly streak?: number;
}

export type LoopEnd =
  | { readonly kind: 'stopped'; readonly by: 'stop' | 'respond' | 'person'; readonly iteration: number }
  | { readonly kind: 'guardrail_stop'; readonly limit: LoopLimit; readonly threshold: number; readonly iteration: number };

export type LoopPending =
  | { readonly kind: 'decision'; readonly n: number }
  | { readonly kind: 'turn'; readonly n: number; readonly specialist: string; readonly instruction: string }
  /** The decision of iteration n could not be read even when asked again: a person must decide (fail closed). */
  | { readonly kind: 'hold'; readonly n: number; readonly problem: string };

export interface LoopState {
  readonly iterations: readonly Iteration[];
  /** Specialist turns delegated so far. */
  readonly delegations: number;
  /** While the loop runs: what comes next. */
  readonly pending?: LoopPending;
  /** Once it is over: how it ended. */
  readonly end?: LoopEnd;
}

export interface LoopRules {
  readonly supervisor: string;
  /** The personas the supervisor may delegate to (the council without the supervisor). */
  readonly specialists: readonly string[];
  readonly maxIterations: number;
  /** A person continued past an unreadable decision: the loop ends there instead of pausing again. */
  readonly unreadableApproved: boolean;
}

export const decisionStepId = (n: number): string => `decision:i${n}`;
export const loopTurnId = (n: number, persona: string): string => `turn:i${n}:${persona}`;

/** Reads the loop from the finished steps (pure: the same steps give the same state). */
export function evaluateLoop(rules: LoopRules, done: readonly Step[]): LoopState {
  const byId = new Map(done.map((s) => [s.id, s]));
  const iterations: Iteration[] = [];
  let delegations = 0;
  let invalidStreak = 0;
  let noOpStreak = 0;
  const state = (more: { pending?: LoopPending; end?: LoopEnd }): LoopState => ({ iterations, delegations, ...more });
  for (let n = 1; ; n++) {
    const decision = byId.get(decisionStepId(n));
    if (!decision) return state({ pending: { kind: 'decision', n } });
    const read = readDecision(decision.reply);
    if (!read.ok) {
      iterations.push({ n, decision, outcome: 'unreadable', problem: read.error });
      if (rules.unreadableApproved) return state({ end: { kind: 'stopped', by: 'person', iteration: n } });
      return state({ pending: { kind: 'hold', n, problem: read.error } });
    }
    const { action } = read.value;
    if (action !== 'delegate') {
      iterations.push({ n, decision, outcome: action, read: read.value });
      return state({ end: { kind: 'stopped', by: action, iteration: n } });
    }
    const target = resolveTarget(rules, read.value.target);
    if (!target.ok) {
      invalidStreak += 1;
      iterations.push({ n, decision, outcome: 'invalid_target', read: read.value, problem: target.problem, streak: invalidStreak });
      if (invalidStreak >= CONSECUTIVE_LIMIT)
        return state({ end: { kind: 'guardrail_stop', limit: 'invalid_targets', threshold: CONSECUTIVE_LIMIT, iteration: n } });
      continue;
    }
    invalidStreak = 0;
    if (delegations >= rules.maxIterations) {
      iterations.push({ n, decision, outcome: 'over_limit', read: read.value, specialist: target.persona });
      return state({ end: { kind: 'guardrail_stop', limit: 'max_iterations', threshold: rules.maxIterations, iteration: n } });
    }
    delegations += 1;
    const turn = byId.get(loopTurnId(n, target.persona));
    if (!turn) {
      iterations.push({ n, decision, outcome: 'delegated', read: read.value, specialist: target.persona });
      return state({ pending: { kind: 'turn', n, specialist: target.persona, instruction: read.value.instruction?.trim() ?? '' } });
    }
    const noOp = isNoOpTurn(turn, done);
    noOpStreak = noOp ? noOpStreak + 1 : 0;
    iterations.push({
      n,
      decision,
      outcome: 'delegated',
      read: read.value,
      specialist: target.persona,
      turn,
      noOp,
      ...(noOp ? { streak: noOpStreak } : {}),
    });
    if (noOpStreak >= CONSECUTIVE_LIMIT)
      return state({ end: { kind: 'guardrail_stop', limit: 'no_op_turns', threshold: CONSECUTIVE_LIMIT, iteration: n } });
  }
}

/** A delegation's target: one of the specialists (case and spaces forgiven), never the supervisor itself. */
function resolveTarget(
  rules: LoopRules,
  target: string | null | undefined,
): { ok: true; persona: string } | { ok: false; problem: string } {
  const wanted = target?.trim().toLowerCase() ?? '';
  if (wanted === '') return { ok: false, problem: 'a delegation must name its target specialist' };
  if (wanted === rules.supervisor) return { ok: false, problem: 'the supervisor cannot delegate to itself' };
  const persona = rules.specialists.find((s) => s === wanted);
  if (!persona) return { ok: false, problem: `"${clip(target ?? '', 40)}" is not a specialist of this council` };
  return { ok: true, persona };
}

/**
 * A turn that brings nothing new (seed 002's no-op, as far as a conversation shows it): no knowledge
 * request, and no new content — an empty reply, or one that adds nothing over an earlier specialist
 * turn of the loop: at least `NOTHING_NEW` of its content words were already in that turn
 * (`containment`, novelty.ts), so a rephrasing counts as the repeat it is.
 */
export function isNoOpTurn(turn: Step, done: readonly Step[]): boolean {
  if (turn.knowledge.length > 0) return false;
  if (turn.reply.replace(/[^\p{L}\p{N}]/gu, '') === '') return true;
  return done.some((s) => s.id !== turn.id && s.kind === 'turn' && s.round < turn.round && containment(turn.reply, s.reply) >= NOTHING_NEW);
}

/** What a guardrail means, for people (the artifact, the CLI line). */
export function describeGuardrail(end: Extract<LoopEnd, { kind: 'guardrail_stop' }>): string {
  switch (end.limit) {
    case 'max_iterations':
      return `max_iterations: the supervisor delegated again after ${end.threshold} delegation(s) (the limit, config.max_iterations), at iteration ${end.iteration}`;
    case 'invalid_targets':
      return `invalid targets: ${end.threshold} delegations in a row named no valid specialist (iterations ${end.iteration - 1}–${end.iteration})`;
    case 'no_op_turns':
      return `no-op turns: ${end.threshold} specialist turns in a row brought nothing new (no new content, no knowledge request), up to iteration ${end.iteration}`;
  }
}
