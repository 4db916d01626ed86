import { stat } from 'node:fs/promises';
import path from 'node:path';
import { listAuditOnlyRuns, loadRunState } from './run-catalog.js';
import { FsDecisionInbox } from './decision-inbox.js';
import { FsRunHolds } from './run-holds.js';
import { FsRunLiveness, showRun, type ShownRun } from './run-liveness.js';
import { listClaims } from './inflight-claims.js';
import { readRouteWaits, type ShownWait } from './route-waits.js';
import { isCommandFileName } from '../../domain/queue.js';
import type { PausedRunRow } from '../../domain/pause-notice.js';
import type { FsWatcherRegistry, WatcherListing } from './watcher-registry.js';
import { listDirOrEmpty } from './read.js';
import type { WorkspacePaths } from './workspace-paths.js';
import { screenText } from '../../domain/screen.js';
import { type UnreadableCheckpoint, unreadableCheckpoint } from '../../domain/unreadable-checkpoint.js';

/** What `maestro status` reports; also its `--json` shape. */
export interface WorkspaceStatus {
  readonly workspace: string;
  /** True when at least one watcher's pid file names a live process. */
  readonly watcher_running: boolean;
  /** Pid files; `alive: false` is a stale file left by a watcher that crashed. */
  readonly watchers: readonly WatcherListing[];
  /** Command files waiting in `commands/`, oldest first. */
  readonly queued: readonly { file: string; bytes: number; modified: string }[];
  /** Claimed commands in `.maestro/inflight/`. */
  readonly inflight: readonly {
    run_id: string;
    source: string;
    claimed_at: string | null;
    owner_pid: number | null;
    owner_alive: boolean;
    /** As shown (`interrupted` when no live process holds it), or null before its first checkpoint. */
    run_status: string | null;
    steps_done: number;
    /** Calls of the run waiting for their route's limits now (only while its process is alive). */
    waiting: readonly ShownWait[];
    /**
     * With an engine, the claim is the intake's and the run is the engine's: its queue row (its state
     * and the live worker running it), or null when the engine has not been given it yet; `run_status`
     * and `steps_done` are then the engine's. Absent on files.
     */
    engine?: { readonly queue: string; readonly worker: string | null } | null;
  }[];
  /**
   * Runs whose checkpoint says running but that no live process holds (killed, or the machine went
   * down), oldest first: each resumes with its `next_step`, `maestro run --resume <run_id>`. A run
   * still claimed in `.maestro/inflight/` is not repeated here: `inflight` lists it (`owner_alive: false`).
   */
  readonly interrupted: readonly RunToResume[];
  /**
   * Runs a person chose to continue (`hitl decide … continue`) that no process has taken up yet: the
   * next watcher resumes each, or `next_step` now. Not in `interrupted`: nothing went wrong with them.
   */
  readonly continued: readonly RunToResume[];
  /** Runs paused for a person. */
  readonly paused: readonly (PausedRunRow & {
    /** The route whose outage paused the run (it resumes on its own when the route answers), or null. */
    outage_route: string | null;
  })[];
  /** The most recent runs, newest first: invalid ones too (they have an audit log but no checkpoint). */
  readonly recent: readonly {
    run_id: string;
    /** The command's file name; null for a run only its audit log knows (an invalid command). */
    source: string | null;
    /** As shown: `interrupted` for a run left running that no live process holds. */
    status: string;
    /** The command that moves the run on (resume an interrupted run, decide a paused one), or null. */
    next_step: string | null;
    reason_code: string | null;
    updated_at: string;
    artifact: string | null;
    summary: string | null;
    /** Model calls and tokens the run used (from its checkpoint). */
    usage: { calls: number; prompt_tokens: number; completion_tokens: number };
  }[];
  /** Files in `.maestro/rejected/` (not counting the `.error.json` reports). */
  readonly rejected: number;
  /** Runs whose checkpoint is there but cannot be read (any may wait for a person), each with why and how to look. */
  readonly unreadable_checkpoints: readonly UnreadableCheckpoint[];
}

/** A run that goes on from its checkpoint once a process takes it up. */
interface RunToResume {
  readonly run_id: string;
  readonly source: string;
  readonly updated_at: string;
  readonly steps_done: number;
  readonly next_step: string;
}

interface StateView {
  run_id?: string;
  status?: string;
  /** The status as shown, and what to do next (set once read: see `showStates`). */
  shown?: ShownRun;
  source?: string;
  updated_at?: string;
  artifact?: string;
  summary?: string;
  steps?: unknown[];
  /** The mediator's classification: its calls count with the council's. */
  classification?: unknown;
  decision?: { reason_code?: string };
  pause?: { layer?: string; reason_code?: string; message?: string; requested_at?: string; outage?: { route?: string } };
  /** Known only from its audit log (no checkpoint). */
  auditOnly?: boolean;
  /** Its checkpoint cannot be read: why. */
  unreadable?: UnreadableCheckpoint;
}

/** Reads the workspace's queue and runs; changes nothing. */
export async function readWorkspaceStatus(
  paths: WorkspacePaths,
  registry: Pick<FsWatcherRegistry, 'list' | 'isAlive'>,
  options: { recent?: number } = {},
): Promise<WorkspaceStatus> {
  const watchers = await registry.list();
  const states = await readStates(paths);
  // An invalid command never gets a checkpoint; its audit log says it was run, and how it ended.
  for (const r of await listAuditOnlyRuns(paths, new Set(states.keys()))) {
    states.set(r.run_id, {
      run_id: r.run_id,
      status: r.status,
      updated_at: r.updated_at,
      ...(r.reason_code ? { decision: { reason_code: r.reason_code } } : {}),
      auditOnly: true,
    });
  }
  await showStates(states, new FsRunLiveness(paths, new FsRunHolds(paths), registry));
  const all = [...states.values()].sort(
    (a, b) => (b.updated_at ?? '').localeCompare(a.updated_at ?? '') || (b.run_id ?? '').localeCompare(a.run_id ?? ''),
  );
  const inflight = await readInflight(paths, states, registry);
  // A claimed run whose watcher is gone is listed once, in flight (where the next watcher resumes it).
  const claimed = new Set(inflight.map((f) => f.run_id));
  const toResume = all
    .filter((s) => ['interrupted', 'continued'].includes(s.shown?.status ?? '') && !claimed.has(s.run_id ?? ''))
    .reverse();
  const continued = new Set(await new FsDecisionInbox(paths).pending());
  return {
    workspace: paths.root,
    watcher_running: watchers.some((w) => w.alive),
    watchers,
    queued: await readQueue(paths.commands),
    inflight,
    interrupted: toResume.filter((s) => !continued.has(s.run_id ?? '')).map(toResumeEntry),
    continued: toResume.filter((s) => continued.has(s.run_id ?? '')).map(toResumeEntry),
    paused: all.filter((s) => s.status === 'paused').map(pausedEntry),
    recent: all.slice(0, options.recent ?? 10).map(recentEntry),
    rejected: (await listDirOrEmpty(paths.rejected)).filter((n) => !n.endsWith('.error.json') && !n.startsWith('.')).length,
    unreadable_checkpoints: all.flatMap((r) => (r.unreadable ? [r.unreadable] : [])),
  };
}

/** Sets each run's status as shown: one left `running` that no live process holds is `interrupted`. */
async function showStates(states: Map<string, StateView>, liveness: FsRunLiveness): Promise<void> {
  for (const [id, state] of states) {
    state.shown = await showRun({ ...state, run_id: state.run_id ?? id, status: state.status ?? 'unknown' }, liveness);
  }
}

async function readInflight(
  paths: WorkspacePaths,
  states: ReadonlyMap<string, StateView>,
  registry: Pick<FsWatcherRegistry, 'isAlive'>,
): Promise<WorkspaceStatus['inflight'][number][]> {
  const inflight = [];
  const waits = await readRouteWaits(paths.state);
  for (const c of await listClaims(paths.inflight)) {
    const state = states.get(c.runId);
    const alive = c.owner ? await registry.isAlive(c.owner) : false;
    inflight.push({
      run_id: c.runId,
      source: screenText(c.source),
      claimed_at: c.claimedAt,
      owner_pid: c.owner?.pid ?? null,
      owner_alive: alive,
      run_status: state?.shown?.status ?? null,
      steps_done: state?.steps?.length ?? 0,
      waiting: alive ? (waits.get(c.runId) ?? []).map((w) => ({ ...w, route: screenText(w.route) })) : [],
    });
  }
  return inflight;
}

function toResumeEntry(s: StateView): RunToResume {
  return {
    run_id: s.run_id ?? '',
    source: screenText(s.source ?? ''),
    updated_at: s.updated_at ?? '',
    steps_done: s.steps?.length ?? 0,
    next_step: s.shown?.next_step ?? '',
  };
}

function pausedEntry(s: StateView): WorkspaceStatus['paused'][number] {
  return {
    run_id: s.run_id ?? '',
    source: screenText(s.source ?? ''),
    layer: s.pause?.layer ?? null,
    reason_code: s.pause?.reason_code ?? s.decision?.reason_code ?? null,
    // Read leniently, so checkpoints of every version: screened here as every kept text is.
    message: screenText(s.pause?.message ?? s.summary ?? ''),
    requested_at: s.pause?.requested_at ?? null,
    outage_route: s.pause?.outage?.route ?? null,
  };
}

function recentEntry(s: StateView): WorkspaceStatus['recent'][number] {
  return {
    run_id: s.run_id ?? '',
    source: s.auditOnly ? null : screenText(s.source ?? ''),
    status: s.shown?.status ?? s.status ?? 'unknown',
    next_step: s.unreadable?.look ?? s.shown?.next_step ?? null,
    reason_code: s.decision?.reason_code ?? null,
    updated_at: s.updated_at ?? '',
    artifact: s.artifact ?? null,
    summary: s.summary === undefined ? null : screenText(s.summary.split('\n')[0] ?? ''),
    usage: usageOf(s.classification === undefined ? s.steps : [s.classification, ...(s.steps ?? [])]),
  };
}

function usageOf(steps: unknown[] | undefined): { calls: number; prompt_tokens: number; completion_tokens: number } {
  const total = { calls: 0, prompt_tokens: 0, completion_tokens: 0 };
  for (const step of steps ?? []) {
    const s = step as { calls?: number; usage?: { prompt_tokens?: number; completion_tokens?: number } };
    total.calls += typeof s.calls === 'number' ? s.calls : 1;
    total.prompt_tokens += s.usage?.prompt_tokens ?? 0;
    total.completion_tokens += s.usage?.completion_tokens ?? 0;
  }
  return total;
}

async function readQueue(dir: string): Promise<WorkspaceStatus['queued'][number][]> {
  const out = [];
  for (const name of (await listDirOrEmpty(dir)).filter(isCommandFileName)) {
    const info = await stat(path.join(dir, name)).catch(() => undefined);
    if (info?.isFile()) out.push({ file: name, bytes: info.size, modified: info.mtime.toISOString(), mtimeMs: info.mtimeMs });
  }
  return out.sort((a, b) => a.mtimeMs - b.mtimeMs || a.file.localeCompare(b.file)).map(({ mtimeMs: _, ...rest }) => rest);
}

/** Every run's checkpoint, read leniently: status must never fail because one file is odd. */
async function readStates(paths: WorkspacePaths): Promise<Map<string, StateView>> {
  const states = new Map<string, StateView>();
  for (const id of await listDirOrEmpty(paths.runs)) {
    try {
      // A run folder is created just before its first checkpoint: none yet is not a problem. A checkpoint no
      // reader can load (not JSON, empty, its schema) cannot be decided or resumed either: it is unreadable.
      const state = await loadRunState(paths, id);
      if (state) states.set(id, state as StateView);
    } catch (error) {
      // Never left out: any of them may wait for a person (status lists them, with why and how to look).
      states.set(id, { run_id: id, status: 'unreadable', unreadable: unreadableCheckpoint(id, error) });
    }
  }
  return states;
}
