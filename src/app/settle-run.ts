import { renderArtifact } from '../domain/artifact.js';
import { auditEvent } from '../domain/audit.js';
import type { EventCode } from '../domain/codes.js';
import type { AuditEvent } from '../domain/audit.js';
import type { OpenRun, RunFile } from '../domain/ports.js';
import { buildOutcome } from '../domain/run-machine.js';
import type { ArtifactAttachment } from '../domain/modes/mode.js';
import type { PauseRecord } from '../domain/run-state.js';
import { screenText } from '../domain/screen.js';
import { decideRun, endingStatus, type Ending } from '../domain/run/policy.js';
import { outageOfDetails } from '../domain/route-breaker.js';
import { InternalError } from '../domain/errors.js';
import { explainLoopPolicyStop, TERMINAL_GUARD_STOP } from '../domain/stop-explanation.js';
import { applyLoopPolicy, type LoopPolicyOutcome } from './loop-policy.js';
import { readableState, startedRun, type RunDeps, type RunOutcome } from './run-deps.js';
import { finishRun, type AfterArtifact, type DraftInput, type EndOptions } from './finish-run.js';

export type { AfterArtifact, DraftInput, LeadCommit } from './finish-run.js';

/**
 * Pauses a run for a person: the checkpoint keeps everything needed to resume, `hitl.json` says
 * what paused it and how to decide, and a draft of the artifact (when there is one) waits beside it.
 * The pause is counted by the loop policy, which may attach a plan (third pause of a conflict) or end
 * the conflict line with a sealed stop (fourth).
 */
async function pauseRun(
  options: EndOptions & { draft?: DraftInput; requestPlan?: () => Promise<string>; attachments?: readonly ArtifactAttachment[] },
): Promise<RunOutcome> {
  const { run, deps, decision } = options;
  // Kept (the checkpoint, hitl.json, the draft) and shown: screened.
  const message = screenText(options.message);
  const state = run.state;
  const now = deps.clock.now();
  const kind = options.pauseClass ?? 'judgement';
  // A route that did not answer is named on the pause, so the run can resume on its own once it answers again.
  const outage = kind === 'outage' ? outageOfDetails(options.details) : undefined;
  const pause: PauseRecord = {
    pause_id: `${state.run_id}-p${state.hitl.length + 1}`,
    layer: decision.layer,
    reason_code: decision.reason_code,
    message,
    requested_at: now.toISOString(),
    ...(outage ? { outage } : {}),
  };
  const { lead, ...rest } = options;
  const requested = auditEvent('HITL_REQUESTED', decision, { pause_id: pause.pause_id, pause_class: kind, ...options.details });
  await run.commit({
    records: [...(lead?.records ?? []), requested],
    ...(lead ? { files: lead.files, completesEnding: lead.completesEnding } : {}),
  });
  // Only a pause that judges the task counts for the loop policy; an outage or a set-up problem does not.
  const requestPlan = options.requestPlan ? { requestPlan: options.requestPlan } : {};
  const loop: LoopPolicyOutcome = kind === 'judgement' ? await applyLoopPolicy({ state, pause, deps, run, ...requestPlan }) : { count: 0 };
  if (loop.stop) {
    // The fourth pause ends the line; a pause on a line already ended meets the terminal guard (an acc gate's sealed stop).
    const guarded = loop.stop.reason_code === 'ACC_STOPPED_IS_TERMINAL';
    const ending = decideRun(guarded ? { kind: 'gate', decision: loop.stop } : { kind: 'loop_limit' });
    return finishRun({
      ...rest,
      decision: ending.decision,
      message: guarded ? `${TERMINAL_GUARD_STOP} Last pause: ${message}` : explainLoopPolicyStop(loop.count, message),
      ...(options.draft ? { artifact: options.draft } : {}),
    });
  }
  const { draft, pictures } = renderDraft(options, { now, message });
  const draftPath = draft ? run.filePath('draft.md') : undefined;
  const howTo = `maestro hitl decide ${state.run_id} continue|stop [--note TEXT]`;
  const why = {
    run_id: state.run_id,
    ...pause,
    pause_class: kind,
    draft: draftPath ?? null,
    plan: loop.plan ?? null,
    conflict_pauses: loop.count,
    decide: howTo,
  };
  const hitl: RunFile = { name: 'hitl.json', content: `${JSON.stringify(why, null, 2)}\n` };
  // The pause, what it says to a person and the draft: one commit (the files are in place before the state names them).
  const paused = { type: 'paused' as const, decision, pause, summary: message, ...(loop.plan ? { loopPlan: loop.plan } : {}) };
  await run.commit({ event: paused, files: draft ? [...pictures, draft, hitl] : [hitl] });
  deps.notifier?.paused({ runId: state.run_id, pause, pauseClass: kind });
  const lines = [`paused for a person (${decision.layer}: ${decision.reason_code}): ${message}`];
  if (loop.plan)
    lines.push(`this conflict has paused ${loop.count} times; the council proposed a plan (see \`maestro hitl show ${state.run_id}\`)`);
  if (draftPath) lines.push(`draft: ${draftPath}`);
  lines.push(`decide: ${howTo}`);
  return buildOutcome({ runId: state.run_id, status: 'paused', decision, auditLog: run.log, message: lines.join('\n') });
}

/** A paused run's draft (the artifact so far, over the pause) and its pictures, when it has one. */
function renderDraft(
  options: EndOptions & { draft?: DraftInput; attachments?: readonly ArtifactAttachment[] },
  at: { now: Date; message: string },
): { draft: RunFile | undefined; pictures: RunFile[] } {
  if (!options.draft) return { draft: undefined, pictures: [] };
  const { run, decision } = options;
  const state = run.state;
  const pictures = draftPictures(options.attachments);
  const content = renderArtifact({
    ...options.draft,
    pictures: pictures.map((p) => ({ file: p.name, alt: p.alt })),
    status: 'paused',
    finishedAt: at.now.toISOString(),
    durationMs: at.now.getTime() - Date.parse(state.created_at),
    trail: [...state.trail, decision],
    outcomeNote: `Paused for a person: ${at.message}`,
  });
  return { draft: { name: 'draft.md', content }, pictures: pictures.map(({ name, content }) => ({ name, content })) };
}

/** A paused draft's heat map, beside it in the run's folder (a draft has one picture at most: its heat map). */
function draftPictures(
  attachments: readonly ArtifactAttachment[] | undefined,
): { name: 'draft.heatmap.svg'; content: string; alt: string }[] {
  const heatmap = attachments?.find((a) => a.suffix === '.heatmap.svg');
  return heatmap ? [{ name: 'draft.heatmap.svg', content: heatmap.content, alt: heatmap.alt }] : [];
}

/**
 * A run that cannot go on as it was given: a command refused before it had a state (its record
 * alone), or a run whose persona or route files are broken (it ends `invalid`). One commit.
 */
async function invalidRun(options: OutsideOptions): Promise<RunOutcome> {
  const { run, deps, decision, message, problems = [] } = options;
  const state = readableState(run);
  const setup = options.details?.event === 'ROUTES_INVALID' ? 'ROUTES_INVALID' : 'PERSONAS_INVALID';
  const record = auditEvent(options.event ?? setup, decision, options.event ? options.details : { problems: problems.length });
  const finishedAt = deps.clock.now().toISOString();
  await run.commit({
    ...(state ? { event: { type: 'finished', status: 'invalid', decision, finishedAt, summary: message } } : {}),
    records: [...(options.before ?? []), record],
  });
  const lines = problems.map((p) => `  ${p}`).join('\n');
  const text = state ? `${message}; fix them and run again:\n${lines}` : `${message}:\n${lines}`;
  return buildOutcome({ runId: run.runId, status: 'invalid', decision, auditLog: run.log, message: text, issues: problems });
}

/**
 * A failure (a full disk, a bug) ended the run where it stood: its record, with the run's status when
 * it was running (`error`; a storage failure is `revived` by a resume). Applied once: a failure already
 * on the record (the state says error, or a run without one whose log says so) is not written again.
 */
async function failRun(options: OutsideOptions): Promise<RunOutcome> {
  const { run, deps, decision, message } = options;
  const event = options.event ?? 'RUN_FAILED';
  const state = readableState(run);
  if (!(state ? state.status === 'error' : run.hasRecorded(event))) {
    const failed = { type: 'failed' as const, decision, at: deps.clock.now().toISOString(), summary: message };
    await run.commit({
      ...(state?.status === 'running' ? { event: failed } : {}),
      records: [auditEvent(event, decision, options.details)],
    });
  }
  return buildOutcome({ runId: run.runId, status: 'error', decision, auditLog: run.log, message, ...issuesOf(options) });
}

/** The run stopped at its last checkpoint and goes on from it: its log says so, unless another process runs it (nothing is touched then). */
async function interruptRun(options: OutsideOptions & { recorded: boolean }): Promise<RunOutcome> {
  const { run, decision, message } = options;
  if (options.recorded) await run.commit({ records: [auditEvent(options.event ?? 'RUN_INTERRUPTED', decision, options.details)] });
  return buildOutcome({ runId: run.runId, status: 'interrupted', decision, auditLog: options.recorded ? run.log : '', message });
}

const issuesOf = (options: { problems?: readonly string[] }) => (options.problems ? { issues: options.problems } : {});

/** What an ending met outside the council's steps (a refusal, a failure, an interruption) records. */
interface OutsideRecord {
  /** The record's event (COMMAND_INVALID, COMMAND_REJECTED, RUN_FAILED, RUN_INTERRUPTED); its details are `details`. */
  readonly event?: EventCode;
  /** Records that go first, in the same commit (that the command was received). */
  readonly before?: readonly AuditEvent[];
  /** The problems, as `path: message` lines. */
  readonly problems?: readonly string[];
}

type OutsideOptions = Omit<EndOptions, 'run'> & OutsideRecord & { readonly run: OpenRun };

/** How a run is settled: the policy's ending, and what the applier needs to carry it out. */
export type SettleOptions = Omit<EndOptions, 'decision' | 'pauseClass' | 'run'> &
  OutsideRecord & {
    /** The run: one with a state for a pause or an ending that writes an artifact; any run for the others. */
    readonly run: OpenRun;
    readonly ending: Ending;
    /** For a pause: the draft to keep beside it; for an ending: the artifact to write. */
    readonly draft?: DraftInput;
    readonly attachments?: readonly ArtifactAttachment[];
    /** Runs once the artifact is on disk (the council's memory, on completion only). */
    readonly afterArtifact?: AfterArtifact;
    /** Asks the council for a plan when the loop policy wants one (third pause). */
    readonly requestPlan?: () => Promise<string>;
  };

/**
 * The one applier of the run's policy: carries out an ending that `decideRun` chose — the run's
 * state, its audit records, the artifact, the council's memory and the outcome every view reports.
 * Nothing else writes how a run ended, failures and interruptions included. Idempotent: an ending
 * completed after a restart writes what the log does not already hold, and the same artifact.
 */
export async function settleRun(options: SettleOptions): Promise<RunOutcome> {
  const { ending, draft, attachments, afterArtifact, requestPlan, run, ...rest } = options;
  const base = { ...rest, decision: ending.decision };
  const artifact = { ...(draft ? { artifact: draft } : {}), ...(attachments ? { attachments } : {}) };
  switch (ending.kind) {
    case 'pause':
      return pauseRun({
        ...base,
        run: startedRun(run),
        pauseClass: ending.pauseClass,
        ...(draft ? { draft } : {}),
        ...(requestPlan ? { requestPlan } : {}),
        ...(attachments ? { attachments } : {}),
      });
    case 'stop':
      return finishRun({ ...base, run: startedRun(run), status: ending.status, ...artifact });
    case 'complete':
      return finishRun({ ...base, run: startedRun(run), ...artifact, ...(afterArtifact ? { afterArtifact } : {}) });
    case 'invalid':
      return invalidRun({ ...base, run });
    case 'fail':
      return failRun({ ...base, run });
    case 'interrupt':
      return interruptRun({ ...base, run, recorded: ending.recorded });
    case 'reroute':
      throw new InternalError('a REROUTE is not an ending: the routed client carries it out');
  }
}

/**
 * Settles an ending met outside the council's steps — a failure, an interruption, a command refused —
 * on the run it belongs to, opened for it. Recording is best effort (the log may be on the full disk
 * that failed the run): the outcome then has no audit log, and says why it has none (`unrecorded`).
 */
export async function settleOutside(
  runId: string,
  deps: RunDeps,
  end: Omit<SettleOptions, 'run' | 'deps'>,
): Promise<RunOutcome & { readonly unrecorded?: string }> {
  // Another process runs it: nothing of it is touched, not even opened.
  if (end.ending.kind === 'interrupt' && !end.ending.recorded) return unrecordedOutcome(runId, end);
  try {
    const run = await deps.ledger.open(runId);
    try {
      return await settleRun({ ...end, deps, run });
    } finally {
      await run.close();
    }
  } catch (error) {
    return { ...unrecordedOutcome(runId, end), unrecorded: error instanceof Error ? error.message : String(error) };
  }
}

/** The outcome of an ending that nothing records (no audit log has it): a run held elsewhere, a command the intake refused unread. */
export function unrecordedOutcome(runId: string, end: Omit<SettleOptions, 'run' | 'deps'>): RunOutcome {
  if (end.ending.kind === 'reroute') throw new InternalError('a REROUTE is not an ending');
  const status = endingStatus(end.ending);
  return buildOutcome({ runId, status, decision: end.ending.decision, auditLog: '', message: end.message, ...issuesOf(end) });
}
