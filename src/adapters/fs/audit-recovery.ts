import { chmod, truncate } from 'node:fs/promises';
import { AuditRecord, type AuditEvent } from '../../domain/audit.js';
import { AuditHead, emptyAuditHead, GENESIS_HASH, type Sha256 } from '../../domain/audit-chain.js';
import { splitAuditLines } from '../../domain/audit-verify.js';
import { runDecision } from '../../domain/decision.js';
import { StorageError } from '../../domain/errors.js';
import { writeFileAtomically, type DurableFs } from './atomic-file.js';
import { appendAuditLines, flushAuditFiles, formatAuditHead, missingFromLog, verifyChain } from './audit-wal.js';
import { journalAuditLines } from './run-journal.js';
import { readIfExists, safeJson } from './read.js';

/*
 * Reading and repairing an existing audit log before anything is appended to it: a torn last line
 * cut off, lines zeroed by a power loss written again from the run's journal, the journal's records
 * the log lacks appended, a head that is missing or behind rebuilt from the verified log. Opening a
 * log (JsonlAuditLog) and folding a run's journal (FsRunStore) both come here first.
 */

export interface ChainStart {
  readonly seq: number;
  readonly hash: string;
  /** No log and no head yet: a new run. */
  readonly created: boolean;
  /** A torn last line was cut off: where, and how many bytes. */
  readonly dropped?: { line: number; bytes: number; sha256: string };
  /** Records the run's journal held and the log lacked (a crash before the log was flushed), now appended. */
  readonly restored?: { records: number; first_seq: number };
  /** The head was missing, damaged or behind and the verified log was adopted in its place. */
  readonly adopted?: { head_seq: number | null; head: string; log_seq: number };
  /** The events the log already holds. */
  readonly events: ReadonlySet<string>;
  /** Step ids of its MODEL_CALL records. */
  readonly steps: ReadonlySet<string>;
  /** Bytes of whole lines in the log. */
  readonly size: number;
  /** The head file as found. */
  readonly headText: string | undefined;
}

/**
 * Where a run's chain goes on. The log is the truth and the head a cache: a log whose chain verifies
 * is adopted even when its head is missing, damaged or behind (a crash or a full disk between an
 * append and its head update), and the adoption is recorded. A torn last line is cut, recorded too.
 * Refused (fail closed): a chain that does not verify (edited, reordered, foreign lines) and a log
 * shorter than its head says (truncated) — `maestro audit verify` says why.
 */
export async function recoverChain(options: RecoverOptions): Promise<ChainStart> {
  const start = await chainStart(options);
  // The head is written whole here, at its fixed width and at the log's end (the chain verified), so that appends can rewrite it in place.
  const { runId, headFile } = options;
  const head = start.created ? emptyAuditHead(runId) : { v: 1 as const, run_id: runId, seq: start.seq - 1, hash: start.hash };
  if (start.headText !== formatAuditHead(head)) await writeFileAtomically(headFile, formatAuditHead(head), { mode: 0o600 });
  return start;
}

interface RecoverOptions {
  runId: string;
  file: string;
  headFile: string;
  journalFile: string;
  fs: DurableFs;
  sha256: Sha256;
}

async function chainStart(options: RecoverOptions): Promise<ChainStart> {
  const { runId, file, headFile } = options;
  const log = await readIfExists(file);
  const headText = await readIfExists(headFile);
  const journal = await readIfExists(options.journalFile);
  const refuse = (why: string): StorageError =>
    new StorageError(`the audit log ${file} ${why}; nothing was appended (run "maestro audit verify ${runId}")`, file);
  const head = headText === undefined ? undefined : AuditHead.safeParse(safeJson(headText)).data;

  const ahead = journal === undefined ? [] : journalAuditLines(journal);
  if (log === undefined && ahead.length === 0) {
    if (head && head.run_id === runId && head.seq >= 0)
      throw refuse(`is missing although its head says ${head.seq + 1} record(s) were written`);
    return {
      seq: 0,
      hash: GENESIS_HASH,
      created: head === undefined || head.run_id !== runId,
      events: new Set(),
      steps: new Set(),
      size: 0,
      headText,
    };
  }
  if (log !== undefined) await restrict(file, 0o600);

  const split = keptLines({ runId, log, ahead, sha256: options.sha256, refuse });
  // Records written ahead in the run's journal that the log lacks (a crash after the journal's
  // flush, before the log's): they were acknowledged, and go in before anything else.
  const missing = ahead.length === 0 ? { lines: [] } : missingFromLog(runId, split.lines, ahead, options.sha256);
  if ('problem' in missing) throw refuse(`cannot take the records of its run's journal (${missing.problem})`);
  const lines = [...split.lines, ...missing.lines];
  const whole = lines.length === 0 ? '' : `${lines.join('\n')}\n`;
  const last = lines.length === 0 ? undefined : AuditRecord.safeParse(safeJson(lines[lines.length - 1] ?? '')).data;
  const lastSeq = last?.seq ?? -1;
  if (head && head.run_id === runId && head.seq > lastSeq) {
    throw refuse(`was truncated (its head says ${head.seq + 1} record(s) were written, it holds ${lastSeq + 1})`);
  }

  // Every check passed: now the file changes.
  const { restored, dropped } = await repairLog({ ...options, split, missing: missing.lines });
  const adopted = adoption({ runId, head, headText, lastSeq });
  return {
    seq: lastSeq + 1,
    hash: last?.hash ?? GENESIS_HASH,
    created: false,
    ...chainIndex(lines),
    size: Buffer.byteLength(whole),
    headText,
    ...(dropped ? { dropped } : {}),
    ...(restored ? { restored } : {}),
    ...(adopted ? { adopted } : {}),
  };
}

/** A log's whole lines and the fragment after them. */
interface SplitLog {
  readonly lines: string[];
  readonly torn: string | undefined;
}

/**
 * The log's lines to keep, and what follows them. Its own chain is judged first, against a head that
 * agrees with it: only its lines can fail here.
 */
function keptLines(options: {
  runId: string;
  log: string | undefined;
  ahead: readonly string[];
  sha256: Sha256;
  refuse: (why: string) => StorageError;
}): SplitLog {
  const { runId, log, ahead } = options;
  const split = splitAuditLines(log ?? '');
  const chain = verifyChain(runId, split.lines, options.sha256);
  if (chain.status !== 'broken') return split;
  // Lines written ahead and not yet flushed can come back damaged after a power loss (zeros where
  // a line was, on some file systems). From a damaged line whose record the journal holds on, the
  // log is cut and written again from the journal; any other damage is refused.
  const at = (chain.line ?? 0) - 1;
  const held = new Set(ahead.map((l) => (safeJson(l) as { seq?: unknown } | undefined)?.seq));
  if (chain.line === null || at < 0 || !held.has(at) || verifyChain(runId, split.lines.slice(0, at), options.sha256).status === 'broken') {
    throw options.refuse(`is damaged at line ${chain.line ?? '?'} (${chain.kind}: ${chain.message})`);
  }
  const kept = split.lines.slice(0, at);
  const keptBytes = kept.length === 0 ? 0 : Buffer.byteLength(`${kept.join('\n')}\n`);
  const torn = Buffer.from(log ?? '', 'utf8')
    .subarray(keptBytes)
    .toString('utf8');
  return { lines: kept, torn };
}

/** The log made whole: the journal's missing records appended, or else a torn fragment cut off; each change as it is recorded. */
async function repairLog(options: {
  file: string;
  fs: DurableFs;
  sha256: Sha256;
  split: SplitLog;
  missing: string[];
}): Promise<Pick<ChainStart, 'restored' | 'dropped'>> {
  const { file, split, missing } = options;
  const { torn } = split;
  const wholeBefore = split.lines.length === 0 ? 0 : Buffer.byteLength(`${split.lines.join('\n')}\n`);
  let restored: ChainStart['restored'];
  let dropped: ChainStart['dropped'];
  if (missing.length > 0) {
    await appendAuditLines(options.fs, file, missing, wholeBefore, { cutFirst: torn !== undefined });
    await flushAuditFiles(options.fs, [file]);
    restored = { records: missing.length, first_seq: (safeJson(missing[0] ?? '') as { seq: number }).seq };
  } else if (torn !== undefined) {
    // A write cut short by a crash: the record was never acknowledged, so the fragment is removed.
    await truncate(file, wholeBefore);
  }
  if (torn !== undefined && torn.length > 0)
    dropped = { line: split.lines.length + 1, bytes: Buffer.byteLength(torn), sha256: options.sha256(torn) };
  return { restored, dropped };
}

/** How the head stood when the verified log was adopted in its place; nothing when it agrees with the log (at its end, or one behind). */
function adoption(options: {
  runId: string;
  head: AuditHead | undefined;
  headText: string | undefined;
  lastSeq: number;
}): ChainStart['adopted'] {
  const { head, headText, lastSeq } = options;
  const headSeq = head && head.run_id === options.runId ? head.seq : null;
  const headAgrees = head !== undefined && headSeq !== null && (headSeq === lastSeq || headSeq === lastSeq - 1);
  return headAgrees
    ? undefined
    : {
        head_seq: headSeq,
        head: head === undefined ? (headText === undefined ? 'missing' : 'damaged') : headSeq === null ? 'foreign' : 'behind',
        log_seq: lastSeq,
      };
}

/** The events a log holds, and the step ids of its MODEL_CALL records. */
function chainIndex(lines: readonly string[]): Pick<ChainStart, 'events' | 'steps'> {
  const parsed = lines.map((l) => safeJson(l) as { event?: string; details?: { step_id?: unknown } } | undefined);
  const events = new Set(parsed.map((r) => r?.event).filter((e): e is string => typeof e === 'string'));
  const steps = new Set(
    parsed
      .filter((r) => r?.event === 'MODEL_CALL')
      .map((r) => stepIdOf(r))
      .filter((id): id is string => id !== undefined),
  );
  return { events, steps };
}

/** Puts back the private mode on a folder or file created earlier (or by an older maestro). */
export async function restrict(target: string, mode: number): Promise<void> {
  try {
    await chmod(target, mode);
  } catch (error) {
    throw new StorageError(`could not restrict ${target} to mode ${mode.toString(8)}: ${(error as Error).message}`, target, {
      cause: error,
    });
  }
}

/** What opening the log repaired, as the records that say so (a torn line cut, records restored, the head adopted). */
export function recoveryEvents(start: ChainStart): AuditEvent[] {
  const events: AuditEvent[] = [];
  if (start.dropped)
    events.push({ event: 'AUDIT_LOG_RECOVERED', ...runDecision('audit', 'AUDIT_TORN_LINE_DROPPED'), details: start.dropped });
  if (start.restored) {
    events.push({ event: 'AUDIT_LOG_RECOVERED', ...runDecision('audit', 'AUDIT_RECORDS_RESTORED_FROM_JOURNAL'), details: start.restored });
  }
  if (start.adopted)
    events.push({ event: 'AUDIT_LOG_RECOVERED', ...runDecision('audit', 'AUDIT_HEAD_ADOPTED_FROM_LOG'), details: start.adopted });
  return events;
}

export function stepIdOf(record: { details?: { step_id?: unknown } } | undefined): string | undefined {
  const id = record?.details?.step_id;
  return typeof id === 'string' ? id : undefined;
}

/**
 * Makes a run's audit log hold, on disk, every record its journal carries, and its head name the
 * last: before a journal another process left (a crash), or one whose records could not all be
 * written, is folded away. Opening the log does the same and records it (recoverChain), and a resumed
 * run opens its log first: this is the net under the other paths.
 */
export async function settleAuditFromJournal(options: {
  runId: string;
  file: string;
  headFile: string;
  journalFile: string;
  journal: string | undefined;
  fs: DurableFs;
  sha256: Sha256;
}): Promise<void> {
  const { runId, file, headFile, journalFile, fs } = options;
  const ahead = options.journal === undefined ? [] : journalAuditLines(options.journal);
  if (ahead.length === 0) return;
  const log = (await readIfExists(file)) ?? '';
  const { lines, torn } = splitAuditLines(log);
  const missing = missingFromLog(runId, lines, ahead, options.sha256);
  if ('problem' in missing)
    throw new StorageError(`the checkpoint journal ${journalFile} cannot be folded: ${missing.problem}`, journalFile);
  if (missing.lines.length > 0) {
    await appendAuditLines(fs, file, missing.lines, Buffer.byteLength(log) - (torn === undefined ? 0 : Buffer.byteLength(torn)), {
      cutFirst: torn !== undefined,
    });
  }
  await flushAuditFiles(fs, [file]);
  const lastLine = missing.lines.length > 0 ? missing.lines[missing.lines.length - 1] : lines[lines.length - 1];
  const last = JSON.parse(lastLine ?? '{}') as { seq: number; hash: string };
  const head = formatAuditHead({ v: 1, run_id: runId, seq: last.seq, hash: last.hash });
  if ((await readIfExists(headFile)) !== head) await writeFileAtomically(headFile, head, { mode: 0o600, fs });
  else await flushAuditFiles(fs, [headFile]);
}
