import { GENESIS_HASH, type AuditHead, type Sha256 } from '../../domain/audit-chain.js';
import { splitAuditLines, verifyAuditLog } from '../../domain/audit-verify.js';
import type { AuditAhead } from './audit-sink.js';
import { flushData, storageError, writeFully, type DurableFs, type DurableHandle } from './atomic-file.js';
import { safeJson } from './read.js';

/**
 * The run's checkpoint journal as its audit log's write-ahead log. A step's audit records travel in
 * the journal line that records the step, so one flush makes both durable (group commit); the store
 * then appends them to `.maestro/audit/<run>.jsonl` and rewrites the head in place, neither flushed.
 * The log and the head are flushed before the journal is folded away, and whoever opens or reads a
 * log while a journal exists first takes from it the records the log lacks. So a record is durable
 * exactly when its step is, and the log never names a step the checkpoint lacks: they are one write.
 */

/** Width of the head file: its JSON padded with spaces, so an in-place rewrite always covers the old one (and fits one disk sector). */
const HEAD_BYTES = 384;

/** The head as written: one JSON line padded to a fixed width. */
export function formatAuditHead(head: AuditHead): string {
  const json = JSON.stringify(head);
  return `${json.padEnd(Math.max(HEAD_BYTES, json.length + 1) - 1, ' ')}\n`;
}

/**
 * Rewrites a head in place (it was written whole, at its fixed width, when its log was opened) and
 * returns the open handle: the caller flushes it, or only closes it.
 */
export async function rewriteHeadInPlace(fs: DurableFs, file: string, head: AuditHead): Promise<DurableHandle> {
  const handle = await fs.open(file, 'r+');
  try {
    await writeFully(handle, Buffer.from(formatAuditHead(head), 'utf8'), 0);
  } catch (error) {
    await handle.close().catch(() => undefined);
    throw error;
  }
  return handle;
}

/**
 * Appends records written ahead (already durable in the journal) to their log, on a handle the
 * caller holds open to append, then rewrites the head in place; nothing is flushed here (see
 * `flushAuditFiles`). A failed append is cut back to the log's last whole line, so the lines can be
 * written again from the journal.
 */
export async function writeAuditAhead(
  fs: DurableFs,
  runId: string,
  files: { readonly log: DurableHandle; readonly headFile: string },
  ahead: AuditAhead,
): Promise<void> {
  const data = Buffer.from(ahead.lines.map((l) => `${l}\n`).join(''), 'utf8');
  try {
    await writeFully(files.log, data);
  } catch (error) {
    await files.log.truncate?.(ahead.logBytes).catch(() => undefined);
    throw storageError(`could not append to the audit log ${ahead.log}`, ahead.log, error);
  }
  try {
    // By path each time: a head replaced whole (by rename) meanwhile is the one rewritten.
    await (await rewriteHeadInPlace(fs, files.headFile, { v: 1, run_id: runId, seq: ahead.last.seq, hash: ahead.last.hash })).close();
  } catch (error) {
    // The lines are in the log: a head left behind is mended before the journal is folded, or adopted (and recorded) when the log is next opened.
    throw storageError(`could not update the audit head ${files.headFile}`, files.headFile, error);
  }
}

/**
 * Appends whole lines to a log of `logBytes` bytes of whole lines, unflushed unless `flush`; a failed
 * append (or flush) is cut back to them. `cutFirst`: the log may end in a torn fragment, cut before appending.
 */
export async function appendAuditLines(
  fs: DurableFs,
  log: string,
  lines: readonly string[],
  logBytes: number,
  options: { cutFirst?: boolean; flush?: boolean } = {},
): Promise<void> {
  const data = Buffer.from(lines.map((l) => `${l}\n`).join(''), 'utf8');
  let handle: DurableHandle | undefined;
  try {
    handle = await fs.open(log, 'a', 0o600);
    if (options.cutFirst) await handle.truncate?.(logBytes);
    await writeFully(handle, data);
    if (options.flush) await flushData(handle);
  } catch (error) {
    await handle?.truncate?.(logBytes).catch(() => undefined);
    throw storageError(`could not append to the audit log ${log}`, log, error);
  } finally {
    await handle?.close().catch(() => undefined);
  }
}

/** Flushes files written without a flush (a log and its head); a file that does not exist is skipped. */
export async function flushAuditFiles(fs: DurableFs, files: readonly string[]): Promise<void> {
  for (const file of files) {
    let handle: DurableHandle;
    try {
      handle = await fs.open(file, 'r');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw storageError(`could not flush ${file}`, file, error);
    }
    try {
      await flushData(handle);
    } catch (error) {
      throw storageError(`could not flush ${file}`, file, error);
    } finally {
      await handle.close().catch(() => undefined);
    }
  }
}

/**
 * The records of a run's journal that its log lacks (a crash after the journal's flush, before the
 * log's): the lines to append after `logLines` (the log's whole lines), checked to continue its
 * chain. A problem when they do not: the journal is not this log's, or the log lost lines the
 * journal does not hold.
 */
export function missingFromLog(
  runId: string,
  logLines: readonly string[],
  journal: readonly string[],
  sha256: Sha256,
): { lines: string[] } | { problem: string } {
  const lastSeq = logLines.length === 0 ? -1 : seqOf(logLines[logLines.length - 1] ?? '');
  const lines = journal.filter((l) => seqOf(l) > lastSeq);
  if (lines.length === 0) return { lines };
  const all = [...logLines, ...lines];
  const last = safeJson(all[all.length - 1] ?? '') as { seq?: number; hash?: string } | undefined;
  const check = verifyAuditLog({
    runId,
    log: `${all.join('\n')}\n`,
    head: JSON.stringify({ v: 1, run_id: runId, seq: last?.seq ?? -1, hash: last?.hash ?? '' }),
    sha256,
    scanner: { detect: () => [] },
  });
  if (check.status === 'broken') {
    return {
      problem: `the run's journal holds ${lines.length} record(s) that do not continue the log (line ${check.line ?? '?'}: ${check.message})`,
    };
  }
  return { lines };
}

/**
 * The log's whole lines and the journal's records it lacks, as one text (for readers: nothing is
 * written). A line damaged where the journal holds its record is read from the journal, as opening
 * the log would write it.
 */
export function logWithJournal(
  runId: string,
  log: string | undefined,
  journal: readonly string[],
  sha256: Sha256,
): { log: string | undefined; fromJournal: number } {
  if (journal.length === 0) return { log, fromJournal: 0 };
  let { lines } = splitAuditLines(log ?? '');
  const chain = verifyChain(runId, lines, sha256);
  if (chain.status === 'broken' && chain.line !== null && journal.some((l) => seqOf(l) === (chain.line as number) - 1))
    lines = lines.slice(0, chain.line - 1);
  const missing = missingFromLog(runId, lines, journal, sha256);
  if ('problem' in missing || missing.lines.length === 0) return { log, fromJournal: 0 };
  return { log: `${[...lines, ...missing.lines].join('\n')}\n`, fromJournal: missing.lines.length };
}

function seqOf(line: string): number {
  const seq = (safeJson(line) as { seq?: unknown } | undefined)?.seq;
  return typeof seq === 'number' ? seq : -1;
}

/** A log's whole lines checked as a chain, against a head that agrees with their last. */
export function verifyChain(runId: string, lines: readonly string[], sha256: Sha256): ReturnType<typeof verifyAuditLog> {
  const last = lines.length === 0 ? undefined : (safeJson(lines[lines.length - 1] ?? '') as { seq?: unknown; hash?: unknown } | undefined);
  return verifyAuditLog({
    runId,
    log: lines.length === 0 ? '' : `${lines.join('\n')}\n`,
    head: JSON.stringify({
      v: 1,
      run_id: runId,
      seq: typeof last?.seq === 'number' ? last.seq : -1,
      hash: typeof last?.hash === 'string' ? last.hash : GENESIS_HASH,
    }),
    sha256,
    scanner: { detect: () => [] },
  });
}
