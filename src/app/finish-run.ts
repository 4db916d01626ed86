import { renderArtifact, type ArtifactInput } from '../domain/artifact.js';
import { type ArtifactPlacement, artifactBase, describePlacement } from '../domain/artifact-place.js';
import { auditEvent, type AuditDetails, type AuditEvent } from '../domain/audit.js';
import { runDecision, type DecisionRecord } from '../domain/decision.js';
import type { ArtifactAttachment } from '../domain/modes/mode.js';
import type { RunFile, StartedRun } from '../domain/ports.js';
import { buildOutcome } from '../domain/run-machine.js';
import type { PauseClass } from '../domain/run/policy.js';
import { RAW_COMMAND_FILE, screenText } from '../domain/screen.js';
import { screenStrings } from '../domain/screen-text.js';
import { runCalls, totalUsage } from '../domain/usage.js';
import type { RunDeps, RunOutcome } from './run-deps.js';

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

export interface EndOptions {
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

export type FinishOptions = EndOptions & {
  artifact?: DraftInput;
  attachments?: readonly ArtifactAttachment[];
  afterArtifact?: AfterArtifact;
  status?: 'stopped' | 'guardrail_stopped';
};

/** Runs once the artifact and its pictures are on disk (the council's memory); returns the records the run's `finished` commit carries. */
export type AfterArtifact = () => Promise<readonly AuditEvent[]>;

/** Ends a run as completed (decision RUN) or stopped, writing the artifact when there is one. */
export async function finishRun(options: FinishOptions): Promise<RunOutcome> {
  const { run, deps, decision } = options;
  const message = screenText(options.message);
  // Completing an ending after a restart: what the log already says happened is not said again.
  const resumedEnding = run.state.finishing !== undefined;
  const status = decision.decision === 'RUN' ? 'completed' : (options.status ?? run.state.finishing?.status ?? 'stopped');
  // The end is put on the checkpoint before anything is written, with its time: a run killed between
  // the artifact and its last save ends the same way when recovered, byte for byte.
  const finishedAt = new Date(run.state.finishing?.finished_at ?? deps.clock.now().toISOString());
  // Where the artifact goes is fixed with the ending (a restart writes where it did); its pictures are
  // written only once the end is on the checkpoint: a commit that fails leaves no picture without its artifact.
  const placement = await placeArtifact(options);
  const pictures = picturesOf(options, placement);
  const { lead } = options;
  // A stop cannot be concluded again after a crash (a person's stop, a guardrail's, the loop policy's
  // came from outside the council's steps): what its artifact is made of is kept with its ending.
  const kept = placement && status !== 'completed' && !resumedEnding ? [stopArtifactFile(options)] : [];
  await run.commit({
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
    files: kept,
  });
  const state = run.state;
  const artifact = placement ? await writeArtifact(options, { placement, status, finishedAt, message, resumedEnding, pictures }) : null;
  for (const p of pictures) await deps.artifacts.write(p.path, p.content, state.command.input_artifacts);
  // What depends on the artifact and its pictures being on disk (the council's memory) happens only
  // now: memory keeps only a run that ended well (DESIGN.md, Persistence).
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
    removeFiles: status === 'completed' ? [RAW_COMMAND_FILE] : [RAW_COMMAND_FILE, STOP_ARTIFACT_FILE],
    completesEnding: resumedEnding,
  });
  const text = endedText({ status, decision, message, placement });
  return buildOutcome({ runId: state.run_id, status, decision, auditLog: run.log, message: text, artifact: artifactPath });
}

const STOP_ARTIFACT_FILE = 'stop-artifact.json';

/** `stop-artifact.json`: a stop's message and its artifact's input (the persona names as pairs). */
type Kept = {
  readonly message: string;
  readonly artifact: (Omit<DraftInput, 'personaNames'> & { readonly personaNames: [string, string][] }) | undefined;
  readonly attachments: readonly ArtifactAttachment[];
};

/**
 * What a stop says and its artifact is made of, as a run file (see `keptStop`): its texts screened, as
 * every file a run keeps is (the artifact rendered from them is screened whole again). The pictures are
 * drawn from numbers and persona ids, and are kept as they are.
 */
function stopArtifactFile(options: FinishOptions): RunFile {
  const artifact = options.artifact && screenStrings({ ...options.artifact, personaNames: [...options.artifact.personaNames] });
  const kept: Kept = { message: screenText(options.message), artifact, attachments: options.attachments ?? [] };
  return { name: STOP_ARTIFACT_FILE, content: `${JSON.stringify(kept)}\n` };
}

/**
 * What a stop whose ending was fixed before a crash says, and the artifact it writes: what the first
 * attempt kept (`stop-artifact.json`). Without it (the stop had no artifact) the run ends as it began,
 * saying what its state says, without an artifact; a kept file that cannot be read as one is said too
 * (a notice, and in the run's message), never passed over.
 */
export async function keptStop(
  deps: RunDeps,
  run: StartedRun,
): Promise<{ message: string; draft?: DraftInput; attachments?: readonly ArtifactAttachment[] }> {
  const said = run.state.summary ?? `ended (${run.state.finishing?.decision.reason_code})`;
  const text = await deps.ledger.readFile(run.runId, STOP_ARTIFACT_FILE);
  if (text === undefined) return { message: said };
  const kept = readKept(text);
  if (typeof kept === 'string') {
    const lost = `${STOP_ARTIFACT_FILE} of this stop cannot be read (${kept}): the run ends without its artifact`;
    deps.onProgress?.({ kind: 'notice', run_id: run.runId, message: lost });
    return { message: `${said} (${lost})` };
  }
  if (!kept.artifact) return { message: said };
  const draft = { ...kept.artifact, personaNames: new Map(kept.artifact.personaNames) };
  return { message: kept.message, draft, attachments: kept.attachments };
}

/** A kept stop as written by `stopArtifactFile`, or what is wrong with the text. */
function readKept(text: string): Kept | string {
  let json: Partial<Kept>;
  try {
    json = JSON.parse(text) as Partial<Kept>;
  } catch (error) {
    return `not JSON: ${(error as Error).message}`;
  }
  if (typeof json?.message !== 'string') return 'no message';
  if (json.artifact !== undefined && !Array.isArray(json.artifact?.personaNames)) return 'no persona names in its artifact';
  if (json.attachments !== undefined && !Array.isArray(json.attachments)) return 'its attachments are not a list';
  return { message: json.message, artifact: json.artifact, attachments: json.attachments ?? [] };
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
): Promise<{ path: string; record: AuditEvent } | null> {
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
  const artifactPath = await deps.artifacts.write(placement.path, markdown, state.command.input_artifacts);
  const written = auditEvent('ARTIFACT_WRITTEN', runDecision('artifact', 'ARTIFACT_WRITTEN'), {
    path: placement.path,
    // The command's path was taken: which, and by what (a run id, or a file maestro did not write).
    ...(placement.taken ? { instead_of: placement.taken.path, left_as_it_is: placement.taken.by } : {}),
    bytes: Buffer.byteLength(markdown),
    sha256: deps.sha256(markdown),
    ...(resumedEnding ? { completed_after_restart: true } : {}),
  });
  return { path: artifactPath, record: written };
}
