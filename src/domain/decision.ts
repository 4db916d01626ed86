import { z } from 'zod';
import type { ReasonCode } from './codes.js';

export const DECISIONS = ['RUN', 'REROUTE', 'PAUSE_FOR_HITL', 'STOPPED', 'END_SESSION_RECOMMENDED'] as const;
export const Decision = z.enum(DECISIONS);
export type Decision = z.infer<typeof Decision>;

export const FinalDecider = z.enum(['SYSTEM', 'USER']);
export type FinalDecider = z.infer<typeof FinalDecider>;

/** Gates in the order every command passes them. */
export const GATE_LAYERS = ['mediator_advice', 'meaning', 'consistency', 'rfl', 'ethics', 'acc', 'dispatch'] as const;
/** Layers used during and after deliberation, and by the runtime around it. */
export const RUNTIME_LAYERS = [
  'validation',
  'deliberation',
  'knowledge',
  'model',
  'reroute',
  'arbitration',
  'hitl',
  'loop_policy',
  'artifact',
  'session',
  'audit',
  'queue',
] as const;
export const Layer = z.enum([...GATE_LAYERS, ...RUNTIME_LAYERS]);
export type Layer = z.infer<typeof Layer>;

/** A decision as every record carries it. */
export const DecisionRecord = z.strictObject({
  decision: Decision,
  reason_code: z.string().regex(/^[A-Z][A-Z0-9_]*$/),
  sealed: z.boolean(),
  overrideable: z.boolean(),
  final_decider: FinalDecider,
  layer: Layer,
});
export type DecisionRecord = z.infer<typeof DecisionRecord>;

/** The pipeline goes on. */
export function runDecision(layer: Layer, reason_code: ReasonCode): DecisionRecord {
  return { decision: 'RUN', reason_code, sealed: false, overrideable: false, final_decider: 'SYSTEM', layer };
}

/** Pause for a person: never sealed, always overrideable. */
export function pauseDecision(layer: Layer, reason_code: ReasonCode): DecisionRecord {
  return { decision: 'PAUSE_FOR_HITL', reason_code, sealed: false, overrideable: true, final_decider: 'SYSTEM', layer };
}

/** A sealed stop: only the ethics and access-control layers may issue one. */
export function sealedStopDecision(layer: 'ethics' | 'acc', reason_code: ReasonCode): DecisionRecord {
  return { decision: 'STOPPED', reason_code, sealed: true, overrideable: false, final_decider: 'SYSTEM', layer };
}

/** A person's decision on a pause (HITL_DECIDED). */
export function userDecision(decision: 'RUN' | 'STOPPED', reason_code: ReasonCode): DecisionRecord {
  return { decision, reason_code, sealed: false, overrideable: false, final_decider: 'USER', layer: 'hitl' };
}

/** An unsealed system stop (e.g. an internal error ended the run). */
export function systemStopDecision(layer: Layer, reason_code: ReasonCode): DecisionRecord {
  return { decision: 'STOPPED', reason_code, sealed: false, overrideable: false, final_decider: 'SYSTEM', layer };
}

/**
 * Invariants I1–I5 and I7 of the policy contract (I6, no sensitive content, is the sanitizer's).
 * Returns the broken ones as messages; empty means the record is sound.
 */
export function checkDecisionInvariants(r: DecisionRecord & { event?: string }): string[] {
  const broken: string[] = [];
  if (!(DECISIONS as readonly string[]).includes(r.decision)) broken.push(`I1: unknown decision "${r.decision}"`);
  if (r.sealed && r.layer !== 'ethics' && r.layer !== 'acc') broken.push(`I2: sealed on layer "${r.layer}"`);
  if (r.sealed && (r.decision !== 'STOPPED' || r.overrideable || r.final_decider !== 'SYSTEM')) {
    broken.push('I3: sealed requires STOPPED, overrideable false, final_decider SYSTEM');
  }
  if (r.decision === 'PAUSE_FOR_HITL' && (r.sealed || !r.overrideable)) broken.push('I4: PAUSE_FOR_HITL must be unsealed and overrideable');
  if (r.layer === 'rfl' && r.sealed) broken.push('I5: the rfl layer never seals');
  if (r.event === 'HITL_DECIDED' && (r.final_decider !== 'USER' || r.sealed || r.overrideable)) {
    broken.push('I7: HITL_DECIDED requires final_decider USER, sealed false, overrideable false');
  }
  return broken;
}

/**
 * The trail as people read it: a pause or a stop is said once. The gate's decision and the pause it
 * makes, or a person's stop and the ending it is, are one step, each on the record twice.
 */
export function trailSaidOnce(trail: readonly DecisionRecord[]): DecisionRecord[] {
  const same = (x: DecisionRecord, y: DecisionRecord | undefined) =>
    y !== undefined &&
    x.layer === y.layer &&
    x.decision === y.decision &&
    x.reason_code === y.reason_code &&
    x.final_decider === y.final_decider;
  return trail.filter((d, i) => !((d.decision === 'PAUSE_FOR_HITL' || d.decision === 'STOPPED') && same(d, trail[i - 1])));
}
