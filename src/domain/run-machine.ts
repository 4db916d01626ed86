import type { ArtifactPlacement } from './artifact-place.js';
import type { DecisionRecord } from './decision.js';
import { allows } from './run/transitions.js';
import type { MediatorReading } from './floor/mediator.js';
import type { FloorRecord } from './floor/record.js';
import type { DeliberationMode, ModeContext, ModeNext } from './modes/mode.js';
import type { PauseRecord, RunPlan, RunState, RunStatus, Step } from './run-state.js';
import { screenText } from './screen-text.js';

/**
 * The run as an explicit state machine. Everything that changes a run's checkpoint is one of these
 * events, applied by `applyRunEvent` — the only function that writes a run's state; `nextStep` says
 * what the engine does next; `buildOutcome` turns an ended (or paused) state into what the CLI and
 * the watcher report.
 */
export type RunEvent =
  /** The plan is fixed (first start) and the gates' decisions join the trail. */
  /** The gates' decisions and the plan they let through, with the mediator's advice they weighed when it was asked for this plan. */
  | {
      readonly type: 'planned';
      readonly plan: RunPlan;
      readonly trail: readonly DecisionRecord[];
      readonly advice?: MediatorReading;
      readonly classification?: RunState['classification'];
      readonly floor?: FloorRecord;
    }
  /** The mediator's classification, kept so a resume does not ask again (journals of earlier versions; now it comes with `planned`). */
  | { readonly type: 'advised'; readonly advice: MediatorReading }
  /** A model call finished; it is never made again. */
  | { readonly type: 'step_recorded'; readonly step: Step }
  /** The loop policy's plan was asked for (a model call of the orchestrator's): counted in the run's usage. */
  | { readonly type: 'plan_asked'; readonly call: NonNullable<RunState['plan_call']> }
  /** A failed route moved to its fallback for the rest of the run. */
  | { readonly type: 'rerouted'; readonly reroute: RunState['reroutes'][number]; readonly decision: DecisionRecord }
  /** A decision that joins the trail without changing the status (arbitration that lets the run go on). */
  | { readonly type: 'decided'; readonly decision: DecisionRecord }
  /** The run paused for a person. */
  | {
      readonly type: 'paused';
      readonly decision: DecisionRecord;
      readonly pause: PauseRecord;
      readonly summary: string;
      readonly loopPlan?: string;
    }
  /** A person decided the current pause (`continue` resumes, `stop` is followed by `finishing`/`finished`). */
  | { readonly type: 'person_decided'; readonly entry: RunState['hitl'][number]; readonly decision: DecisionRecord }
  /** The ending is fixed before anything is written, so a crash completes the same ending. */
  | {
      readonly type: 'finishing';
      readonly finishedAt: string;
      readonly decision: DecisionRecord;
      readonly status?: 'stopped' | 'guardrail_stopped';
      /** The arbitration's decision that let the run go on, joining the trail with the ending (one commit, not two). */
      readonly decided?: DecisionRecord;
      /** Where the artifact goes, when the ending writes one. */
      readonly artifact?: ArtifactPlacement;
    }
  /** The run ended: completed, stopped, or invalid (set-up problems). */
  | {
      readonly type: 'finished';
      readonly status: Extract<RunStatus, 'completed' | 'stopped' | 'guardrail_stopped' | 'invalid'>;
      readonly decision: DecisionRecord;
      readonly finishedAt: string;
      readonly summary: string;
      readonly artifact?: string;
    }
  /** A failure ended the run (storage, or a bug); a storage failure can be resumed. */
  | { readonly type: 'failed'; readonly decision: DecisionRecord; readonly at: string; readonly summary: string }
  /** Taken up again after a storage failure. */
  | { readonly type: 'revived' };

/**
 * Applies one event to a run's state. Pure: the caller saves what it returns. An event the life
 * cycle does not allow for the run's status (run/transitions.ts) is refused: a bug, not an input.
 */
export function applyRunEvent(state: RunState, event: RunEvent, now: string): RunState {
  if (!allows(state.status, event.type)) throw new Error(`a ${state.status} run cannot take a "${event.type}" event (run ${state.run_id})`);
  const next = apply(state, event);
  return { ...next, updated_at: now };
}

/** What each event does to the state: one switch over the event types, which reads better whole (one case per event, side by side). */
function apply(state: RunState, event: RunEvent): RunState {
  switch (event.type) {
    case 'planned':
      return {
        ...state,
        ...(event.advice ? { advice: event.advice } : {}),
        ...(event.classification ? { classification: event.classification } : {}),
        ...(event.floor ? { floor: event.floor } : {}),
        plan: state.plan ?? event.plan,
        trail: [...state.trail, ...event.trail],
      };
    case 'advised':
      return { ...state, advice: event.advice };
    case 'step_recorded':
      return { ...state, steps: withStep(state.steps, event.step) };
    case 'plan_asked':
      return { ...state, plan_call: event.call };
    case 'rerouted':
      return { ...state, reroutes: [...state.reroutes, event.reroute], trail: [...state.trail, event.decision] };
    case 'decided':
      return { ...state, trail: [...state.trail, event.decision] };
    case 'paused':
      return {
        ...state,
        status: 'paused',
        decision: event.decision,
        pause: event.pause,
        trail: [...state.trail, event.decision],
        summary: event.summary,
        ...(event.loopPlan !== undefined ? { loop_plan: event.loopPlan } : {}),
      };
    case 'person_decided': {
      const base = { ...state, hitl: [...state.hitl, event.entry], trail: [...state.trail, event.decision] };
      if (event.entry.decision !== 'continue') return base;
      const { pause: _cleared, ...rest } = base;
      return { ...rest, status: 'running' };
    }
    case 'finishing': {
      if (state.finishing) return state;
      const { finishedAt, decision, status, artifact, decided } = event;
      const finishing = { finished_at: finishedAt, decision, ...(status ? { status } : {}), ...(artifact ? { artifact } : {}) };
      return { ...state, ...(decided ? { trail: [...state.trail, decided] } : {}), finishing };
    }
    case 'finished':
      return {
        ...state,
        status: event.status,
        decision: event.decision,
        trail: [...state.trail, event.decision],
        finished_at: event.finishedAt,
        summary: event.summary,
        ...(event.artifact ? { artifact: event.artifact } : {}),
      };
    case 'failed':
      return {
        ...state,
        status: 'error',
        decision: event.decision,
        trail: [...state.trail, event.decision],
        summary: event.summary,
        finished_at: event.at,
      };
    case 'revived': {
      const { finished_at: _ended, decision: _failed, ...rest } = state;
      return { ...rest, status: 'running' };
    }
  }
}

/**
 * A finished step joins the steps, recorded once whatever happens; only a step whose question could not
 * be asked again within the budget (`reask_withheld`) is completed in its place by the call asked again.
 */
function withStep(steps: readonly Step[], step: Step): Step[] {
  const at = steps.findIndex((s) => s.id === step.id);
  if (at === -1) return [...steps, { ...step, index: steps.length }];
  const earlier = steps[at] as Step;
  if (!earlier.reask_withheld) return [...steps];
  return steps.map((s, i) => (i === at ? { ...step, index: earlier.index } : s));
}

/**
 * The next step of a running run, from its checkpoint: the mode says which calls are left (the
 * finished ones, keyed by id, are not asked again) or that it is time to conclude. A completed run
 * being finished again replays its deliberation (no call) to write the same artifact; an ending
 * that is not a completion is completed by the engine before it asks.
 */
export function nextStep(state: RunState, mode: DeliberationMode, ctx: ModeContext): ModeNext {
  // A step whose question was not asked again (the budget) is not finished: the mode asks for it again.
  return state.finishing ? { kind: 'conclude' } : mode.next(ctx, finishedSteps(state.steps));
}

/** The steps a mode counts as done: all but those whose question is still to be asked again. */
export function finishedSteps(steps: readonly Step[]): readonly Step[] {
  return steps.some((s) => s.reask_withheld) ? steps.filter((s) => !s.reask_withheld) : steps;
}

/** How a run ended, or where it stopped (`interrupted`: it goes on from its checkpoint). */
export type OutcomeStatus = 'completed' | 'paused' | 'stopped' | 'guardrail_stopped' | 'invalid' | 'error' | 'interrupted';

/** What `maestro run --json` prints and what the watcher logs. */
export interface RunOutcome {
  readonly run_id: string;
  readonly status: OutcomeStatus;
  /** The policy's decision, as the status says it (OUTCOME_DECISION): null where no ending was decided (invalid input, a failure). */
  readonly decision: string | null;
  readonly reason_code: string;
  /** Absolute path of the artifact, when one was written. */
  readonly artifact: string | null;
  readonly audit_log: string;
  /** One or more lines for people: what happened and what to do next. */
  readonly message: string;
  /** Validation problems as `path: message`, for invalid input. */
  readonly issues?: readonly string[];
}

/**
 * The decision every view of an outcome reports, by its status (README, "Exit codes"): a script that
 * reads `decision` never sees one its `status` contradicts. An invalid command's audit record keeps the
 * contract's fixed fail-closed response (PAUSE_FOR_HITL, SPEC_INVALID_INPUT), but nothing waits for a
 * person: no ending was decided, so its outcome says null, as a failure's does.
 */
export const OUTCOME_DECISION = {
  completed: 'RUN',
  paused: 'PAUSE_FOR_HITL',
  stopped: 'STOPPED',
  guardrail_stopped: 'STOPPED',
  invalid: null,
  refused: null,
  error: null,
  interrupted: null,
} as const;

/** The one builder of outcomes: from the decision that ended (or paused) the run. Its words are screened: they are printed and kept. */
export function buildOutcome(options: {
  runId: string;
  status: RunOutcome['status'];
  decision: { readonly decision: string; readonly reason_code: string };
  auditLog: string;
  message: string;
  artifact?: string | null;
  issues?: readonly string[];
}): RunOutcome {
  return {
    run_id: options.runId,
    status: options.status,
    decision: OUTCOME_DECISION[options.status],
    reason_code: options.decision.reason_code,
    artifact: options.artifact ?? null,
    audit_log: options.auditLog,
    message: screenText(options.message),
    ...(options.issues ? { issues: options.issues.map(screenText) } : {}),
  };
}
