import { renderArtifact, type ArtifactInput } from '../domain/artifact.js';
import { auditEvent, type AuditDetails } from '../domain/audit.js';
import { runDecision, type DecisionRecord } from '../domain/decision.js';
import type { AuditEvent } from '../domain/audit.js';
import type { OpenRun, RunFile, StartedRun } from '../domain/ports.js';
import { buildOutcome } from '../domain/run-machine.js';
import type { ArtifactAttachment } from '../domain/modes/mode.js';
import type { PauseRecord } from '../domain/run-state.js';
import { RAW_COMMAND_FILE, screenText } from '../domain/screen.js';
import { runCalls, totalUsage } from '../domain/usage.js';
import { decideRun, type Ending, type PauseClass } from '../domain/run/policy.js';
import { outageOfDetails } from '../domain/route-breaker.js';
import { InternalError } from '../domain/errors.js';
import { explainLoopPolicyStop } from '../domain/stop-explanation.js';
import { applyLoopPolicy, type LoopPolicyOutcome } from './loop-policy.js';
import { readableState, type RunDeps, type RunOutcome } from './run-deps.js';

export type DraftInput = Omit<ArtifactInput, 'status' | 'finishedAt' | 'durationMs' | 'trail' | 'outcomeNote'>;

/**
 * What the arbitration commits (its record, `orchestration.json`, the decision that lets the run go
 * on), carried by the ending's first commit instead of a commit of its own: one flush, not two.
 */
export interface LeadCommit {
  readonly records: readonly AuditEvent[];
  readonly files: readonly RunFile[];
  /** The arbitration's decision that lets the run go on: joins the trail with the ending fixed. */
  readonly decided?: DecisionRecord;
  /** The ending is completed after a restart: a record the log holds already is not written again. */
  readonly completesEnding: boolean;
}

interface EndOptions {
  /** The run; every change, record and file goes through it as a commit. */
  readonly run: StartedRun;
  readonly deps: RunDeps;
  readonly decision: DecisionRecord;
  /** What a pause counts for (from the policy table's row for its cause). */
  readonly pauseClass?: PauseClass;
  /** For people: why the run ended here. */
  readonly message: string;
  readonly details?: AuditDetails;
  /** The arbitration's commit, made with the ending's first one. */
  readonly lead?: LeadCommit;
}

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
    const ending = decideRun({ kind: 'loop_limit' });
    return finishRun({
      ...rest,
      decision: ending.decision,
      message: explainLoopPolicyStop(loop.count, message),
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

type FinishOptions = EndOptions & {
  artifact?: DraftInput;
  attachments?: readonly ArtifactAttachment[];
  afterArtifact?: AfterArtifact;
  status?: 'stopped' | 'guardrail_stopped';
};

/** Runs once the artifact and its pictures are on disk (the council's memory); returns the records the run's `finished` commit carries. */
export type AfterArtifact = () => Promise<readonly AuditEvent[]>;

/** Ends a run as completed (decision RUN) or stopped, writing the artifact when there is one. */
async function finishRun(options: FinishOptions): Promise<RunOutcome> {
  const { run, deps, decision } = options;
  const message = screenText(options.message);
  // Completing an ending after a restart: what the log already says happened is not said again.
  const resumedEnding = run.state.finishing !== undefined;
  const status = decision.decision === 'RUN' ? 'completed' : (options.status ?? run.state.finishing?.status ?? 'stopped');
  // The end is put on the checkpoint before anything is written, with its time: a run killed between
  // the artifact and its last save ends the same way when recovered, byte for byte.
  const finishedAt = new Date(run.state.finishing?.finished_at ?? deps.clock.now().toISOString());
  const pictures = picturesOf(options);
  const { lead } = options;
  await run.commit({
    event: {
      type: 'finishing',
      finishedAt: finishedAt.toISOString(),
      decision,
      ...(status !== 'completed' ? { status } : {}),
      ...(lead?.decided ? { decided: lead.decided } : {}),
    },
    // The orchestration result waits for the end's commit: it is read once the run has ended (`--json`), and
    // until then a crash concludes the run again and writes it then.
    ...(lead ? { records: lead.records, completesEnding: lead.completesEnding } : {}),
  });
  const state = run.state;
  const artifact = await writeArtifact(options, { status, finishedAt, message, resumedEnding, pictures });
  // The pictures beside it, then what depends on the artifact and its pictures being on disk (the
  // council's memory): memory keeps only a run that ended well (DESIGN.md, Persistence).
  for (const p of pictures) await deps.artifacts.write(p.path, p.content, state.command.input_artifacts);
  const saved = (await options.afterArtifact?.()) ?? [];
  const finished = finishedRecord(options, status);
  // The end, its records (the artifact's and the memory's with it: a crash before this commit completes
  // the ending again, and those writes are idempotent), and the command as given gone (state.json keeps
  // it screened, for the record): one commit.
  const artifactPath = artifact?.path ?? null;
  await run.commit({
    event: {
      type: 'finished',
      status,
      decision,
      finishedAt: finishedAt.toISOString(),
      summary: message,
      ...(artifactPath ? { artifact: artifactPath } : {}),
    },
    records: [...(artifact ? [artifact.record] : []), ...saved, finished],
    files: lead?.files ?? [],
    removeFiles: [RAW_COMMAND_FILE],
    completesEnding: resumedEnding,
  });
  const text =
    status === 'completed'
      ? message
      : `${status === 'guardrail_stopped' ? 'stopped by a guardrail' : 'stopped'} (${decision.layer}: ${decision.reason_code}${decision.sealed ? ', sealed' : ''}): ${message}`;
  return buildOutcome({ runId: state.run_id, status, decision, auditLog: run.log, message: text, artifact: artifactPath });
}

/** The RUN_FINISHED record: how the run ended, and what its calls used. */
function finishedRecord(options: FinishOptions, status: string): AuditEvent {
  const usage = totalUsage(runCalls(options.run.state), options.deps.config.prices);
  return auditEvent('RUN_FINISHED', options.decision, {
    status,
    calls: usage.calls,
    prompt_tokens: usage.prompt_tokens,
    completion_tokens: usage.completion_tokens,
    ...(usage.cost_usd !== undefined ? { cost_usd: Math.round(usage.cost_usd * 1e6) / 1e6 } : {}),
  });
}

type PlacedPicture = ArtifactAttachment & { readonly path: string };

/** The artifact's pictures, each beside it (the artifact's name without `.md`, plus the picture's suffix). */
function picturesOf(options: FinishOptions): PlacedPicture[] {
  const plan = options.run.state.plan;
  if (!options.artifact || !plan) return [];
  return (options.attachments ?? []).map((a) => ({ ...a, path: `${plan.output_path.replace(/\.md$/i, '')}${a.suffix}` }));
}

/** The artifact, when the run has one to write (linking its pictures), and its ARTIFACT_WRITTEN record (committed with the run's end). */
async function writeArtifact(
  options: FinishOptions,
  end: {
    status: 'completed' | 'stopped' | 'guardrail_stopped';
    finishedAt: Date;
    message: string;
    resumedEnding: boolean;
    pictures: readonly PlacedPicture[];
  },
): Promise<{ path: string; record: AuditEvent } | null> {
  const { run, deps, decision } = options;
  const { status, finishedAt, message, resumedEnding, pictures } = end;
  const state = run.state;
  const plan = state.plan;
  if (!options.artifact || !plan) return null;
  deps.onProgress?.({ kind: 'producing_artifact', run_id: state.run_id, path: plan.output_path });
  const markdown = renderArtifact({
    ...options.artifact,
    pictures: pictures.map((p) => ({ file: p.path.split('/').at(-1) ?? p.path, alt: p.alt })),
    status,
    finishedAt: finishedAt.toISOString(),
    durationMs: finishedAt.getTime() - Date.parse(state.created_at),
    trail: [...state.trail, decision],
    ...(status === 'stopped' ? { outcomeNote: message } : {}),
  });
  const artifactPath = await deps.artifacts.write(plan.output_path, markdown, state.command.input_artifacts);
  const written = auditEvent('ARTIFACT_WRITTEN', runDecision('artifact', 'ARTIFACT_WRITTEN'), {
    path: plan.output_path,
    bytes: Buffer.byteLength(markdown),
    sha256: deps.sha256(markdown),
    ...(resumedEnding ? { completed_after_restart: true } : {}),
  });
  return { path: artifactPath, record: written };
}

/** A run that cannot start: persona or route files are broken. */
async function invalidRun(options: EndOptions & { problems: readonly string[] }): Promise<RunOutcome> {
  const { run, deps, decision, message, problems } = options;
  await run.commit({
    event: { type: 'finished', status: 'invalid', decision, finishedAt: deps.clock.now().toISOString(), summary: message },
    records: [
      auditEvent(options.details?.event === 'ROUTES_INVALID' ? 'ROUTES_INVALID' : 'PERSONAS_INVALID', decision, {
        problems: problems.length,
      }),
    ],
  });
  return buildOutcome({
    runId: run.state.run_id,
    status: 'invalid',
    decision,
    auditLog: run.log,
    message: `${message}; fix them and run again:\n${problems.map((p) => `  ${p}`).join('\n')}`,
    issues: problems,
  });
}

/** How a run is settled: the policy's ending, and what the applier needs to carry it out. */
export type SettleOptions = Omit<EndOptions, 'decision' | 'pauseClass'> & {
  readonly ending: Ending;
  /** For a pause: the draft to keep beside it; for an ending: the artifact to write. */
  readonly draft?: DraftInput;
  readonly attachments?: readonly ArtifactAttachment[];
  /** Runs once the artifact is on disk (the council's memory, on completion only). */
  readonly afterArtifact?: AfterArtifact;
  /** Asks the council for a plan when the loop policy wants one (third pause). */
  readonly requestPlan?: () => Promise<string>;
  /** For an invalid run: the problems, as `file: message` lines. */
  readonly problems?: readonly string[];
};

/**
 * The one applier of the run's policy: carries out an ending that `decideRun` chose — the run's
 * state, its audit records, the artifact, the council's memory and the outcome every view reports.
 * Nothing else writes how a run ended. Idempotent: an ending completed after a restart writes what
 * the log does not already hold, and the same artifact.
 */
export async function settleRun(options: SettleOptions): Promise<RunOutcome> {
  const { ending, draft, attachments, afterArtifact, requestPlan, problems, ...rest } = options;
  const base = { ...rest, decision: ending.decision };
  switch (ending.kind) {
    case 'pause':
      return pauseRun({
        ...base,
        pauseClass: ending.pauseClass,
        ...(draft ? { draft } : {}),
        ...(requestPlan ? { requestPlan } : {}),
        ...(attachments ? { attachments } : {}),
      });
    case 'stop':
      return finishRun({ ...base, status: ending.status, ...(draft ? { artifact: draft } : {}), ...(attachments ? { attachments } : {}) });
    case 'complete':
      return finishRun({
        ...base,
        ...(draft ? { artifact: draft } : {}),
        ...(attachments ? { attachments } : {}),
        ...(afterArtifact ? { afterArtifact } : {}),
      });
    case 'invalid':
      return invalidRun({ ...base, problems: problems ?? [] });
    case 'reroute':
      throw new InternalError('a REROUTE is not an ending: the routed client carries it out');
  }
}

/**
 * The `fail` ending: a failure (a full disk, a bug) ended the run where it stood. Its record is
 * committed, and with it the run's status when it was running: one commit, on a run that may be
 * only half readable (then the record alone). A storage failure can be resumed (`revived`).
 */
export async function settleFailure(
  run: OpenRun,
  failure: { readonly decision: DecisionRecord; readonly message: string; readonly record: AuditEvent; readonly at: string },
): Promise<void> {
  const running = readableState(run)?.status === 'running';
  const event = { type: 'failed' as const, decision: failure.decision, at: failure.at, summary: failure.message };
  await run.commit({ ...(running ? { event } : {}), records: [failure.record] });
}
