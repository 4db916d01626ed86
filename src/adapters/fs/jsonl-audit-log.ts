import { chmod, truncate } from 'node:fs/promises';
import path from 'node:path';
import { AuditRecord, unchainedRecord, type AuditEvent } from '../../domain/audit.js';
import { AuditHead, emptyAuditHead, GENESIS_HASH, type Sha256 } from '../../domain/audit-chain.js';
import { composeAuditLine } from '../../domain/audit-line.js';
import { isSafeRunId } from '../../domain/audit-retention.js';
import { cachedScanner, defaultSensitiveScanner, findSensitiveResidue, type SensitiveScanner } from '../../domain/audit-sanitizer.js';
import { splitAuditLines } from '../../domain/audit-verify.js';
import { runDecision } from '../../domain/decision.js';
import { StorageError } from '../../domain/errors.js';
import type { Clock } from '../../domain/ports.js';
import type { AuditAhead, AuditLog, AuditSink } from './audit-sink.js';
import { ensurePrivateDir, flushData, realFs, writeFileAtomically, writeFully, type DurableFs, type DurableHandle } from './atomic-file.js';
import { appendAuditLines, flushAuditFiles, formatAuditHead, missingFromLog, rewriteHeadInPlace, verifyChain } from './audit-wal.js';
import { JOURNAL_FILE, journalAuditLines } from './run-journal.js';

export { formatAuditHead } from './audit-wal.js';
import { sha256 as nodeSha256 } from '../system/hashing.js';
import type { WorkspacePaths } from './workspace-paths.js';
import { readIfExists, safeJson } from './read.js';

export interface JsonlAuditLogOptions {
  /** The sensitive-content detector; default: `domain/sensitive` (its answers for short strings cached). Tests pass one that throws. */
  readonly scanner?: SensitiveScanner;
  readonly sha256?: Sha256;
  /** The calls that append to the log and rewrite its head (tests inject ENOSPC). */
  readonly fs?: DurableFs;
}

/**
 * `.maestro/audit/<run_id>.jsonl`: append-only, one sanitized, hash-chained record per line, each
 * flushed to disk (datasync) before `append` resolves, then acknowledged in `<run_id>.head` (a
 * fixed-width line rewritten in place; see JsonlAuditSink). Folder 0700, files 0600. Records are
 * schema-checked on write.
 */
export class JsonlAuditLog implements AuditLog {
  readonly #scanner: SensitiveScanner;
  readonly #sha256: Sha256;
  readonly #fs: DurableFs;

  constructor(
    private readonly paths: WorkspacePaths,
    private readonly clock: Clock,
    options: JsonlAuditLogOptions = {},
  ) {
    this.#scanner = options.scanner ?? cachedScanner(defaultSensitiveScanner);
    this.#sha256 = options.sha256 ?? nodeSha256;
    this.#fs = options.fs ?? realFs;
  }

  /**
   * Opens a run's log, continuing its chain when the run is resumed. A fragment left by a crash
   * mid-write is cut off and the cut is recorded (`AUDIT_TORN_LINE_DROPPED`). A log that is
   * damaged, truncated or has lost its head is refused (fail closed): `maestro audit verify` says why.
   */
  async open(runId: string): Promise<AuditSink> {
    const file = this.paths.auditLog(runId);
    if (!isSafeRunId(runId) || this.#looksSensitive(runId)) {
      // The id is not repeated: it may be what must not be shown.
      throw new StorageError(
        'refusing to open an audit log for this run id: run ids name files, so they must be plain names free of personal data',
        file,
      );
    }
    await ensurePrivateDir(this.paths.audit);
    await restrict(this.paths.audit, 0o700);
    const headFile = this.paths.auditHead(runId);
    const start = await recoverChain({
      runId,
      file,
      headFile,
      journalFile: path.join(this.paths.runDir(runId), JOURNAL_FILE),
      fs: this.#fs,
      sha256: this.#sha256,
    });
    const sink = new JsonlAuditSink({
      file,
      headFile,
      runId,
      seq: start.seq,
      prevHash: start.hash,
      size: start.size,
      fs: this.#fs,
      clock: this.clock,
      scanner: this.#scanner,
      sha256: this.#sha256,
      recorded: start.events,
      steps: start.steps,
    });
    // The head is written whole here, at its fixed width and at the log's end (the chain verified), so that appends can rewrite it in place.
    const head = start.created ? emptyAuditHead(runId) : { v: 1 as const, run_id: runId, seq: start.seq - 1, hash: start.hash };
    if (start.headText !== formatAuditHead(head)) await writeFileAtomically(headFile, formatAuditHead(head), { mode: 0o600 });
    if (start.dropped) {
      await sink.append({ event: 'AUDIT_LOG_RECOVERED', ...runDecision('audit', 'AUDIT_TORN_LINE_DROPPED'), details: start.dropped });
    }
    if (start.restored) {
      await sink.append({
        event: 'AUDIT_LOG_RECOVERED',
        ...runDecision('audit', 'AUDIT_RECORDS_RESTORED_FROM_JOURNAL'),
        details: start.restored,
      });
    }
    if (start.adopted) {
      await sink.append({ event: 'AUDIT_LOG_RECOVERED', ...runDecision('audit', 'AUDIT_HEAD_ADOPTED_FROM_LOG'), details: start.adopted });
    }
    return sink;
  }

  /** A run id that reads as personal data (digits like a card or a phone) would leak through the file name. */
  #looksSensitive(runId: string): boolean {
    try {
      return findSensitiveResidue(runId, this.#scanner).length > 0;
    } catch {
      // A failing detector must not stop the run (its records fail closed one by one); the id
      // has passed isSafeRunId, so it holds no `@` and no path.
      return false;
    }
  }
}

interface SinkOptions {
  readonly file: string;
  readonly headFile: string;
  readonly runId: string;
  readonly seq: number;
  readonly prevHash: string;
  /** Bytes of whole lines in the log when it was opened. */
  readonly size: number;
  readonly fs: DurableFs;
  readonly clock: Clock;
  readonly scanner: SensitiveScanner;
  readonly sha256: Sha256;
  /** Events already in the log when it was opened. */
  readonly recorded: ReadonlySet<string>;
  /** Step ids of the MODEL_CALL records already in the log. */
  readonly steps: ReadonlySet<string>;
}

/**
 * Appends records in the order they were handed over (callers need not await), two ways:
 *
 * - `append`: the line is written and flushed (datasync) before it resolves; the head is then rewritten in place (one fixed-width line, no new file, no rename) and
 *   flushed in the background, and the next line waits for that flush. So the head is never ahead of
 *   the log, and never more than one record behind it, after a killed process or a power loss alike.
 * - `appendAhead`: a run change's records (a step's) are composed here and made durable by the run
 *   store in the same journal line as the change (one flush for both), which then appends them to
 *   the log and rewrites the head, unflushed. While the journal exists it vouches for them: opening
 *   the log takes what it lacks from the journal, and the store flushes the log and the head before
 *   it folds the journal away (audit-wal.ts).
 */
class JsonlAuditSink implements AuditSink {
  readonly path: string;
  #seq: number;
  #prevHash: string;
  /** Bytes of whole lines in the log; a failed write is cut back to this. */
  #size: number;
  /** The last write handed over: the next one starts after it. */
  #tail: Promise<void> = Promise.resolve();
  /** The failure that stopped this sink, if one did. */
  #failed: StorageError | undefined;
  /** The background flush of the head's last rewrite (never rejects: the head is a cache). */
  #headSync: Promise<void> = Promise.resolve();
  /** Records written ahead moved the head (in place, unflushed) since it was last flushed. */
  #headMovedAhead = false;
  readonly #recorded: Set<string>;
  readonly #steps: Set<string>;

  constructor(private readonly options: SinkOptions) {
    this.path = options.file;
    this.#seq = options.seq;
    this.#prevHash = options.prevHash;
    this.#size = options.size;
    this.#recorded = new Set(options.recorded);
    this.#steps = new Set(options.steps);
  }

  hasRecorded(event: string): boolean {
    return this.#recorded.has(event);
  }

  recordedSteps(): ReadonlySet<string> {
    return this.#steps;
  }

  append(event: AuditEvent): Promise<void> {
    return this.#serialised(() => this.#write(event));
  }

  /**
   * The records are composed (sanitized, chained) and handed to `persist`, which makes them durable
   * with the run's change (the journal line) and writes them to this log, unflushed: one flush for a
   * step and its records instead of one each (see audit-wal.ts).
   */
  appendAhead(events: readonly AuditEvent[], persist: (ahead: AuditAhead) => Promise<void>): Promise<void> {
    return this.#serialised(() => this.#writeAhead(events, persist));
  }

  /** Writes are serialised so sequence numbers and the chain match line order even when callers do not await. */
  #serialised(write: () => Promise<void>): Promise<void> {
    // A sink whose write failed takes nothing more: the run ends, and whoever records that opens the log afresh.
    const done = this.#tail.then(() => (this.#failed ? Promise.reject(this.#failed) : write()));
    this.#tail = done.catch(() => undefined);
    return done;
  }

  /** Composes records after the chain's end, without moving it: lines, what they record, and where the chain would be. */
  #compose(events: readonly AuditEvent[]): { lines: string[]; written: { event: string; step?: string }[]; seq: number; prevHash: string } {
    const { runId, clock, scanner, sha256 } = this.options;
    let seq = this.#seq;
    let prevHash = this.#prevHash;
    const lines: string[] = [];
    const written: { event: string; step?: string }[] = [];
    for (const event of events) {
      const raw = unchainedRecord(event, { runId: runId, seq: seq, ts: clock.now().toISOString() });
      // Throws only when `raw` is not a record at all: a bug in the caller.
      const composed = composeAuditLine(raw, prevHash, { scanner, sha256 });
      lines.push(composed.line);
      const step = composed.record.event === 'MODEL_CALL' ? stepIdOf(composed.record) : undefined;
      written.push({ event: composed.record.event, ...(step ? { step } : {}) });
      seq += 1;
      prevHash = composed.record.hash;
    }
    return { lines, written, seq, prevHash };
  }

  /** The chain moves on past lines that are now in the log. */
  #advance(composed: {
    lines: readonly string[];
    written: readonly { event: string; step?: string }[];
    seq: number;
    prevHash: string;
  }): void {
    for (const line of composed.lines) this.#size += Buffer.byteLength(line) + 1;
    this.#seq = composed.seq;
    this.#prevHash = composed.prevHash;
    for (const w of composed.written) {
      this.#recorded.add(w.event);
      if (w.step) this.#steps.add(w.step);
    }
  }

  async #writeAhead(events: readonly AuditEvent[], persist: (ahead: AuditAhead) => Promise<void>): Promise<void> {
    // Throws only when an event is not a record at all: nothing was written, nor the change it came with.
    const composed = this.#compose(events);
    const { file, runId } = this.options;
    // A record appended on its own just before has its head flushed first: on disk the head then
    // stands at it or after it, and every record past it is one the journal holds.
    await this.#headSync;
    try {
      await persist({
        log: file,
        lines: composed.lines,
        last: { seq: composed.seq - 1, hash: composed.prevHash },
        logBytes: this.#size,
      });
    } catch (error) {
      // The journal may hold the records although the log does not: this sink stops, and opening
      // the log afresh takes them from the journal.
      this.#failed =
        error instanceof StorageError
          ? error
          : new StorageError(`could not record audit records of run ${runId}: ${(error as Error).message}`, file, { cause: error });
      throw error;
    }
    this.#advance(composed);
    this.#headMovedAhead = true;
  }

  async #write(event: AuditEvent): Promise<void> {
    // Throws only when the event is not a record at all: a bug in the caller, refused alone.
    const composed = this.#compose([event]);
    const data = Buffer.from(`${composed.lines.join('\n')}\n`, 'utf8');
    // The head on disk must not fall two writes behind: its last rewrite is flushed before this write,
    // and so is a head that records written ahead moved (they are in the journal; this one will not be).
    await this.#headSync;
    let failure = (await this.#flushHeadAhead()) ?? (await this.#appendLines(data));
    if (!failure) {
      // The lines are on disk: the chain moves on even if acknowledging them below fails.
      this.#advance(composed);
      failure = await this.#rewriteHead(composed.seq - 1, composed.prevHash);
    }
    if (failure) {
      this.#failed = failure;
      throw failure;
    }
  }

  /** Flushes a head that records written ahead moved; the failure, if it could not. */
  async #flushHeadAhead(): Promise<StorageError | undefined> {
    if (!this.#headMovedAhead) return undefined;
    try {
      await flushAuditFiles(this.options.fs, [this.options.headFile]);
      this.#headMovedAhead = false;
      return undefined;
    } catch (error) {
      return new StorageError(
        `could not flush the audit head ${this.options.headFile}: ${(error as Error).message}`,
        this.options.headFile,
        { cause: error, ...errno(error) },
      );
    }
  }

  /** Appends the lines to the log and syncs them; the failure, if it could not (with the partial lines cut off). */
  async #appendLines(data: Buffer): Promise<StorageError | undefined> {
    const { file, fs } = this.options;
    let handle: DurableHandle | undefined;
    try {
      handle = await fs.open(file, 'a', 0o600);
      await writeFully(handle, data);
      await flushData(handle);
      return undefined;
    } catch (error) {
      // Whatever part of the lines reached the file was never acknowledged: cut it, so the next write starts on a clean line.
      await handle?.truncate?.(this.#size).catch(() => undefined);
      return new StorageError(`could not append to the audit log ${file}: ${(error as Error).message}`, file, {
        cause: error,
        ...errno(error),
      });
    } finally {
      await handle?.close().catch(() => undefined);
    }
  }

  /** Rewrites the head to the chain's new end and flushes it in the background; the failure, if it could not. */
  async #rewriteHead(seq: number, hash: string): Promise<StorageError | undefined> {
    const { fs, headFile, runId } = this.options;
    try {
      this.#headSync = flushInBackground(await rewriteHeadInPlace(fs, headFile, { v: 1, run_id: runId, seq, hash }));
      return undefined;
    } catch (error) {
      return new StorageError(`could not update the audit head ${headFile}: ${(error as Error).message}`, headFile, {
        cause: error,
        ...errno(error),
      });
    }
  }
}

/**
 * The flush of a head just rewritten in place, started in the background (it closes the handle).
 * The rewrite itself is a page-cache write: a process killed right after it leaves the new head;
 * only a power loss can leave the old. A cache: the log is the truth, and a head left behind is
 * adopted (and recorded) on the next open.
 */
function flushInBackground(handle: DurableHandle): Promise<void> {
  return flushData(handle)
    .catch(() => undefined)
    .then(() => handle.close().catch(() => undefined));
}

function stepIdOf(record: { details?: { step_id?: unknown } } | undefined): string | undefined {
  const id = record?.details?.step_id;
  return typeof id === 'string' ? id : undefined;
}

function errno(error: unknown): { errno?: string } {
  const code = (error as NodeJS.ErrnoException).code;
  return code ? { errno: code } : {};
}

interface ChainStart {
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
async function recoverChain(options: {
  runId: string;
  file: string;
  headFile: string;
  journalFile: string;
  fs: DurableFs;
  sha256: Sha256;
}): Promise<ChainStart> {
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
    await appendAuditLines(options.fs, file, missing, wholeBefore, torn !== undefined);
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
async function restrict(target: string, mode: number): Promise<void> {
  try {
    await chmod(target, mode);
  } catch (error) {
    throw new StorageError(`could not restrict ${target} to mode ${mode.toString(8)}: ${(error as Error).message}`, target, {
      cause: error,
    });
  }
}
