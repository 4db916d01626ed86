import { actionSupport } from './arbitration.js';
import { round, type Assessment } from './assessment.js';
import type { ComposedAssessment } from './composition.js';
import type { ModeContext, Conclusion } from './modes/mode.js';
import { orchestrationName } from './modes/parallel.js';
import { readModeSettings } from './modes/settings.js';
import type { Step } from './run-state.js';

/**
 * Seed 001's OrchestrationResult, machine-readable (`run --json`, `show --json`): the composed
 * assessment, each persona's assessment (or verdict), the final action and why, the strategies,
 * the agreement, the conflicts and the timing. Modes without assessments give their verdicts and a
 * null `composed_assessment`: nothing is made up.
 */
export interface OrchestrationResult {
  readonly run_id: string;
  readonly mode: string;
  readonly orchestration_strategy: string;
  readonly composition_strategy: string | null;
  readonly weighting: string | null;
  readonly arbitration_strategy: string;
  readonly personas_used: readonly string[];
  readonly composed_assessment: ComposedView | null;
  readonly persona_assessments: readonly PersonaView[];
  readonly final_action: string;
  readonly arbitration_reasoning: string;
  readonly arbitration_confidence: number;
  /** Share of the personas behind the most common action, whichever won (the seed's agreement score): not the final action's support. */
  readonly agreement_score: number;
  /** Share of the votes for the final action. */
  readonly final_action_support: number;
  readonly consensus_level: number;
  readonly conflicts_detected: readonly string[];
  readonly weights_used: Readonly<Record<string, number>>;
  readonly execution_time_seconds: number;
  readonly model_time_seconds: number;
  readonly timestamp: string | null;
}

type ComposedView = Pick<ComposedAssessment, 'vectors' | 'tiers' | 'weights' | 'flagged' | 'missing' | 'rationale' | 'method'> & {
  readonly tier_weights: ComposedAssessment['tier_weights'] | null;
};

interface PersonaView {
  readonly persona: string;
  readonly valid: boolean;
  readonly action: string;
  readonly confidence: number;
  readonly rationale: string;
  readonly problem?: string;
  readonly vectors?: Assessment['vectors'];
}

/** The orchestration result of a concluded (or paused) run, from its conclusion and its steps. */
export function orchestrationResult(ctx: ModeContext, done: readonly Step[], conclusion: Conclusion): OrchestrationResult {
  const settings = readModeSettings(ctx.plan.settings);
  const { arbitration } = conclusion;
  const composed = conclusion.composed;
  const people: PersonaView[] = conclusion.assessments
    ? conclusion.assessments.map((a) => ({ ...personaView(a), ...(a.vectors ? { vectors: a.vectors } : {}) }))
    : conclusion.verdicts.map(personaView);
  return {
    run_id: ctx.runId,
    mode: ctx.plan.mode,
    orchestration_strategy: orchestrationName(ctx.plan.mode),
    composition_strategy: composed ? composed.strategy : null,
    weighting: composed && composed.strategy === 'weighted_average' ? settings.weighting : null,
    arbitration_strategy: arbitration.strategy,
    personas_used: [...new Set(done.map((s) => s.persona))],
    composed_assessment: composed ? composedView(composed) : null,
    persona_assessments: people,
    final_action: arbitration.final_action,
    arbitration_reasoning: arbitration.reasoning,
    arbitration_confidence: round(arbitration.confidence),
    agreement_score: round(arbitration.agreement),
    final_action_support: round(actionSupport(arbitration).share),
    consensus_level: round(arbitration.consensus_level),
    conflicts_detected: [...arbitration.conflicts],
    weights_used: arbitration.weights_used,
    ...timing(done),
  };
}

function personaView(v: {
  persona: string;
  valid: boolean;
  action: string;
  confidence: number;
  rationale: string;
  problem?: string;
}): PersonaView {
  return {
    persona: v.persona,
    valid: v.valid,
    action: v.action,
    confidence: v.confidence,
    rationale: v.rationale,
    ...(v.problem ? { problem: v.problem } : {}),
  };
}

function composedView(c: ComposedAssessment): ComposedView {
  return {
    vectors: c.vectors,
    tiers: c.tiers,
    weights: c.weights,
    tier_weights: c.tier_weights ?? null,
    flagged: c.flagged,
    missing: c.missing,
    rationale: c.rationale,
    method: c.method,
  };
}

/** Wall time from the first call's start to the last call's end, and the calls' own time added up. */
function timing(done: readonly Step[]): Pick<OrchestrationResult, 'execution_time_seconds' | 'model_time_seconds' | 'timestamp'> {
  if (done.length === 0) return { execution_time_seconds: 0, model_time_seconds: 0, timestamp: null };
  const start = Math.min(...done.map((s) => Date.parse(s.started_at)));
  const end = Math.max(...done.map((s) => Date.parse(s.started_at) + s.duration_ms));
  const model = done.reduce((n, s) => n + s.duration_ms, 0);
  const ok = Number.isFinite(start) && Number.isFinite(end);
  return {
    execution_time_seconds: ok ? round((end - start) / 1000) : 0,
    model_time_seconds: round(model / 1000),
    timestamp: ok ? new Date(end).toISOString() : null,
  };
}
