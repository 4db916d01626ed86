import { auditEvent } from '../domain/audit.js';
import { userDecision } from '../domain/decision.js';
import { AppError } from '../domain/errors.js';
import { wasRehearsal, type RunState } from '../domain/run-state.js';
import { screenText } from '../domain/screen.js';
import { parseVerdict } from '../domain/verdict.js';
import { finishRun } from './finish-run.js';
import { modeFor } from '../domain/modes/registry.js';
import type { Persona } from '../domain/persona.js';
import { RunRecorder } from './run-recorder.js';
import { resumeRun } from './process-command.js';
import type { RunDeps, RunOutcome } from './run-deps.js';

/** A decision that cannot be taken: stale, repeated, malformed, or on a sealed or finished run. Nothing changed. */
export class HitlRefusedError extends AppError {
  readonly code = 'HITL_REFUSED' as const;
}

/** Where `continue` decisions wait for whoever resumes the run (a watcher, or `--run` in the foreground). */
export interface DecisionInbox {
  post(runId: string, decision: { pause_id: string; decided_at: string }): Promise<void>;
  /** Takes the decision for this run; false if there is none or another process took it first. */
  claim(runId: string): Promise<boolean>;
  /** Runs with a posted, unclaimed decision, oldest first. */
  pending(): Promise<string[]>;
}

export interface HitlDecisionInput {
  readonly runId: string;
  /** Exactly `continue` or `stop`; anything else is refused (fail closed). */
  readonly decision: string;
  readonly note?: string;
  /** Bind the decision to this pause; refused if it is no longer the current one. */
  readonly pauseId?: string;
  /** The caller checked that no live process runs this run, so a `running` one may be stopped. */
  readonly unowned?: boolean;
}

export type HitlDecisionResult = { decision: 'continue'; state: RunState } | { decision: 'stop'; outcome: RunOutcome };

/**
 * Records a person's decision on a paused run (`HITL_DECIDED`, USER). `continue` clears the pause and
 * queues the run to resume from its checkpoint; `stop` ends it as STOPPED with an artifact that says so.
 */
export async function decidePause(input: HitlDecisionInput, deps: RunDeps & { decisions: DecisionInbox }): Promise<HitlDecisionResult> {
  if (input.decision !== 'continue' && input.decision !== 'stop') {
    throw new HitlRefusedError(`"${input.decision}" is not a decision: use exactly "continue" or "stop"`);
  }
  if (input.note !== undefined && input.note.length > 2000) throw new HitlRefusedError('the note is longer than 2000 characters');
  const state = await deps.runs.load(input.runId);
  if (!state) throw new HitlRefusedError(`there is no run "${input.runId}" in this workspace`);
  if (state.decision?.sealed) {
    throw new HitlRefusedError(`run ${state.run_id} was stopped by a sealed decision (${state.decision.layer}: ${state.decision.reason_code}); nobody can continue it`);
  }
  // A run left `running` with nobody running it (the caller checked there is no live owner) can
  // always be stopped: no path leaves a run that nobody can end.
  const unownedStop = input.decision === 'stop' && state.status === 'running' && input.unowned === true;
  if ((state.status !== 'paused' || !state.pause) && !unownedStop) {
    const last = state.hitl.at(-1);
    const already = last ? ` (a "${last.decision}" decision was already recorded for pause ${last.pause_id})` : '';
    throw new HitlRefusedError(`run ${state.run_id} is not paused: it is ${state.status}${already}`);
  }
  if (input.pauseId !== undefined && input.pauseId !== state.pause?.pause_id) {
    throw new HitlRefusedError(`the decision is for pause ${input.pauseId}, but the current pause of run ${state.run_id} is ${state.pause?.pause_id ?? '(none: it is running)'}; nothing changed`);
  }

  const pause = state.pause ?? {
    pause_id: `${state.run_id}-p${state.hitl.length + 1}`,
    layer: 'queue',
    reason_code: 'RUN_NOT_OWNED',
    message: 'the run was left running with nobody running it',
    requested_at: deps.clock.now().toISOString(),
  };
  const now = deps.clock.now().toISOString();
  // A note is kept with the run and shown with it: screened like everything else a run keeps.
  const note = input.note ? screenText(input.note) : undefined;
  const entry = {
    pause_id: pause.pause_id,
    layer: pause.layer,
    reason_code: pause.reason_code,
    decision: input.decision,
    decided_at: now,
    ...(note ? { note } : {}),
  } as const;
  const decision = userDecision(input.decision === 'continue' ? 'RUN' : 'STOPPED', input.decision === 'continue' ? 'HITL_CONTINUE' : 'HITL_STOP');
  const audit = await deps.audit.open(state.run_id);
  await audit.append(auditEvent('HITL_DECIDED', decision, { pause_id: pause.pause_id, paused_layer: pause.layer, paused_reason: pause.reason_code, note_chars: input.note?.length ?? 0 }));

  const run = new RunRecorder(state, deps.runs, deps.clock);
  await run.apply({ type: 'person_decided', entry, decision });
  if (input.decision === 'continue') {
    // Resumed from its checkpoint later, maybe by another process.
    await deps.runs.close?.(state.run_id);
    await deps.decisions.post(state.run_id, { pause_id: pause.pause_id, decided_at: now });
    return { decision: 'continue', state: run.state };
  }

  const why = `${pause.layer}: ${pause.reason_code}`;
  const message = `stopped by a person at pause ${pause.pause_id} (${why})${note ? ` — note: ${note}` : ''}`;
  const loaded = (await deps.personas.loadAll()).personas;
  const names = new Map(loaded.map((p) => [p.id, p.name]));
  const current = run.state;
  const outcome = await finishRun({ run, audit, deps, decision, message, ...(current.plan ? { artifact: artifactFromState(current, deps, names, loaded) } : {}) });
  return { decision: 'stop', outcome };
}

/** Resumes a run a person chose to continue, if no other process has taken the decision already. */
export async function resumeDecided(runId: string, deps: RunDeps & { decisions: DecisionInbox }): Promise<RunOutcome | undefined> {
  if (!(await deps.decisions.claim(runId))) return undefined;
  return resumeRun(runId, deps);
}

/** The artifact of a run that ends without finishing its deliberation: what was said, and why it stopped. */
function artifactFromState(state: RunState, deps: RunDeps, names: ReadonlyMap<string, string>, personas: readonly Persona[]) {
  const plan = state.plan!;
  const synthesis = state.steps.find((s) => s.kind === 'synthesis');
  return {
    sections: modeSections(state, personas),
    runId: state.run_id,
    task: state.command.task_description,
    inputArtifacts: state.command.input_artifacts,
    plan,
    personaNames: new Map(plan.personas.map((id) => [id, names.get(id) ?? id])),
    startedAt: state.created_at,
    // From the routes the run used (version 2 checkpoints); older ones fall back to their steps' identities.
    rehearsal: wasRehearsal(state) ?? false,
    steps: state.steps,
    verdicts: state.steps.filter((s) => s.kind === 'verdict').map((s) => parseVerdict(s.persona, s.reply)),
    proposal: synthesis?.reply ?? '',
    prices: deps.config.prices,
    reroutes: state.reroutes,
  };
}

/**
 * What the run's mode says of the deliberation done so far (parallel: the assessments and their
 * composition; supervisor: the loop), so a stopped run's artifact keeps it. The conclusion is pure
 * and reads only the recorded steps; if it cannot be drawn from a partial run, the artifact says so
 * (the steps themselves are in its transcript either way).
 */
function modeSections(state: RunState, personas: readonly Persona[]): DraftSections {
  const plan = state.plan;
  if (!plan || plan.mode === 'round_robin' || state.steps.length === 0) return [];
  try {
    const ctx = { runId: state.run_id, command: state.command, task: state.command.task_description, plan, personas: new Map(personas.map((p) => [p.id, p])), briefing: '', histories: new Map(), maxRequestsPerTurn: 0 };
    return modeFor(plan.mode).conclude(ctx, state.steps).sections;
  } catch (error) {
    return [{ title: `${plan.mode} (not concluded)`, markdown: `The run was stopped before its ${plan.mode} deliberation could be concluded (${error instanceof Error ? error.message : String(error)}); what was said is in the transcript above.` }];
  }
}
type DraftSections = NonNullable<Parameters<typeof finishRun>[0]['artifact']>['sections'] & readonly unknown[];

/** What `continue` would do for a pause of this layer and reason, for `maestro hitl show`. */
export function describeContinue(layer: string, reason: string): string {
  if (reason === 'BUDGET_EXCEEDED') return 'the run goes on past its budget; finished model calls are not repeated';
  switch (layer) {
    case 'arbitration':
      return "the council's verdict is overridden: the artifact and session states are written from the deliberation already done — no model call is repeated";
    case 'model':
    case 'reroute':
      return 'the failed model call is tried again; finished calls are not repeated';
    case 'deliberation':
      return 'the deliberation goes on from where it paused (a supervisor loop that could not read its decision ends, and the council gives its verdicts); finished calls are not repeated';
    default:
      return `the ${layer} gate is cleared (${reason}); the later gates still run, then the council deliberates`;
  }
}
