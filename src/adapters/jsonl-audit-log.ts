import { chmod, open, truncate } from 'node:fs/promises';
import path from 'node:path';
import { AUDIT_SCHEMA_VERSION, AuditRecord, type AuditEvent } from '../domain/audit.js';
import { AuditHead, emptyAuditHead, GENESIS_HASH, type Sha256 } from '../domain/audit-chain.js';
import { composeAuditLine } from '../domain/audit-line.js';
import { isSafeRunId } from '../domain/audit-retention.js';
import { cachedScanner, defaultSensitiveScanner, findSensitiveResidue, type SensitiveScanner } from '../domain/audit-sanitizer.js';
import { splitAuditLines, verifyAuditLog } from '../domain/audit-verify.js';
import { runDecision } from '../domain/decision.js';
import { StorageError } from '../domain/errors.js';
import type { AuditLog, AuditSink, Clock } from '../domain/ports.js';
import { ensurePrivateDir, writeFileAtomically, writeFully } from './atomic-file.js';
import { sha256 as nodeSha256 } from './hashing.js';
import type { WorkspacePaths } from './workspace-paths.js';
import { readIfExists, safeJson } from './fs-read.js';

export interface JsonlAuditLogOptions {
  /** The sensitive-content detector; default: `domain/sensitive` (its answers for short strings cached). Tests pass one that throws. */
  readonly scanner?: SensitiveScanner;
  readonly sha256?: Sha256;
}

/**
 * `.maestro/audit/<run_id>.jsonl`: append-only, one sanitized, hash-chained record per line, each
 * flushed to disk (datasync) before `append` resolves, then acknowledged in `<run_id>.head`
 * (atomic rewrite). Folder 0700, files 0600. Records are schema-checked on write.
 */
export class JsonlAuditLog implements AuditLog {
  readonly #scanner: SensitiveScanner;
  readonly #sha256: Sha256;

  constructor(
    private readonly paths: WorkspacePaths,
    private readonly clock: Clock,
    options: JsonlAuditLogOptions = {},
  ) {
    this.#scanner = options.scanner ?? cachedScanner(defaultSensitiveScanner);
    this.#sha256 = options.sha256 ?? nodeSha256;
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
      throw new StorageError('refusing to open an audit log for this run id: run ids name files, so they must be plain names free of personal data', file);
    }
    await ensurePrivateDir(this.paths.audit);
    await restrict(this.paths.audit, 0o700);
    const headFile = this.paths.auditHead(runId);
    const start = await recoverChain({ runId, file, headFile, sha256: this.#sha256 });
    const sink = new JsonlAuditSink({ file, headFile, runId, seq: start.seq, prevHash: start.hash, clock: this.clock, scanner: this.#scanner, sha256: this.#sha256, recorded: start.events });
    if (start.created) await writeHead(headFile, emptyAuditHead(runId));
    if (start.dropped) {
      await sink.append({ event: 'AUDIT_LOG_RECOVERED', ...runDecision('audit', 'AUDIT_TORN_LINE_DROPPED'), details: start.dropped });
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
  readonly clock: Clock;
  readonly scanner: SensitiveScanner;
  readonly sha256: Sha256;
  /** Events already in the log when it was opened. */
  readonly recorded: ReadonlySet<string>;
}

class JsonlAuditSink implements AuditSink {
  readonly path: string;
  #seq: number;
  #prevHash: string;
  #queue: Promise<void> = Promise.resolve();

  readonly #recorded: Set<string>;

  constructor(private readonly options: SinkOptions) {
    this.path = options.file;
    this.#seq = options.seq;
    this.#prevHash = options.prevHash;
    this.#recorded = new Set(options.recorded);
  }

  hasRecorded(event: string): boolean {
    return this.#recorded.has(event);
  }

  append(event: AuditEvent): Promise<void> {
    // Appends are serialised so sequence numbers and the chain match line order even when callers do not await.
    const next = this.#queue.then(() => this.#write(event));
    this.#queue = next.catch(() => undefined);
    return next;
  }

  async #write(event: AuditEvent): Promise<void> {
    const { file, runId, clock, scanner, sha256 } = this.options;
    const raw = {
      v: AUDIT_SCHEMA_VERSION,
      run_id: runId,
      seq: this.#seq,
      ts: clock.now().toISOString(),
      event: event.event,
      layer: event.layer,
      decision: event.decision,
      reason_code: event.reason_code,
      sealed: event.sealed,
      overrideable: event.overrideable,
      final_decider: event.final_decider,
      ...(event.details ? { details: event.details } : {}),
    } as const;
    const { record, line } = composeAuditLine(raw, this.#prevHash, { scanner, sha256 });
    let handle;
    try {
      handle = await open(file, 'a', 0o600);
      await writeFully(handle, Buffer.from(`${line}\n`, 'utf8'));
      await handle.datasync();
    } catch (error) {
      throw new StorageError(`could not append to the audit log ${file}: ${(error as Error).message}`, file, { cause: error });
    } finally {
      await handle?.close();
    }
    // The line is on disk: the chain moves on even if acknowledging it below fails.
    this.#recorded.add(record.event);
    this.#seq += 1;
    this.#prevHash = record.hash;
    await writeHead(this.options.headFile, { v: 1, run_id: runId, seq: record.seq, hash: record.hash });
  }
}

interface ChainStart {
  readonly seq: number;
  readonly hash: string;
  /** No log and no head yet: a new run. */
  readonly created: boolean;
  /** A torn last line was cut off: where, and how many bytes. */
  readonly dropped?: { line: number; bytes: number; sha256: string };
  /** The head was missing, damaged or behind and the verified log was adopted in its place. */
  readonly adopted?: { head_seq: number | null; head: string; log_seq: number };
  /** The events the log already holds. */
  readonly events: ReadonlySet<string>;
}

/**
 * Where a run's chain goes on. The log is the truth and the head a cache: a log whose chain verifies
 * is adopted even when its head is missing, damaged or behind (a crash or a full disk between an
 * append and its head update), and the adoption is recorded. A torn last line is cut, recorded too.
 * Refused (fail closed): a chain that does not verify (edited, reordered, foreign lines) and a log
 * shorter than its head says (truncated) — `maestro audit verify` says why.
 */
async function recoverChain(options: { runId: string; file: string; headFile: string; sha256: Sha256 }): Promise<ChainStart> {
  const { runId, file, headFile } = options;
  const log = await readIfExists(file);
  const headText = await readIfExists(headFile);
  const refuse = (why: string): StorageError =>
    new StorageError(`the audit log ${file} ${why}; nothing was appended (run "maestro audit verify ${runId}")`, file);
  const head = headText === undefined ? undefined : AuditHead.safeParse(safeJson(headText)).data;

  if (log === undefined) {
    if (head && head.run_id === runId && head.seq >= 0) throw refuse(`is missing although its head says ${head.seq + 1} record(s) were written`);
    return { seq: 0, hash: GENESIS_HASH, created: head === undefined || head.run_id !== runId, events: new Set() };
  }
  await restrict(file, 0o600);

  const { lines, torn } = splitAuditLines(log);
  const whole = lines.length === 0 ? '' : `${lines.join('\n')}\n`;
  const last = lines.length === 0 ? undefined : AuditRecord.safeParse(safeJson(lines[lines.length - 1] ?? '')).data;
  const lastSeq = last?.seq ?? -1;
  // The chain itself, judged against a head that agrees with it: only the lines can fail here.
  const chain = verifyAuditLog({
    runId,
    log: whole,
    head: JSON.stringify({ v: 1, run_id: runId, seq: lastSeq, hash: last?.hash ?? GENESIS_HASH }),
    sha256: options.sha256,
    scanner: { detect: () => [] },
  });
  if (chain.status === 'broken') throw refuse(`is damaged at line ${chain.line ?? '?'} (${chain.kind}: ${chain.message})`);
  if (head && head.run_id === runId && head.seq > lastSeq) {
    throw refuse(`was truncated (its head says ${head.seq + 1} record(s) were written, it holds ${lastSeq + 1})`);
  }

  let dropped: ChainStart['dropped'];
  if (torn !== undefined) {
    // A write cut short by a crash: the record was never acknowledged, so the fragment is removed.
    await truncate(file, Buffer.byteLength(whole));
    dropped = { line: lines.length + 1, bytes: Buffer.byteLength(torn), sha256: options.sha256(torn) };
  }
  const headSeq = head && head.run_id === runId ? head.seq : null;
  const headAgrees = head !== undefined && headSeq !== null && (headSeq === lastSeq || headSeq === lastSeq - 1);
  const adopted = headAgrees ? undefined : { head_seq: headSeq, head: head === undefined ? (headText === undefined ? 'missing' : 'damaged') : headSeq === null ? 'foreign' : 'behind', log_seq: lastSeq };
  const events = new Set(lines.map((l) => (safeJson(l) as { event?: string } | undefined)?.event).filter((e): e is string => typeof e === 'string'));
  return { seq: lastSeq + 1, hash: last?.hash ?? GENESIS_HASH, created: false, events, ...(dropped ? { dropped } : {}), ...(adopted ? { adopted } : {}) };
}

/** Puts back the private mode on a folder or file created earlier (or by an older maestro). */
async function restrict(target: string, mode: number): Promise<void> {
  try {
    await chmod(target, mode);
  } catch (error) {
    throw new StorageError(`could not restrict ${target} to mode ${mode.toString(8)}: ${(error as Error).message}`, target, { cause: error });
  }
}

async function writeHead(file: string, head: AuditHead): Promise<void> {
  // The helper renames and then syncs the folder, so the head's new name is durable too.
  await writeFileAtomically(file, `${JSON.stringify(head)}\n`, { mode: 0o600 });
}
