import { readdir, rm, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import { isSafeRunId, runIdStartedAt, selectExpiredLogs, type AuditLogEntry } from '../../domain/audit-retention.js';
import { defaultSensitiveScanner, type SensitiveScanner } from '../../domain/audit-sanitizer.js';
import { verifyAuditLog, type AuditVerification } from '../../domain/audit-verify.js';
import { StorageError } from '../../domain/errors.js';
import { isLiveRun } from '../../domain/run/transitions.js';
import { sha256 } from '../system/hashing.js';
import type { WorkspacePaths } from './workspace-paths.js';
import { listDirOrEmpty, readIfExists, safeJson } from './read.js';
import { JOURNAL_FILE, journalAuditLines, readCheckpoint } from './run-journal.js';
import { logWithJournal } from './audit-wal.js';

/** A run's audit files as text; undefined where a file does not exist. */
export interface AuditRunFiles {
  readonly runId: string;
  readonly log: string | undefined;
  readonly head: string | undefined;
  /** What reading it this way involved (records taken from the run's journal). */
  readonly notes?: readonly string[];
  /** The run has a checkpoint (`state.json` or its journal): it ran, so its log must be there. */
  readonly checkpoint?: boolean;
}

/** Runs with a checkpoint: each must have its log, whatever became of the log's files. */
export async function listCheckpointedRuns(paths: WorkspacePaths): Promise<string[]> {
  const ids = (await listDirOrEmpty(paths.runs)).filter(isSafeRunId).sort();
  const held = await Promise.all(ids.map(async (id) => ((await hasCheckpoint(paths, id)) ? id : undefined)));
  return held.filter((id): id is string => id !== undefined);
}

/** Whether a run still has audit files (its log or head): then its folder stays with them. */
const hasAuditFiles = (paths: WorkspacePaths, runId: string) => anyExists([paths.auditLog(runId), paths.auditHead(runId)]);

const hasCheckpoint = (paths: WorkspacePaths, runId: string) =>
  anyExists(['state.json', JOURNAL_FILE].map((f) => path.join(paths.runDir(runId), f)));

async function anyExists(files: readonly string[]): Promise<boolean> {
  for (const file of files) if (await stat(file).catch(() => undefined)) return true;
  return false;
}

/**
 * A run's log as it stands, with the records its checkpoint journal holds ahead of it (a run going
 * on, or a crash before the log was flushed; the next open of the log writes them: see audit-wal.ts).
 * A head left behind records the journal holds is read as theirs: they were acknowledged with it.
 */
export async function readAuditRun(paths: WorkspacePaths, runId: string): Promise<AuditRunFiles> {
  const log = await readIfExists(paths.auditLog(runId));
  const head = await readIfExists(paths.auditHead(runId));
  const journal = await readIfExists(path.join(paths.runDir(runId), JOURNAL_FILE));
  const ahead = journal === undefined ? [] : journalAuditLines(journal);
  if (log === undefined && head === undefined && ahead.length === 0)
    return { runId, log, head, ...((await hasCheckpoint(paths, runId)) ? { checkpoint: true } : {}) };
  if (ahead.length === 0) return { runId, log, head };
  const merged = logWithJournal(runId, log, ahead, sha256);
  const notes =
    merged.fromJournal > 0
      ? [
          `${merged.fromJournal} record(s) read from the run's checkpoint journal: the log does not hold them yet (a run going on, or a crash; opening the log writes them)`,
        ]
      : [];
  const vouched = headVouchedByJournal(runId, merged.log, head, ahead);
  if (vouched) notes.push(vouched.note);
  return { runId, log: merged.log, head: vouched?.head ?? head, ...(notes.length > 0 ? { notes } : {}) };
}

/** When every record after the head is one the journal holds, the head a step's records moved on to. */
function headVouchedByJournal(
  runId: string,
  log: string | undefined,
  head: string | undefined,
  ahead: readonly string[],
): { head: string; note: string } | undefined {
  if (log === undefined || head === undefined) return undefined;
  const parsedHead = safeJson(head) as { seq?: unknown; hash?: unknown } | undefined;
  const headSeq = parsedHead?.seq;
  const lines = log.split('\n').filter((l) => l.length > 0);
  const last = safeJson(lines[lines.length - 1] ?? '') as { seq?: unknown; hash?: unknown } | undefined;
  if (typeof headSeq !== 'number' || typeof last?.seq !== 'number' || typeof last.hash !== 'string' || headSeq >= last.seq - 1)
    return undefined;
  // The head must name a record of this log, hash and all (a damaged head is reported, not replaced).
  const named = lines.map((l) => safeJson(l) as { seq?: unknown; hash?: unknown } | undefined).find((r) => r?.seq === headSeq);
  if (headSeq >= 0 && named?.hash !== parsedHead?.hash) return undefined;
  const held = new Set(ahead);
  const after = lines.filter((l) => {
    const seq = (safeJson(l) as { seq?: unknown } | undefined)?.seq;
    return typeof seq === 'number' && seq > headSeq;
  });
  if (!after.every((l) => held.has(l))) return undefined;
  return {
    head: JSON.stringify({ v: 1, run_id: runId, seq: last.seq, hash: last.hash }),
    note: `the head lags ${last.seq - headSeq} record(s) behind; the run's checkpoint journal holds them (written with their steps)`,
  };
}

/** Verifies one run's log and head (chain, sequence, truncation, invariants I1–I7). */
export async function verifyAuditRun(
  paths: WorkspacePaths,
  runId: string,
  scanner: SensitiveScanner = defaultSensitiveScanner,
): Promise<AuditVerification> {
  const files = await readAuditRun(paths, runId);
  return verifyAuditLog({ ...files, sha256, scanner });
}

/** Every run with an audit file (log, head, or a stale temporary head), sorted by run id, with when it was last written. */
export async function listAuditRuns(paths: WorkspacePaths): Promise<AuditLogEntry[]> {
  let names: string[];
  try {
    names = await readdir(paths.audit);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw new StorageError(`could not list ${paths.audit}: ${(error as Error).message}`, paths.audit, { cause: error });
  }
  const runs = new Map<string, { files: string[]; lastWrite: number }>();
  for (const name of names.sort()) {
    // `.<run>.head.<pid>.<hex>.tmp` (and the older `<run>.head.<n>`) is a temporary head, left behind
    // only by a crash mid-rewrite; it goes with its run.
    const match = /^(.+)\.(?:jsonl|head(?:\.\d+)?)$/.exec(name) ?? /^\.(.+)\.head\.\d+\.[0-9a-f]+\.tmp$/.exec(name);
    if (!match?.[1]) continue;
    const file = path.join(paths.audit, name);
    let mtime: number;
    try {
      mtime = (await stat(file)).mtimeMs;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue; // removed meanwhile
      throw new StorageError(`could not read ${file}: ${(error as Error).message}`, file, { cause: error });
    }
    const entry = runs.get(match[1]) ?? { files: [], lastWrite: 0 };
    entry.files.push(file);
    entry.lastWrite = Math.max(entry.lastWrite, mtime);
    runs.set(match[1], entry);
  }
  return [...runs.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([runId, e]) => ({ runId, files: e.files.sort(logFirst), lastWrite: new Date(e.lastWrite) }));
}

/** The log first (it is deleted first), then the head, then anything else by name. */
function logFirst(a: string, b: string): number {
  const rank = (f: string): number => (f.endsWith('.jsonl') ? 0 : f.endsWith('.head') ? 1 : 2);
  return rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0);
}

export interface PruneOptions {
  readonly paths: WorkspacePaths;
  /** Logs last written more than this many days before `now` are deleted (`audit.retention_days`). */
  readonly retentionDays: number;
  readonly now: Date;
  /** Say what would be deleted, delete nothing. */
  readonly dryRun?: boolean;
}

export interface PruneReport {
  readonly cutoff: Date;
  readonly dryRun: boolean;
  /** Runs whose log (and head) were deleted, or would be with dryRun, oldest first. */
  readonly deleted: readonly AuditLogEntry[];
  /** Runs whose logs are kept. */
  readonly kept: number;
  /** Checkpoint folders (`.maestro/runs/<id>/`) of ended runs that were deleted (or would be), oldest first. */
  readonly checkpoints: readonly string[];
}

/**
 * Retention: deletes the audit logs (and heads) of runs last written before `now - retentionDays`.
 * `maestro audit prune` calls it, and the watcher at start and once a day. The log goes first, so a
 * crash in between leaves a head alone, which the next prune removes.
 */
export async function pruneAuditLogs(options: PruneOptions): Promise<PruneReport> {
  const live = await liveRuns(options.paths);
  const entries = await listAuditRuns(options.paths);
  const selected = selectExpiredLogs(entries, options.retentionDays, options.now);
  const { cutoff } = selected;
  // A paused (or running) run keeps its log, whatever its age: it may still be continued.
  const expired = selected.expired.filter((e) => !live.has(e.runId));
  const dryRun = options.dryRun === true;
  // The checkpoint of a run whose log goes goes with it: a checkpoint left without its log reads as a deleted log.
  const folders = new Set(await listDirOrEmpty(options.paths.runs));
  const checkpoints = [
    ...new Set([...expired.map((e) => e.runId).filter((id) => folders.has(id)), ...(await expiredCheckpoints(options.paths, cutoff))]),
  ];
  if (!dryRun) {
    for (const entry of expired) {
      for (const file of entry.files) {
        try {
          await unlink(file);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
            throw new StorageError(`could not delete ${file}: ${(error as Error).message}`, file, { cause: error });
          }
        }
      }
    }
  }
  if (!dryRun) {
    for (const runId of checkpoints) {
      try {
        await rm(options.paths.runDir(runId), { recursive: true, force: true });
      } catch (error) {
        throw new StorageError(
          `could not delete ${options.paths.runDir(runId)}: ${(error as Error).message}`,
          options.paths.runDir(runId),
          { cause: error },
        );
      }
    }
  }
  return { cutoff, dryRun, deleted: expired, kept: entries.length - expired.length, checkpoints };
}

/** Runs that may still go on (domain/run/transitions.ts: isLiveRun), and runs whose checkpoint cannot be read: never pruned. */
async function liveRuns(paths: WorkspacePaths): Promise<Set<string>> {
  const live = new Set<string>();
  for (const id of await listDirOrEmpty(paths.runs)) {
    const state = await readStatus(paths, id);
    if (state?.status === undefined || isLiveRun({ status: state.status, decision: state.decision })) live.add(id);
  }
  return live;
}

/** Checkpoint folders of runs that ended (completed, stopped, invalid, error) before `cutoff`, oldest first. */
async function expiredCheckpoints(paths: WorkspacePaths, cutoff: Date): Promise<string[]> {
  const out: { id: string; at: string }[] = [];
  for (const id of await listDirOrEmpty(paths.runs)) {
    if (!isSafeRunId(id)) continue;
    const state = await readStatus(paths, id);
    // A run that died before its first checkpoint left only its command: it goes when its start is past the cutoff.
    const started = runIdStartedAt(id);
    if (state === undefined && started && !(await hasCheckpoint(paths, id))) {
      if (Date.parse(started) < cutoff.getTime() && !(await hasAuditFiles(paths, id))) out.push({ id, at: started });
      continue;
    }
    if (state?.status === undefined || isLiveRun({ status: state.status, decision: state.decision })) continue;
    const at = state.finished_at ?? state.updated_at;
    if (at !== undefined && Date.parse(at) < cutoff.getTime()) out.push({ id, at });
  }
  return out.sort((a, b) => a.at.localeCompare(b.at)).map((x) => x.id);
}

type KeptStatus = { status?: string; decision?: { reason_code?: string }; finished_at?: string; updated_at?: string };

async function readStatus(paths: WorkspacePaths, runId: string): Promise<KeptStatus | undefined> {
  try {
    // The journal of a running run, else state.json.
    return (await readCheckpoint(paths.runDir(runId)))?.json as KeptStatus | undefined;
  } catch {
    return undefined; // unreadable: kept (and treated as live) rather than guessed at
  }
}
