import {
  GATE_LAYERS,
  pauseDecision,
  runDecision,
  sealedStopDecision,
  type DecisionRecord,
} from './decision.js';

type GateLayer = (typeof GATE_LAYERS)[number];

/** Everything the gates look at, gathered by the caller beforehand (the gates do no I/O). */
export interface GateFacts {
  readonly taskBlank: boolean;
  /** Persona ids the command names that do not exist. */
  readonly unknownPersonas: readonly string[];
  /** Input artifacts inside the workspace that are missing or unreadable. */
  readonly missingInputs: readonly { path: string; reason: string }[];
  /** Paths (output or input) that escape the workspace or hit a reserved area. */
  readonly pathEscapes: readonly { field: string; path: string; reason: string }[];
  /** Category names of personal data found in the task or its inputs. */
  readonly piiCategories: readonly string[];
  /** Category names of secrets found in the task or its inputs. */
  readonly secretCategories: readonly string[];
}

/** One gate's record: exactly one per gate, skipped gates included. */
export interface GateOutcome {
  readonly layer: GateLayer;
  readonly decision: DecisionRecord;
  readonly skipped: boolean;
  /** Category-level reasons (field names, counts, categories) — never task text. */
  readonly details: Record<string, unknown>;
}

export interface GateResult {
  readonly outcomes: readonly GateOutcome[];
  /** The decision that stands after the last gate: `RUN` only if every gate passed. */
  readonly decision: DecisionRecord;
}

type GateCheck = (facts: GateFacts) => { decision: DecisionRecord; details: Record<string, unknown> };

const CHECKS: Record<GateLayer, GateCheck> = {
  mediator_advice: () => ({ decision: runDecision('mediator_advice', 'MEDIATOR_NO_ADVICE'), details: {} }),
  meaning: (f) => {
    if (f.taskBlank) return { decision: pauseDecision('meaning', 'MEANING_EMPTY_TASK'), details: {} };
    if (f.unknownPersonas.length > 0) {
      return { decision: pauseDecision('meaning', 'MEANING_UNKNOWN_PERSONA'), details: { unknown_personas: [...f.unknownPersonas] } };
    }
    return { decision: runDecision('meaning', 'MEANING_OK'), details: {} };
  },
  consistency: (f) =>
    f.missingInputs.length > 0
      ? {
          decision: pauseDecision('consistency', 'CONSISTENCY_INPUT_MISSING'),
          details: { missing_inputs: f.missingInputs.map((m) => ({ path: m.path, reason: m.reason })) },
        }
      : { decision: runDecision('consistency', 'CONSISTENCY_OK'), details: {} },
  rfl: () => ({ decision: runDecision('rfl', 'REL_OK'), details: {} }),
  ethics: (f) => {
    if (f.secretCategories.length > 0) {
      return { decision: sealedStopDecision('ethics', 'ETHICS_SECRET_DETECTED'), details: { categories: [...f.secretCategories] } };
    }
    if (f.piiCategories.length > 0) {
      return { decision: sealedStopDecision('ethics', 'ETHICS_PII_DETECTED'), details: { categories: [...f.piiCategories] } };
    }
    return { decision: runDecision('ethics', 'ETHICS_OK'), details: {} };
  },
  acc: (f) =>
    f.pathEscapes.length > 0
      ? {
          decision: sealedStopDecision('acc', 'ACC_PATH_ESCAPE'),
          details: { escapes: f.pathEscapes.map((e) => ({ field: e.field, reason: e.reason })) },
        }
      : { decision: runDecision('acc', 'ACC_OK'), details: {} },
  dispatch: () => ({ decision: runDecision('dispatch', 'ORCH_RUN_OK'), details: {} }),
};

/**
 * Runs the gates in order. The first gate that does not say RUN decides; every later gate is still
 * recorded, as skipped, carrying that decision — so the audit trail always has one record per gate.
 */
export function evaluateGates(facts: GateFacts): GateResult {
  const outcomes: GateOutcome[] = [];
  let standing: DecisionRecord | undefined;
  for (const layer of GATE_LAYERS) {
    if (standing) {
      outcomes.push({ layer, decision: { ...standing, layer, sealed: false }, skipped: true, details: { decided_by: standing.layer } });
      continue;
    }
    const { decision, details } = CHECKS[layer](facts);
    outcomes.push({ layer, decision, skipped: false, details });
    if (decision.decision !== 'RUN') standing = decision;
  }
  return { outcomes, decision: standing ?? runDecision('dispatch', 'ORCH_RUN_OK') };
}
