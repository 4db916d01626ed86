import type { DecisionRecord } from './decision.js';

/**
 * Why a run paused, as the loop policy sees it. Only a `judgement` — the council's doubt, a content
 * gate, a budget — says something about the task and counts towards the loop policy's pauses (plan
 * at 3, end of the conflict line at 4). An `outage` (a model route failed, a REROUTE was refused) or a
 * `setup` problem (a persona that does not exist, a missing input) says nothing about the task: it
 * never advances the count, so four outages of an endpoint do not seal a task.
 */
export type PauseClass = 'judgement' | 'outage' | 'setup';

const SETUP_REASONS: ReadonlySet<string> = new Set(['MEANING_UNKNOWN_PERSONA', 'MEANING_EMPTY_TASK', 'CONSISTENCY_INPUT_MISSING', 'SPEC_INVALID_INPUT', 'SPEC_MISSING_KEYS']);

export function pauseClass(decision: Pick<DecisionRecord, 'layer' | 'reason_code'>): PauseClass {
  if (decision.reason_code === 'BUDGET_EXCEEDED') return 'judgement';
  if (decision.layer === 'model' || decision.layer === 'reroute') return 'outage';
  if (SETUP_REASONS.has(decision.reason_code)) return 'setup';
  return 'judgement';
}
