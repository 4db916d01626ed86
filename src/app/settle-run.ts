import { renderArtifact, type ArtifactInput } from '../domain/artifact.js';
import { type ArtifactPlacement, artifactBase, describePlacement } from '../domain/artifact-place.js';
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
  const { draft, pictures } = await renderDraft(options, { now, message });
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
  const lines = [`paused for a person (${decision.layer}: ${decision.reason_code}): ${message}`];
  if (loop.plan)
    lines.push(`this conflict has paused ${loop.count} times; the council proposed a plan (see \`maestro hitl show ${state.run_id}\`)`);
  if (draftPath) lines.push(`draft: ${draftPath}`);
  lines.push(`decide: ${howTo}`);
  return buildOutcome({ runId: state.run_id, status: 'paused', decision, auditLog: run.log, message: lines.join('\n') });
}

/** A paused run's draft (the artifact so far, over the pause) and its pictures, when it has one. */
async function renderDraft(
  options: EndOptions & { draft?: DraftInput; attachments?: readonly ArtifactAttachment[] },
  at: { now: Date; message: string },
): Promise<{ draft: RunFile | undefined; pictures: RunFile[] }> {
  if (!options.draft) return { draft: undefined, pictures: [] };
  const { run, deps, decision } = options;
  const state = run.state;
  const pictures = await draftPictures(deps, options.attachments);
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

/** A paused draft's heat map, drawn beside it in the run's folder (a draft has one picture at most: its heat map). */
async function draftPictures(
  deps: RunDeps,
  attachments: readonly ArtifactAttachment[] | undefined,
): Promise<{ name: 'draft.heatmap.svg'; content: string; alt: string }[]> {
  const heatmap = attachments?.find((a) => a.suffix === '.heatmap.svg');
  if (!heatmap || !deps.pictures) return [];
  return [{ name: 'draft.heatmap.svg', content: await deps.pictures.render(heatmap.picture), alt: heatmap.alt }];
}

type FinishOptions = EndOptions & {
  artifact?: DraftInput;
  attachments?: readonly ArtifactAttachment[];
  afterArtifact?: AfterArtifact;
  status?: 'stopped' | 'guardrail_stopped';
};

/**
 * Runs once the artifact is on disk (the council's memory), its writes landing only once `pictures`
 * resolves: the artifact (flushed) and its pictures are on disk, and no run claimed meanwhile is still on its way
 * to its first call (RunDeps.afterHeads). Returns the records the run's `finished` commit carries.
 */
export type AfterArtifact = (pictures: Promise<void>) => Promise<readonly AuditEvent[]>;

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
  const placement = await placeArtifact(options);
  const pictures = picturesOf(options, placement);
  // Drawn from now on, written beside the artifact only once the end is on the checkpoint: a commit
  // that fails leaves no picture without its artifact.
  let endFixed: (fixed: boolean) => void = () => undefined;
  const fixed = new Promise<boolean>((resolve) => (endFixed = resolve));
  // The writes left for after the slot is freed wait for the heads of runs claimed meanwhile (RunDeps.afterHeads).
  let tailMayWrite: (go: Promise<void> | undefined) => void = () => undefined;
  const heads = new Promise<void>((resolve) => (tailMayWrite = resolve));
  const drawing = drawPictures(
    deps,
    pictures,
    run.state.command.input_artifacts,
    fixed.then(async (ok) => {
      if (ok) await heads;
      return ok;
    }),
  );
  const { lead } = options;
  await commitEnding(run, endFixed, {
    event: {
      type: 'finishing',
      finishedAt: finishedAt.toISOString(),
      decision,
      ...(status !== 'completed' ? { status } : {}),
      ...(lead?.decided ? { decided: lead.decided } : {}),
      ...(placement ? { artifact: placement } : {}),
    },
    // The orchestration result waits for the end's commit: it is read once the run has ended (`--json`), and
    // until then a crash concludes the run again and writes it then.
    ...(lead ? { records: lead.records, completesEnding: lead.completesEnding } : {}),
  });
  const state = run.state;
  const artifact = placement ? await writeArtifact(options, { placement, status, finishedAt, message, resumedEnding, pictures }) : null;
  // What depends on the artifact being written (the council's memory) happens only now. Once the
  // saves are begun, the next run may start: it sees them (a store that shows saves in flight), and
  // this run's end is committed only once they land, so a crash still completes the same ending.
  // Memory keeps only a run that ended well (DESIGN.md, Persistence): the saves land only once the
  // pictures are on disk, so a picture that cannot be drawn or written fails them, unwritten.
  // The artifact is read from now on; made durable (its fsyncs) in the tail, beside the next run's first call.
  const flushed = heads.then(() => artifact?.flush());
  flushed.catch(() => undefined); // awaited below, where a failure is reported
  const saving = options.afterArtifact?.(Promise.all([drawing, flushed]).then(() => undefined));
  const freed = !saving || deps.sessions.seesSavesInFlight;
  if (freed) deps.onTail?.(state.run_id);
  tailMayWrite(freed ? deps.afterHeads?.() : undefined);
  const saved = (await saving) ?? [];
  // The pictures and the artifact are on disk before the end is committed (a crash before writes them again, the same).
  await drawing;
  await flushed;
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
  const text = endedText({ status, decision, message, placement });
  return buildOutcome({ runId: state.run_id, status, decision, auditLog: run.log, message: text, artifact: artifactPath });
}

/** What an ending says to people: how it ended, and where its artifact went when the command's path was taken. */
function endedText(end: { status: string; decision: DecisionRecord; message: string; placement: ArtifactPlacement | undefined }): string {
  const { status, decision, message, placement } = end;
  const said =
    status === 'completed'
      ? message
      : `${status === 'guardrail_stopped' ? 'stopped by a guardrail' : 'stopped'} (${decision.layer}: ${decision.reason_code}${decision.sealed ? ', sealed' : ''}): ${message}`;
  const moved = placement && describePlacement(placement);
  return moved ? `${said}\n${moved}` : said;
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

/**
 * Where the ending's artifact goes (artifact-place.ts): fixed with the ending, so an ending completed
 * after a restart writes where it did. Said on the way (a notice) when the command's path was taken.
 */
async function placeArtifact(options: FinishOptions): Promise<ArtifactPlacement | undefined> {
  const { run, deps } = options;
  const plan = run.state.plan;
  if (!options.artifact || !plan) return undefined;
  const suffixes = (options.attachments ?? []).map((a) => a.suffix);
  const placement = run.state.finishing?.artifact ?? (await deps.artifacts.place(plan.output_path, run.state.run_id, suffixes));
  const moved = describePlacement(placement);
  if (moved) deps.onProgress?.({ kind: 'notice', run_id: run.state.run_id, message: moved });
  return placement;
}

/** The artifact's pictures, each beside it (the artifact's name without `.md`, plus the picture's suffix). */
function picturesOf(options: FinishOptions, placement: ArtifactPlacement | undefined): PlacedPicture[] {
  if (!placement) return [];
  return (options.attachments ?? []).map((a) => ({ ...a, path: `${artifactBase(placement.path)}${a.suffix}` }));
}

/** The ending's first commit, telling the pictures drawn meanwhile whether they may be written. */
async function commitEnding(
  run: StartedRun,
  endFixed: (fixed: boolean) => void,
  change: Parameters<StartedRun['commit']>[0],
): Promise<void> {
  try {
    await run.commit(change);
  } catch (error) {
    endFixed(false);
    throw error;
  }
  endFixed(true);
}

/**
 * Draws the pictures and writes each beside the artifact, begun as soon as the run's end is known:
 * drawing runs off the main thread (VegaPictureRenderer), beside the ending's commits, the artifact
 * and the memory save (whose writes wait for it), and is awaited before the end is committed.
 */
function drawPictures(
  deps: RunDeps,
  pictures: readonly PlacedPicture[],
  inputs: readonly string[],
  endFixed: Promise<boolean>,
): Promise<void> {
  const renderer = deps.pictures;
  if (!renderer || pictures.length === 0) return Promise.resolve();
  const drawing = Promise.all(
    pictures.map(async (p) => {
      const svg = await renderer.render(p.picture);
      if (await endFixed) await deps.artifacts.write(p.path, svg, inputs);
    }),
  );
  // Awaited later, where a failure is reported; never an unhandled rejection meanwhile.
  drawing.catch(() => undefined);
  return drawing.then(() => undefined);
}

/** The artifact, when the run has one to write (linking its pictures), and its ARTIFACT_WRITTEN record (committed with the run's end). */
async function writeArtifact(
  options: FinishOptions,
  end: {
    placement: ArtifactPlacement;
    status: 'completed' | 'stopped' | 'guardrail_stopped';
    finishedAt: Date;
    message: string;
    resumedEnding: boolean;
    pictures: readonly PlacedPicture[];
  },
): Promise<{ path: string; record: AuditEvent; flush: () => Promise<void> } | null> {
  const { run, deps, decision } = options;
  const { placement, status, finishedAt, message, resumedEnding, pictures } = end;
  const state = run.state;
  const plan = state.plan;
  if (!options.artifact || !plan) return null;
  deps.onProgress?.({ kind: 'producing_artifact', run_id: state.run_id, path: placement.path });
  const markdown = renderArtifact({
    ...options.artifact,
    pictures: pictures.map((p) => ({ file: p.path.split('/').at(-1) ?? p.path, alt: p.alt })),
    status,
    finishedAt: finishedAt.toISOString(),
    durationMs: finishedAt.getTime() - Date.parse(state.created_at),
    trail: [...state.trail, decision],
    ...(status === 'stopped' ? { outcomeNote: message } : {}),
  });
  const inputs = state.command.input_artifacts;
  // Whole for readers now, durable once `flush` is done (before the run's `finished` commit).
  const { path: artifactPath, flush } = deps.artifacts.writeUnflushed
    ? await deps.artifacts.writeUnflushed(placement.path, markdown, inputs)
    : { path: await deps.artifacts.write(placement.path, markdown, inputs), flush: async () => undefined };
  const written = auditEvent('ARTIFACT_WRITTEN', runDecision('artifact', 'ARTIFACT_WRITTEN'), {
    path: placement.path,
    // The command's path was taken: which, and by what (a run id, or a file maestro did not write).
    ...(placement.taken ? { instead_of: placement.taken.path, left_as_it_is: placement.taken.by } : {}),
    bytes: Buffer.byteLength(markdown),
    sha256: deps.sha256(markdown),
    ...(resumedEnding ? { completed_after_restart: true } : {}),
  });
  return { path: artifactPath, record: written, flush };
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
