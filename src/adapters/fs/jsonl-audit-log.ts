import path from 'node:path';
import { unchainedRecord, type AuditEvent } from '../../domain/audit.js';
import type { Sha256 } from '../../domain/audit-chain.js';
import { composeAuditLine } from '../../domain/audit-line.js';
import { isSafeRunId } from '../../domain/audit-retention.js';
import { cachedScanner, defaultSensitiveScanner, findSensitiveResidue, type SensitiveScanner } from '../../domain/audit-sanitizer.js';
import { StorageError } from '../../domain/errors.js';
import type { Clock } from '../../domain/ports.js';
import { sha256 as nodeSha256 } from '../system/hashing.js';
import type { AuditAhead, AuditLog, AuditSink } from './audit-sink.js';
import { recoverChain, recoveryEvents, restrict, stepIdOf, type ChainStart } from './audit-recovery.js';
import { ensurePrivateDir, flushData, realFs, storageError, type DurableFs, type DurableHandle } from './atomic-file.js';
import { appendAuditLines, flushAuditFiles, rewriteHeadInPlace } from './audit-wal.js';
import { JOURNAL_FILE } from './run-journal.js';
import type { WorkspacePaths } from './workspace-paths.js';

export interface JsonlAuditLogOptions {
  /** The sensitive-content detector; default: `domain/sensitive` (its answers for short strings cached). Tests pass one that throws. */
  readonly scanner?: SensitiveScanner;
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
  readonly #fs: DurableFs;

  constructor(
    private readonly paths: WorkspacePaths,
    private readonly clock: Clock,
    options: JsonlAuditLogOptions = {},
  ) {
    this.#scanner = options.scanner ?? cachedScanner(defaultSensitiveScanner);
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
      sha256: nodeSha256,
    });
    const sink = new JsonlAuditSink({
      file,
      headFile,
      runId,
      start,
      fs: this.#fs,
      clock: this.clock,
      scanner: this.#scanner,
      sha256: nodeSha256,
    });
    for (const event of recoveryEvents(start)) await sink.append(event);
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
  /** Where the chain stood when the log was opened (and made whole). */
  readonly start: ChainStart;
  readonly fs: DurableFs;
  readonly clock: Clock;
  readonly scanner: SensitiveScanner;
  readonly sha256: Sha256;
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
    this.#seq = options.start.seq;
    this.#prevHash = options.start.hash;
    this.#size = options.start.size;
    this.#recorded = new Set(options.start.events);
    this.#steps = new Set(options.start.steps);
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
    const { file, fs, headFile, runId } = this.options;
    // The head on disk must not fall two writes behind: its last rewrite is flushed before this write,
    // and so is a head that records written ahead moved (they are in the journal; this one will not be).
    await this.#headSync;
    try {
      if (this.#headMovedAhead) await flushAuditFiles(fs, [headFile]);
      this.#headMovedAhead = false;
      // Flushed before this resolves; whatever part of the lines reached the file unflushed is cut, so the next write starts on a clean line.
      await appendAuditLines(fs, file, composed.lines, this.#size, { flush: true });
      // The lines are on disk: the chain moves on even if acknowledging them below fails.
      this.#advance(composed);
      const head = { v: 1 as const, run_id: runId, seq: composed.seq - 1, hash: composed.prevHash };
      this.#headSync = flushInBackground(await rewriteHeadInPlace(fs, headFile, head));
    } catch (error) {
      // The flush and the append fail as StorageErrors of their own; only the head's rewrite is named here.
      this.#failed = storageError(`could not update the audit head ${headFile}`, headFile, error);
      throw this.#failed;
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
