import { auditEvent } from '../domain/audit.js';
import { runDecision, userDecision } from '../domain/decision.js';
import { AppError, heldBy, InvalidInputError, RunHeldError } from '../domain/errors.js';
import { type DecisionAsked, pauseToDecide, type RunningFacts } from '../domain/hitl-decision.js';
import type { DecisionInbox, RunHolds, StartedRun } from '../domain/ports.js';

export type { DecisionInbox } from '../domain/ports.js';
import { wasRehearsal, type DecisionAuthor, type PauseRecord, type RunState } from '../domain/run-state.js';
import { screenText } from '../domain/screen.js';
import { parseVerdict } from '../domain/verdict.js';
import { settleRun } from './settle-run.js';
import { decideRun } from '../domain/run/policy.js';
import { modeFor } from '../domain/modes/registry.js';
import type { Persona } from '../domain/persona.js';
import { HOLD_WAIT_MS, resumeRun } from './process-command.js';
import { startedRun, type RunDeps, type RunOutcome } from './run-deps.js';
import { finalProposal } from '../domain/modes/proposal.js';
import { isConflictStopped } from '../domain/loop-policy/workspace-loop.js';
import { conflictFingerprint } from './loop-policy.js';

/** A decision that cannot be taken: stale, repeated, malformed, or on a sealed or finished run. Nothing changed. */
export class HitlRefusedError extends AppError {
  readonly code = 'HITL_REFUSED' as const;
}

export interface HitlDecisionInput {
  readonly runId: string;
  /** Exactly `continue` or `stop`; anything else is refused (fail closed). */
  readonly decision: string;
  readonly note?: string;
  /** Bind the decision to this pause; refused if it is no longer the current one. */
  readonly pauseId?: string;
  /**
   * Whether a live process (a watcher's claim, an engine worker) has the run to run it; asked holding
   * the run, and only of a `running` run. Without it, such a run counts as owned (fail closed).
   */
  readonly isOwned?: () => Promise<boolean>;
  /**
   * Not a person's decision: the route whose outage paused the run answers again (`resume_after_outage`).
   * Recorded as the system's (ROUTE_RECOVERED); refused unless the open pause is an outage of this route.
   */
  readonly afterOutageOf?: string;
  /** Who decides, how and from where: kept with the decision and in its HITL_DECIDED record. */
  readonly by?: DecisionAuthor;
}

/** What deciding needs: a run's stores, the inbox where `continue` waits, and who holds which run. */
export type DecideDeps = RunDeps & { readonly decisions: DecisionInbox; readonly holds: RunHolds };

export type HitlDecisionResult = { decision: 'continue'; state: RunState } | { decision: 'stop'; outcome: RunOutcome };

/**
 * Records a person's decision on a paused run (`HITL_DECIDED`, USER). `continue` clears the pause and
 * queues the run to resume from its checkpoint; `stop` ends it as STOPPED with an artifact that says so.
 * The decision is taken holding the run, so of two people (or processes) deciding at once exactly
 * one decides; the other is refused, told the pause was already decided.
 */
export async function decidePause(input: HitlDecisionInput, deps: DecideDeps): Promise<HitlDecisionResult> {
  const decision = input.decision;
  if (decision !== 'continue' && decision !== 'stop') {
    throw new HitlRefusedError(`"${decision}" is not a decision: use exactly "continue" or "stop"`);
  }
  if (input.note !== undefined && input.note.length > 2000) throw new HitlRefusedError('the note is longer than 2000 characters');
  const asked: HitlDecisionInput & DecisionAsked = { ...input, decision };
  const hold = await deps.holds.hold(input.runId, { waitMs: HOLD_WAIT_MS }).catch(async (error: unknown) => {
    if (error instanceof RunHeldError) throw await heldRefusal(asked, error, deps);
    if (error instanceof InvalidInputError) throw new HitlRefusedError(`there is no run "${input.runId}" in this workspace`);
    throw error;
  });
  try {
    return await decideHeld(asked, deps);
  } finally {
    await hold.release();
  }
}

/**
 * Why a decision on a run another live process holds is refused, read without holding it: a run
 * not paused says so (it is running there), a paused one is being decided (or resumed) there.
 */
async function heldRefusal(input: HitlDecisionInput & DecisionAsked, held: RunHeldError, deps: DecideDeps): Promise<HitlRefusedError> {
  const state = await deps.ledger.load(input.runId);
  if (!state) return new HitlRefusedError(`there is no run "${input.runId}" in this workspace`);
  const facts = { continuePending: (await deps.decisions.pending()).includes(state.run_id), owned: true };
  const target = pauseToDecide(state, input, facts, deps.clock.now().toISOString());
  const holds = `; another maestro process holds it right now${heldBy(held.holder)}; nothing changed`;
  if (!target.ok) return new HitlRefusedError(target.refusal.replace(/; nothing changed$/, holds));
  return new HitlRefusedError(
    `another maestro process is deciding or resuming run ${state.run_id} right now${heldBy(held.holder)}; nothing changed`,
  );
}

async function decideHeld(input: HitlDecisionInput & { decision: 'continue' | 'stop' }, deps: DecideDeps): Promise<HitlDecisionResult> {
  const state = await deps.ledger.load(input.runId);
  if (!state) throw new HitlRefusedError(`there is no run "${input.runId}" in this workspace`);
  const idle = state.status !== 'running' || state.pause !== undefined;
  const facts = idle ? { continuePending: false, owned: false } : await runningFacts(state.run_id, input, deps);
  const target = pauseToDecide(state, input, facts, deps.clock.now().toISOString());
  if (!target.ok) throw new HitlRefusedError(target.refusal);
  const pause = target.pause;
  if (input.decision === 'continue' && input.afterOutageOf === undefined) await refuseOnStoppedLine(state, deps);
  if (input.afterOutageOf !== undefined && pause.outage?.route !== input.afterOutageOf) {
    throw new HitlRefusedError(`run ${state.run_id} is not paused by an outage of route "${input.afterOutageOf}"; nothing changed`);
  }
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
    ...(input.by ? { by: input.by } : {}),
  } as const;
  const decision =
    input.decision === 'stop'
      ? decideRun({ kind: 'person_stop' }).decision
      : input.afterOutageOf !== undefined
        ? runDecision('hitl', 'ROUTE_RECOVERED')
        : userDecision('RUN', 'HITL_CONTINUE');
  const run = startedRun(await deps.ledger.open(state.run_id));
  try {
    // The decision and its record: one commit.
    const decided = {
      pause_id: pause.pause_id,
      paused_layer: pause.layer,
      paused_reason: pause.reason_code,
      note_chars: input.note?.length ?? 0,
      ...(input.by ? { decided_by: input.by.name, via: input.by.via, from: input.by.from } : {}),
    };
    await run.commit({
      event: { type: 'person_decided', entry, decision },
      records: [auditEvent(input.afterOutageOf === undefined ? 'HITL_DECIDED' : 'OUTAGE_RESUMED', decision, decided)],
    });
    if (input.decision === 'stop') return { decision: 'stop', outcome: await stopDecided(run, pause, note, deps) };
  } finally {
    // A continued run is resumed from its checkpoint later, maybe by another process.
    await run.close();
  }
  await deps.decisions.post(state.run_id, { pause_id: pause.pause_id, decided_at: now });
  return { decision: 'continue', state: run.state };
}

/**
 * A run of a conflict line the loop policy stopped (sealed) is offered only `stop` (`hitl show`, the
 * list's "stop only"): a `continue` would only be stopped on resume (ACC_STOPPED_IS_TERMINAL), so it
 * is refused, with the way out. Once `maestro session reset` starts a new session, it may continue.
 */
async function refuseOnStoppedLine(state: RunState, deps: DecideDeps): Promise<void> {
  if (!isConflictStopped(await deps.loopPolicy.read(), conflictFingerprint(state, deps.sha256))) return;
  throw new HitlRefusedError(
    `run ${state.run_id} is on a conflict line the loop policy stopped (sealed, ACC_STOPPED_IS_TERMINAL): continuing would only stop it, so only stop is offered. ` +
      `Stop it (maestro hitl decide ${state.run_id} stop), or start a new council session (maestro session reset --keep-memory) and decide again; nothing changed`,
  );
}

/** A person stopped the run at a pause: it ends as STOPPED, with an artifact that says so. */
async function stopDecided(run: StartedRun, pause: PauseRecord, note: string | undefined, deps: RunDeps): Promise<RunOutcome> {
  const why = `${pause.layer}: ${pause.reason_code}`;
  const message = `stopped by a person at pause ${pause.pause_id} (${why})${note ? ` — note: ${note}` : ''}`;
  const loaded = (await deps.personas.loadAll()).personas;
  const names = new Map(loaded.map((p) => [p.id, p.name]));
  const current = run.state;
  const ending = decideRun({ kind: 'person_stop' });
  return settleRun({
    run,
    deps,
    ending,
    message,
    ...(current.plan ? { draft: artifactFromState(current, current.plan, { deps, names, personas: loaded }) } : {}),
  });
}

/** Whether a `continue` on a running run still waits for its resumer, and whether a live process runs it. */
async function runningFacts(runId: string, input: HitlDecisionInput, deps: DecideDeps): Promise<RunningFacts> {
  const continuePending = (await deps.decisions.pending()).includes(runId);
  // Asked only when it matters: a stop of a run no `continue` waits for.
  const owned = continuePending || input.decision !== 'stop' ? true : input.isOwned ? await input.isOwned() : true;
  return { continuePending, owned };
}

/** Resumes a run a person chose to continue, if no other process has taken the decision already. */
export async function resumeDecided(runId: string, deps: RunDeps & { decisions: DecisionInbox }): Promise<RunOutcome | undefined> {
  if (!(await deps.decisions.claim(runId))) return undefined;
  return resumeRun(runId, deps);
}

/** The artifact of a run that ends without finishing its deliberation: what was said, and why it stopped. */
function artifactFromState(
  state: RunState,
  plan: NonNullable<RunState['plan']>,
  { deps, names, personas }: { deps: RunDeps; names: ReadonlyMap<string, string>; personas: readonly Persona[] },
) {
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
    classification: state.classification,
    plan_call: state.plan_call,
    verdicts: state.steps.filter((s) => s.kind === 'verdict').map((s) => parseVerdict(s.persona, s.reply)),
    proposal: finalProposal(state) ?? '',
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
    const ctx = {
      runId: state.run_id,
      command: state.command,
      task: state.command.task_description,
      plan,
      personas: new Map(personas.map((p) => [p.id, p])),
      briefing: '',
      memories: new Map(),
      maxRequestsPerTurn: 0,
    };
    return modeFor(plan.mode).conclude(ctx, state.steps).sections;
  } catch (error) {
    return [
      {
        title: `${plan.mode} (not concluded)`,
        markdown: `The run was stopped before its ${plan.mode} deliberation could be concluded (${error instanceof Error ? error.message : String(error)}); what was said is in the transcript above.`,
      },
    ];
  }
}
type DraftSections = NonNullable<Parameters<typeof settleRun>[0]['draft']>['sections'] & readonly unknown[];

/**
 * What `continue` does, by the reason that paused the run (then by its layer): what `maestro hitl
 * show` promises must be what resuming does, so each line names the code path it describes. Each is
 * the words after "Continue would" (a verb phrase), so it reads as a sentence there.
 */
const CONTINUE_BY_REASON: Readonly<Record<string, string>> = {
  // execute-run: the classification is not skipped; a run with no advice on its checkpoint asks again.
  MEDIATOR_CLASSIFICATION_FAILED:
    'ask the mediator for its classification again (the check is never skipped); if the route still fails or answers unreadably, the run pauses again; nothing reaches the council before it reads',
  // supervisor-loop: `unreadableApproved` ends the loop at the unreadable decision.
  SUPERVISOR_DECISION_INVALID:
    'end the supervisor loop at the decision that could not be read (nothing is delegated from it); every persona then gives its verdict and the run goes on; finished calls are not repeated',
  // conclude-run: an approved reason clears the arbitration.
  ARBITRATION_VERDICTS_UNREADABLE:
    'override the unreadable verdicts: the artifact and session states are written from the deliberation already done, and no model call is repeated',
  // execute-run: budgetCheck skips an approved BUDGET_EXCEEDED.
  BUDGET_EXCEEDED: 'let the run go on past its budget; finished model calls are not repeated',
  // gates: these facts are checked afresh on resume, never waived.
  MEANING_UNKNOWN_PERSONA: 'check the gates again: once the persona files exist the run goes on, otherwise it pauses again',
  MEANING_EMPTY_TASK: 'check the gates again: an empty task pauses again (write the task and run the command again)',
  REROUTE_NOT_ALLOWED: 'try the failed model call again on the same route (no REROUTE is taken); finished calls are not repeated',
  // gates: an approved ETHICS_PII_DETECTED lets the task and inputs go to the model as they are.
  ETHICS_PII_DETECTED:
    'clear the ethics gate (ETHICS_PII_DETECTED) and send the personal data to the model as it is, unredacted; the later gates still run, then the council deliberates',
};

const CONTINUE_BY_LAYER: Readonly<Record<string, string>> = {
  arbitration:
    "override the council's verdict: the artifact and session states are written from the deliberation already done, and no model call is repeated",
  model: 'try the failed model call again; finished calls are not repeated',
  reroute: 'try the failed model call again; finished calls are not repeated',
};

/** What `continue` would do for a pause of this layer and reason, for `maestro hitl show`. */
export function describeContinue(layer: string, reason: string): string {
  return (
    CONTINUE_BY_REASON[reason] ??
    CONTINUE_BY_LAYER[layer] ??
    `clear the ${layer} gate (${reason}); the later gates still run, then the council deliberates`
  );
}
