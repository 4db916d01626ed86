import type { ReasonCode } from './codes.js';
import { GATE_LAYERS, pauseDecision, runDecision, sealedStopDecision, type DecisionRecord } from './decision.js';
import type { FloorFinding, FloorGate, FloorVerdict } from './floor/floor.js';
import { auditedReading, type FloorReading } from './floor/reading.js';

type GateLayer = (typeof GATE_LAYERS)[number];

/** What the workspace does when the task or its inputs hold personal data. */
export type PiiPolicy = 'stop' | 'pause' | 'redact';

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
  /**
   * The floor: what the task asks for and its context (perception and context, kept with the run),
   * and the allow rule's verdict on them with the workspace's acceptances. Absent only where no task
   * was read (a blank task).
   */
  readonly floor?: { readonly reading: FloorReading; readonly verdict: FloorVerdict };
  /** This conflict line was stopped by the loop policy (terminal guard). */
  readonly conflictStopped?: boolean;
  readonly piiPolicy?: PiiPolicy;
  /** Reason codes a person has cleared with `hitl decide continue` (never a sealed one). */
  readonly approved?: ReadonlySet<string>;
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

type Check = { decision: DecisionRecord; details: Record<string, unknown> };
type GateCheck = (facts: GateFacts) => Check;

const ok = (layer: GateLayer, reason: ReasonCode, details: Record<string, unknown> = {}): Check => ({
  decision: runDecision(layer, reason),
  details,
});

/** The floor's findings a gate pauses on: those of its layer that no acceptance covers. */
const open = (f: GateFacts, gate: FloorGate): FloorFinding[] =>
  (f.floor?.verdict.findings ?? []).filter((x) => x.gate === gate && !x.accepted);
const floorPause = (f: GateFacts, gate: FloorGate, reason: ReasonCode): Check | undefined => {
  const found = open(f, gate);
  return found.length > 0 ? { decision: pauseDecision(gate, reason), details: { floor: found.map((x) => x.label) } } : undefined;
};

const CHECKS: Record<GateLayer, GateCheck> = {
  // The floor's perception, recorded: advisory only, never pauses, seals or stops; the later gates act on it.
  mediator_advice: (f) => {
    if (!f.floor) return ok('mediator_advice', 'MEDIATOR_NO_ADVICE');
    const { reading, verdict } = f.floor;
    const details = {
      ...auditedReading(reading),
      proceeds: verdict.proceeds,
      findings: verdict.findings.map((x) => x.label),
      ...(verdict.acceptedBy.length > 0 ? { accepted_by: [...verdict.acceptedBy] } : {}),
      ...(f.piiCategories.length + f.secretCategories.length > 0 ? { advice: ['pii_or_secret_like_content'] } : {}),
    };
    if (verdict.findings.length > 0 || 'advice' in details) return ok('mediator_advice', 'MEDIATOR_ADVICE_NOTED', details);
    return ok('mediator_advice', reading.classified_by ? 'MEDIATOR_ADVICE_CLEAR' : 'MEDIATOR_NO_ADVICE', details);
  },
  meaning: (f) => {
    if (f.taskBlank) return { decision: pauseDecision('meaning', 'MEANING_EMPTY_TASK'), details: {} };
    if (f.unknownPersonas.length > 0) {
      return { decision: pauseDecision('meaning', 'MEANING_UNKNOWN_PERSONA'), details: { unknown_personas: [...f.unknownPersonas] } };
    }
    // A person's `continue` clears it: they read the task and let the council go on as it stands.
    return floorPause(f, 'meaning', 'MEANING_AMBIGUOUS_INTENT') ?? ok('meaning', 'MEANING_OK');
  },
  consistency: (f) =>
    f.missingInputs.length > 0
      ? {
          decision: pauseDecision('consistency', 'CONSISTENCY_INPUT_MISSING'),
          details: { missing_inputs: f.missingInputs.map((m) => ({ path: m.path, reason: m.reason })) },
        }
      : ok('consistency', 'CONSISTENCY_OK'),
  rfl: (f) => floorPause(f, 'rfl', 'REL_BOUNDARY_UNSTABLE') ?? ok('rfl', 'REL_OK'),
  ethics: (f) => {
    const policy = f.piiPolicy ?? 'stop';
    if (f.secretCategories.length > 0) {
      return { decision: sealedStopDecision('ethics', 'ETHICS_SECRET_DETECTED'), details: { categories: [...f.secretCategories] } };
    }
    if (f.piiCategories.length > 0 && policy !== 'redact') {
      const decision =
        policy === 'pause' ? pauseDecision('ethics', 'ETHICS_PII_DETECTED') : sealedStopDecision('ethics', 'ETHICS_PII_DETECTED');
      return { decision, details: { categories: [...f.piiCategories] } };
    }
    const stakes = floorPause(f, 'ethics', 'ETHICS_HIGH_STAKES');
    if (stakes) return stakes;
    return ok(
      'ethics',
      f.piiCategories.length > 0 ? 'ETHICS_PII_REDACTED' : 'ETHICS_OK',
      f.piiCategories.length > 0 ? { categories: [...f.piiCategories] } : {},
    );
  },
  acc: (f) => {
    if (f.pathEscapes.length > 0) {
      return {
        decision: sealedStopDecision('acc', 'ACC_PATH_ESCAPE'),
        details: { escapes: f.pathEscapes.map((e) => ({ field: e.field, reason: e.reason })) },
      };
    }
    if (f.conflictStopped) return { decision: sealedStopDecision('acc', 'ACC_STOPPED_IS_TERMINAL'), details: {} };
    return floorPause(f, 'acc', 'ACC_EXTERNAL_SIDE_EFFECT_REQUIRES_HITL') ?? ok('acc', 'ACC_OK');
  },
  dispatch: () => ok('dispatch', 'ORCH_RUN_OK'),
};

/**
 * Pauses whose cause makes a deliberation impossible — an empty task, a persona that does not
 * exist — are not waived by a person's `continue` (a missing input is: the council can go on
 * without it). They are checked afresh on resume; if the cause still holds the run pauses again
 * with the same reason, and once it is fixed (the persona file added) it passes.
 */
const FACTS_NOT_WAIVED: ReadonlySet<ReasonCode> = new Set(['MEANING_EMPTY_TASK', 'MEANING_UNKNOWN_PERSONA']);

/**
 * Runs the gates in order. The first gate that does not say RUN decides; every later gate is still
 * recorded, as skipped, carrying that decision — so the audit trail always has one record per gate.
 * A pause a person already cleared passes (recorded as approved); a sealed stop can never be cleared.
 * One exception: the loop policy's terminal guard outranks an earlier gate's pause. A command on a
 * stopped conflict line is stopped at once, whatever it says (loop-policy.md: every later event gets
 * the guard's STOPPED); a pause there would count towards a line already ended, and a person could
 * only `continue` it into that stop.
 */
export function evaluateGates(facts: GateFacts): GateResult {
  const outcomes: GateOutcome[] = [];
  let standing: DecisionRecord | undefined;
  for (const layer of GATE_LAYERS) {
    // Only on a stopped line is a gate asked after an earlier one objected (and only the acc gate, whose guard it is).
    const outranks = layer === 'acc' && facts.conflictStopped === true && standing?.decision === 'PAUSE_FOR_HITL';
    if (standing && !outranks) {
      outcomes.push({ layer, decision: { ...standing, layer, sealed: false }, skipped: true, details: { decided_by: standing.layer } });
      continue;
    }
    let { decision, details } = CHECKS[layer](facts);
    if (
      decision.decision === 'PAUSE_FOR_HITL' &&
      facts.approved?.has(decision.reason_code) &&
      !FACTS_NOT_WAIVED.has(decision.reason_code as ReasonCode)
    ) {
      details = { ...details, approved_by_person: decision.reason_code };
      decision = runDecision(layer, decision.reason_code as ReasonCode);
    }
    outcomes.push({ layer, decision, skipped: false, details });
    if (decision.decision !== 'RUN') standing = decision;
  }
  return { outcomes, decision: standing ?? runDecision('dispatch', 'ORCH_RUN_OK') };
}

/**
 * Every gate's own finding, each checked on its own (not only the first that stops): what
 * `maestro validate` reports so a person can fix them all at once. Pauses a person already cleared pass.
 */
export function findGateIssues(facts: GateFacts): GateOutcome[] {
  const issues: GateOutcome[] = [];
  for (const layer of GATE_LAYERS) {
    // A gate stops at its first cause; asked again without it, it names the next (a secret and an e-mail in one file: both).
    for (let f: GateFacts | undefined = facts; f; ) {
      const { decision, details } = CHECKS[layer](f);
      if (decision.decision === 'RUN') break;
      const cleared = facts.approved?.has(decision.reason_code) && !FACTS_NOT_WAIVED.has(decision.reason_code as ReasonCode);
      if (decision.decision !== 'PAUSE_FOR_HITL' || !cleared) issues.push({ layer, decision, skipped: false, details });
      f = WITHOUT_CAUSE[decision.reason_code as ReasonCode]?.(f);
    }
  }
  return issues;
}

/** The facts with one gate's cause taken away, to see what the gate finds next; none for the floor, each gate's last check. */
const WITHOUT_CAUSE: Partial<Record<ReasonCode, (f: GateFacts) => GateFacts>> = {
  MEANING_EMPTY_TASK: (f) => ({ ...f, taskBlank: false }),
  MEANING_UNKNOWN_PERSONA: (f) => ({ ...f, unknownPersonas: [] }),
  ETHICS_SECRET_DETECTED: (f) => ({ ...f, secretCategories: [] }),
  ETHICS_PII_DETECTED: (f) => ({ ...f, piiCategories: [] }),
  ACC_PATH_ESCAPE: (f) => ({ ...f, pathEscapes: [] }),
  ACC_STOPPED_IS_TERMINAL: (f) => ({ ...f, conflictStopped: false }),
};

/**
 * What the REROUTE table asks of a task, from the gates' facts: is it in a policy-sensitive category
 * (personal data, secrets, a high-stakes case, an act in the world — stricter than seed 000, which
 * names the first three), and is its intent ambiguous (a boundary ask, an unclear request).
 */
export function taskSensitivity(f: GateFacts): { policySensitive: boolean; ambiguous: boolean } {
  const found = f.floor?.verdict.findings ?? [];
  return {
    // Accepted or not: an acceptance lets a run go on, never lets it move to another route.
    policySensitive: f.piiCategories.length + f.secretCategories.length > 0 || found.some((x) => x.gate === 'ethics' || x.gate === 'acc'),
    ambiguous: found.some((x) => x.gate === 'meaning' || x.gate === 'rfl'),
  };
}

/**
 * The gates' records when something before them decided (the mediator's call failed, or met a
 * sealed refusal): every gate still writes its one record, as skipped, carrying that decision.
 */
export function skippedGates(decision: DecisionRecord): GateOutcome[] {
  return GATE_LAYERS.map((layer) => ({
    layer,
    decision: { ...decision, layer, sealed: false },
    skipped: true,
    details: { decided_by: decision.layer },
  }));
}
