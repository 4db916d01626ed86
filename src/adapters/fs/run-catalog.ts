import { servedByRun, servedLabel, type ServedBy } from '../../domain/served-by.js';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Price, PromptSplit } from '../../domain/budget.js';
import { parseRunState } from '../../domain/checkpoint.js';
import type { RunState } from '../../domain/run-state.js';
import { runIdStartedAt } from '../../domain/audit-retention.js';
import { CheckpointUnreadableError, schemaProblem } from '../../domain/errors.js';
import { type UnreadableCheckpoint, unreadableCheckpoint } from '../../domain/unreadable-checkpoint.js';
import { RAW_COMMAND_FILE, screenText, taskLine } from '../../domain/screen.js';
import { runCalls, totalUsage } from '../../domain/usage.js';
import { listDirOrEmpty, readIfExists } from './read.js';
import { showRun, type RunLiveness, type ShownRun } from './run-liveness.js';
import { readCheckpoint } from './run-journal.js';
import type { WorkspacePaths } from './workspace-paths.js';

/** One run as `maestro runs` lists it (also its `--json` shape). */
export interface RunListing {
  readonly run_id: string;
  /**
   * running | interrupted | paused | completed | stopped | invalid | error, or `unknown` when only a
   * partial record is left. `interrupted`: the checkpoint says running, but no live process holds it.
   */
  readonly status: string;
  /** The command that moves the run on (`maestro run --resume <id>` when interrupted), or null. */
  readonly next_step: string | null;
  /** Interrupted, and queued again in the engine: the next free worker resumes it (absent otherwise). */
  readonly requeued?: true;
  readonly reason_code: string | null;
  /** Where the command came from (its file name), when known. */
  readonly source: string | null;
  /** The task's first line, with anything the detector flags redacted; null when the command was not valid. */
  readonly task: string | null;
  /** What was redacted from the command the checkpoint keeps: categories, never values. */
  readonly redacted: readonly string[];
  /** The model that served the run's calls; after a REROUTE, each with its calls (`a (3 calls) → b (5 calls)`). */
  readonly model: string | null;
  /** Which route and model served how many calls, in order. */
  readonly served_by: readonly ServedBy[];
  readonly calls: number;
  readonly prompt_tokens: number;
  readonly completion_tokens: number;
  /** Of the prompt tokens, those the endpoints' prompt caches served (`prompt_tokens_details.cached_tokens`). */
  readonly cached_tokens: number;
  /** Where the prompt tokens went: instructions, memory, task and inputs, deliberation. */
  readonly prompt_split: PromptSplit;
  /** USD, when every model the run used has a price in the workspace config. */
  readonly cost_usd: number | null;
  readonly started_at: string;
  readonly updated_at: string;
  readonly artifact: string | null;
  /** Status `unreadable`: why its checkpoint cannot be read (`not valid JSON`, `empty`, `schema: …`); absent otherwise. */
  readonly checkpoint_unreadable?: string;
}

/**
 * Every run of the workspace, newest first: those with a checkpoint (`.maestro/runs/<id>/state.json`)
 * and those only the audit log knows (a command that was invalid never gets a checkpoint).
 */
export async function listRuns(
  paths: WorkspacePaths,
  prices: Readonly<Record<string, Price>>,
  liveness: RunLiveness,
): Promise<RunListing[]> {
  const runs = new Map<string, RunListing>();
  const unreadable = new Map<string, UnreadableCheckpoint>();
  const bare: string[] = [];
  for (const id of await listDirOrEmpty(paths.runs)) {
    try {
      const state = await loadRunState(paths, id);
      if (state) runs.set(id, fromState(state, prices, await showRun(state, liveness)));
      else bare.push(id);
    } catch (error) {
      unreadable.set(id, unreadableCheckpoint(id, error));
    }
  }
  // A run whose checkpoint does not read is listed as such, with the times its audit log gives.
  const beside = await listAuditOnlyRuns(paths, new Set(runs.keys()));
  for (const listing of beside) runs.set(listing.run_id, listing);
  for (const id of bare) if (!runs.has(id)) runs.set(id, await beforeCheckpoint(paths, id, liveness));
  for (const u of unreadable.values()) runs.set(u.run_id, unreadableListing(u, runs.get(u.run_id)));
  return [...runs.values()].sort((a, b) => b.started_at.localeCompare(a.started_at) || b.run_id.localeCompare(a.run_id));
}

/**
 * A run folder with no checkpoint and no log records: a run starting now (its holder is live), or one
 * that died before its first checkpoint (`unknown`), whose command is kept beside it to be run again.
 */
async function beforeCheckpoint(paths: WorkspacePaths, id: string, liveness: RunLiveness): Promise<RunListing> {
  const file = path.join(paths.runDir(id), RAW_COMMAND_FILE);
  const raw = await readIfExists(file).catch(() => undefined);
  const at = runIdStartedAt(id) ?? '';
  const held = await liveness.isHeld(id);
  return {
    ...blankListing(id, at, at),
    status: held ? 'running' : 'unknown',
    task: raw === undefined ? null : taskOf(raw),
    next_step: held || raw === undefined ? null : `maestro run ${paths.relative(file)}`,
  };
}

function taskOf(raw: string): string | null {
  try {
    const task = (JSON.parse(raw) as { task_description?: unknown }).task_description;
    return typeof task === 'string' ? taskLine(task) : null;
  } catch {
    return null;
  }
}

/** A run whose checkpoint cannot be read, as `maestro runs` and the console list it: `from`, its audit log's listing, gives its times. */
export function unreadableListing(u: UnreadableCheckpoint, from?: RunListing): RunListing {
  const base = from ?? blankListing(u.run_id, '', '');
  return { ...base, status: 'unreadable', next_step: u.look, reason_code: null, checkpoint_unreadable: u.problem };
}

/**
 * The runs only the audit log knows, leaving out the ids in `known` (those with a checkpoint): a
 * command that was invalid (status `invalid`), or a run that died before its first checkpoint (`unknown`).
 */
export async function listAuditOnlyRuns(paths: WorkspacePaths, known: ReadonlySet<string>): Promise<RunListing[]> {
  const out: RunListing[] = [];
  for (const name of await listDirOrEmpty(paths.audit)) {
    if (!name.endsWith('.jsonl')) continue;
    const id = name.slice(0, -'.jsonl'.length);
    if (known.has(id)) continue;
    const listing = await fromAuditLog(path.join(paths.audit, name), id);
    if (listing) out.push(listing);
  }
  return out;
}

/** A run's checkpoint (its journal replayed while it runs), or undefined when there is none or it cannot be read. */
export async function readRunState(paths: WorkspacePaths, runId: string): Promise<RunState | undefined> {
  return loadRunState(paths, runId).catch(() => undefined);
}

/** A run's checkpoint, or undefined when there is none; a CheckpointUnreadableError when it is there and does not read. */
export async function loadRunState(paths: WorkspacePaths, runId: string): Promise<RunState | undefined> {
  const read = await readCheckpoint(paths.runDir(runId));
  if (read === undefined) return undefined;
  const parsed = parseRunState(read.json);
  if (!parsed.ok) {
    const message = `the run checkpoint ${read.file} is invalid: ${parsed.issues.join('; ')}`;
    throw new CheckpointUnreadableError(message, read.file, schemaProblem(parsed.issues));
  }
  return parsed.value;
}

/** A run's orchestration result (`orchestration.json`, seed 001) as kept, parsed; undefined when it has none or it cannot be read. */
export async function readRunOrchestration(paths: WorkspacePaths, runId: string): Promise<unknown> {
  if (!/^[A-Za-z0-9_.-]+$/.test(runId)) return undefined;
  const text = await readIfExists(path.join(paths.runDir(runId), 'orchestration.json')).catch(() => undefined);
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** One run's listing from its checkpoint (also the engine's runs, compose/engine-runs.ts). */
export function fromState(state: RunState, prices: Readonly<Record<string, Price>>, shown: ShownRun): RunListing {
  const usage = totalUsage(runCalls(state), prices);
  return {
    run_id: state.run_id,
    status: shown.status,
    next_step: shown.next_step,
    ...(shown.requeued ? { requeued: shown.requeued } : {}),
    // A pause's reason while it waits; once a person (or anything) ended the run, what ended it (HITL_STOP: a person's stop).
    reason_code: (state.status === 'paused' ? state.pause?.reason_code : undefined) ?? state.decision?.reason_code ?? null,
    source: screenText(state.source),
    task: taskLine(state.command.task_description),
    redacted: state.command_redacted ?? [],
    model: servedLabel(state.plan?.model, servedByRun(state)),
    served_by: servedByRun(state),
    calls: usage.calls,
    prompt_tokens: usage.prompt_tokens,
    completion_tokens: usage.completion_tokens,
    cached_tokens: usage.cached_tokens,
    prompt_split: usage.prompt_split,
    cost_usd: usage.cost_usd ?? null,
    started_at: state.created_at,
    updated_at: state.updated_at,
    artifact: state.artifact ?? null,
  };
}

interface AuditLineView {
  ts?: string;
  event?: string;
  reason_code?: string;
}

/** A run known only from its audit log: an invalid command, or a run that died before its first checkpoint. */
async function fromAuditLog(file: string, runId: string): Promise<RunListing | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    return undefined;
  }
  return fromAuditText(text, runId);
}

/** A run known only from its audit records (one JSON line each): the file's text, or the engine's rows. */
export function fromAuditText(text: string, runId: string): RunListing | undefined {
  const records: AuditLineView[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      records.push(JSON.parse(line) as AuditLineView);
    } catch {
      // A torn last line: what came before still says what happened.
    }
  }
  if (records.length === 0) return undefined;
  const invalid = records.find((r) => r.event === 'COMMAND_INVALID');
  const first = records[0]?.ts ?? '';
  return {
    ...blankListing(runId, first, records.at(-1)?.ts ?? first),
    status: invalid ? 'invalid' : 'unknown',
    reason_code: invalid?.reason_code ?? null,
  };
}

/** A run of which nothing but its id and times is known. */
function blankListing(runId: string, startedAt: string, updatedAt: string): RunListing {
  return {
    run_id: runId,
    status: 'unknown',
    next_step: null,
    reason_code: null,
    source: null,
    task: null,
    redacted: [],
    model: null,
    served_by: [],
    calls: 0,
    prompt_tokens: 0,
    completion_tokens: 0,
    cached_tokens: 0,
    prompt_split: { instructions: 0, memory: 0, task: 0, deliberation: 0 },
    cost_usd: 0,
    started_at: startedAt,
    updated_at: updatedAt,
    artifact: null,
  };
}
