import { AuditRecord } from './audit.js';
import { AuditHead, GENESIS_HASH, hashAuditRecord, serializeAuditRecord, type Sha256 } from './audit-chain.js';
import { findSensitiveResidue, type SensitiveScanner } from './audit-sanitizer.js';
import { checkDecisionInvariants } from './decision.js';
import { formatIssues } from './issues.js';

/*
 * How a run's log is judged. The writer appends a line, datasyncs it, then rewrites `<run>.head`
 * atomically with that record's seq and hash (see AuditHead). So a crash can only leave:
 *   - a fragment after the last full line (the write was cut short)      → `torn`, not tampering;
 *   - a head one record behind the log (crash between append and head)    → `ok`, with a note.
 * Everything else is a change made after the fact:
 *   - a line whose bytes are not the canonical serialization of a record whose hash matches → edited;
 *   - a seq gap → deleted; a seq out of place or repeated → reordered; a prev_hash that is not
 *     the previous line's hash → edited (a record was replaced and re-hashed);
 *   - a head ahead of the log → truncated (whole lines, or a cut inside the last record);
 *   - a head more than one record behind → appended (lines the writer never acknowledged);
 *   - no head at all → missing (truncation could not be ruled out).
 * The chain has no secret key: whoever can rewrite both files can forge a consistent history.
 * It shows accidental damage and naive edits; anchoring head hashes elsewhere would show the rest.
 */

/** Why a log failed verification. */
export type AuditProblemKind =
  | 'missing' // no log (or no head) where one must be
  | 'legacy' // written before the hash chain (schema v1)
  | 'edited' // a line's bytes no longer match its hash or the chain
  | 'invalid' // a line is JSON but not an audit record
  | 'foreign' // a record of another run
  | 'deleted' // records missing in the middle
  | 'reordered' // records out of order or duplicated
  | 'truncated' // records missing at the end (the head says they were written)
  | 'appended' // records the writer never acknowledged
  | 'invariant' // a record breaks I1–I5 or I7
  | 'sensitive' // a record holds sensitive content (I6)
  | 'head'; // the head file is damaged or disagrees with the log

export type AuditVerification =
  | { readonly status: 'ok'; readonly runId: string; readonly records: number; readonly notes: readonly string[] }
  /** Intact, except that the last line is a fragment: a write cut short by a crash, not tampering. */
  | { readonly status: 'torn'; readonly runId: string; readonly records: number; readonly line: number; readonly notes: readonly string[] }
  | {
      readonly status: 'broken';
      readonly runId: string;
      /** Records that verified before the problem. */
      readonly records: number;
      /** 1-based line of the first broken record; null when the problem is not one line (e.g. no head). */
      readonly line: number | null;
      readonly kind: AuditProblemKind;
      readonly message: string;
    };

export interface VerifyInput {
  readonly runId: string;
  /** The log's text; undefined when there is no log file. */
  readonly log: string | undefined;
  /** The head file's text; undefined when there is none. */
  readonly head: string | undefined;
  readonly sha256: Sha256;
  readonly scanner: SensitiveScanner;
  /** The run has a checkpoint, so it wrote a log: none at all means the log was deleted. */
  readonly checkpoint?: boolean;
}

/** Splits a log into complete lines and a trailing fragment (text after the last newline), if any. */
export function splitAuditLines(text: string): { lines: string[]; torn: string | undefined } {
  const lines = text.split('\n');
  const last = lines.pop() ?? '';
  return { lines, torn: last.length > 0 ? last : undefined };
}

/**
 * Checks one run's log: every line canonical, schema-valid, hashed, linked to the one before, in
 * sequence, of this run, true to invariants I1–I7; then the head, which catches lines cut off the
 * end. Reports the first problem only.
 */
export function verifyAuditLog(input: VerifyInput): AuditVerification {
  const { runId } = input;
  if (input.log === undefined) return verifyWithoutLog(input);
  const { lines, torn } = splitAuditLines(input.log);
  const parsed = lines.map(parseLine);
  const lineFinding = findLineProblem(input, { lines, parsed });
  if (lineFinding) return broken(runId, lineFinding);
  const count = parsed.length;
  const headCheck = checkHead(input, parsed);
  if ('kind' in headCheck) return broken(runId, headCheck);
  const { notes } = headCheck;
  if (torn !== undefined) return { status: 'torn', runId, records: count, line: count + 1, notes };
  return { status: 'ok', runId, records: count, notes };
}

/** Where verification stopped, and why. */
interface Finding {
  /** Records that verified before the problem. */
  readonly records: number;
  readonly line: number | null;
  readonly kind: AuditProblemKind;
  readonly message: string;
}

type LineProblem = Pick<Finding, 'kind' | 'message'>;

function broken(runId: string, finding: Finding): AuditVerification {
  return { status: 'broken', runId, records: finding.records, line: finding.line, kind: finding.kind, message: finding.message };
}

/** No log file: fine only when its head says the run wrote no record; otherwise it is missing, or was deleted. */
function verifyWithoutLog(input: VerifyInput): AuditVerification {
  const { runId } = input;
  const head = input.head === undefined ? undefined : parseHead(input.head);
  if (head && 'seq' in head && head.seq === -1)
    return { status: 'ok', runId, records: 0, notes: ['the run opened its log but wrote no record'] };
  return broken(runId, {
    records: 0,
    line: input.head === undefined ? null : 1,
    kind: 'missing',
    message:
      input.head !== undefined
        ? 'the log file is gone but its head remains: the log was deleted'
        : input.checkpoint
          ? "the run's checkpoint is here but its log and head are gone: the log was deleted"
          : 'there is no audit log for this run',
  });
}

/** The first line that does not verify, in order: each line's record, then its place in the chain. */
function findLineProblem(input: VerifyInput, log: { lines: readonly string[]; parsed: readonly ParsedLine[] }): Finding | undefined {
  const { lines, parsed } = log;
  const seqAt = new Map<number, number>();
  parsed.forEach((p, i) => {
    if (p.record && !seqAt.has(p.record.seq)) seqAt.set(p.record.seq, i + 1);
  });
  let prevHash = GENESIS_HASH;
  let sealedAt: number | undefined;
  for (const [i, p] of parsed.entries()) {
    const problem = p.record
      ? (recordProblem(input, { record: p.record, text: lines[i] ?? '', index: i, prevHash, seqAt }) ?? afterSeal(p.record, sealedAt))
      : p;
    if (problem) return { records: i, line: i + 1, kind: problem.kind, message: problem.message };
    if (p.record) prevHash = p.record.hash;
    if (p.record?.sealed && sealedAt === undefined) sealedAt = i + 1;
  }
  return undefined;
}

/** Layers that record what happened to a run without deciding it: its artifact, its memory and outcome, its queue. */
const RECORDING_LAYERS: ReadonlySet<string> = new Set(['artifact', 'session', 'queue', 'audit']);

/**
 * A sealed record ends the run (policy.md): nothing after it decides anything but the stop, and no
 * person decides on it. What only records may follow (the stopped run's draft, a resume after a crash
 * that completes the ending, a confirmed outcome); its finish must be the stop.
 */
function afterSeal(r: AuditRecord, sealedAt: number | undefined): LineProblem | undefined {
  if (sealedAt === undefined || (r.event !== 'HITL_DECIDED' && r.decision === 'STOPPED')) return undefined;
  if (r.event !== 'HITL_DECIDED' && r.event !== 'RUN_FINISHED' && RECORDING_LAYERS.has(r.layer)) return undefined;
  const what = r.event === 'HITL_DECIDED' ? 'a person decides on it' : `it decides ${r.decision}`;
  return { kind: 'invariant', message: `comes after the sealed stop at line ${sealedAt} and ${what}: a sealed record ends the run` };
}

/** What is wrong with one parsed record where it stands (line `index + 1`), if anything. */
function recordProblem(
  input: VerifyInput,
  at: { record: AuditRecord; text: string; index: number; prevHash: string; seqAt: ReadonlyMap<number, number> },
): LineProblem | undefined {
  const { record: r, index: i } = at;
  const line = i + 1;
  if (serializeAuditRecord(r) !== at.text) return { kind: 'edited', message: 'the line is not in canonical form: it was edited by hand' };
  if (hashAuditRecord(r, input.sha256) !== r.hash) return { kind: 'edited', message: 'the record does not match its hash: it was edited' };
  if (r.run_id !== input.runId) return { kind: 'foreign', message: `the record belongs to run ${r.run_id}` };
  if (r.seq !== i) return seqProblem(r.seq, { index: i, seqAt: at.seqAt });
  if (r.prev_hash !== at.prevHash) {
    return {
      kind: 'edited',
      message:
        line === 1
          ? 'the first record does not start the chain'
          : `prev_hash does not match the hash of line ${line - 1}: the chain is broken`,
    };
  }
  const invariants = checkDecisionInvariants(r);
  if (invariants.length > 0) return { kind: 'invariant', message: `breaks ${invariants.join('; ')}` };
  const residue = findSensitiveResidue(at.text, input.scanner);
  if (residue.length > 0) return { kind: 'sensitive', message: `I6: holds sensitive content (${residue.join(', ')})` };
  return undefined;
}

/** A seq where seq `index` belongs: repeated or late (reordered), early with the right one further on (reordered), or a gap (deleted). */
function seqProblem(seq: number, at: { index: number; seqAt: ReadonlyMap<number, number> }): LineProblem {
  const i = at.index;
  const line = i + 1;
  if (seq < i)
    return { kind: 'reordered', message: `seq ${seq} comes again or too late (expected seq ${i}): records were reordered or duplicated` };
  const expectedAt = at.seqAt.get(i);
  if (expectedAt !== undefined && expectedAt > line) {
    return {
      kind: 'reordered',
      message: `found seq ${seq} where seq ${i} belongs (seq ${i} is at line ${expectedAt}): records were reordered`,
    };
  }
  const gap = seq - i === 1 ? `seq ${i} is` : `seq ${i}–${seq - 1} are`;
  return { kind: 'deleted', message: `${gap} missing before this line: records were deleted` };
}

/** The head against a log whose lines all verified: it catches lines cut off the end, and lines never acknowledged. */
function checkHead(input: VerifyInput, parsed: readonly ParsedLine[]): Finding | { notes: string[] } {
  const count = parsed.length;
  const lastSeq = count - 1;
  if (input.head === undefined)
    return { records: count, line: null, kind: 'missing', message: 'the head file is missing, so truncation cannot be ruled out' };
  const head = parseHead(input.head);
  if (!('seq' in head)) return { records: count, line: null, kind: 'head', message: `the head file is damaged (${head.problem})` };
  if (head.run_id !== input.runId)
    return { records: count, line: null, kind: 'head', message: `the head file belongs to run ${head.run_id}` };
  const notes: string[] = [];
  if (head.seq > lastSeq) {
    const lost = head.seq - lastSeq === 1 ? `seq ${head.seq} is` : `seq ${lastSeq + 1}–${head.seq} are`;
    return {
      records: count,
      line: count + 1,
      kind: 'truncated',
      message: `the log ends after line ${count} but its head says ${head.seq + 1} record(s) were written (${lost} gone): the log was truncated`,
    };
  }
  const headRecord = head.seq >= 0 ? parsed[head.seq]?.record : undefined;
  const headHash = headRecord?.hash ?? GENESIS_HASH;
  if (head.hash !== headHash)
    return { records: count, line: head.seq + 1 || null, kind: 'head', message: `the head's hash does not match line ${head.seq + 1}` };
  if (head.seq === lastSeq - 1) notes.push('the head lags one record behind (a crash between an append and its head update)');
  else if (head.seq < lastSeq) {
    return {
      records: head.seq + 2,
      line: head.seq + 3,
      kind: 'appended',
      message: `lines ${head.seq + 3}–${count} were never acknowledged by the writer: records were appended outside maestro`,
    };
  }
  return { notes };
}

/** Records of a log for reading (`audit show`): each valid line, and a problem for each other line. */
export function readAuditRecords(text: string): {
  records: { line: number; record: AuditRecord }[];
  problems: { line: number; message: string }[];
  tornLine: number | undefined;
} {
  const { lines, torn } = splitAuditLines(text);
  const records: { line: number; record: AuditRecord }[] = [];
  const problems: { line: number; message: string }[] = [];
  lines.forEach((raw, i) => {
    const p = parseLine(raw);
    if (p.record) records.push({ line: i + 1, record: p.record });
    else problems.push({ line: i + 1, message: p.message });
  });
  return { records, problems, tornLine: torn === undefined ? undefined : lines.length + 1 };
}

type ParsedLine = { record: AuditRecord } | { record?: undefined; kind: AuditProblemKind; message: string };

function parseLine(raw: string): ParsedLine {
  if (raw.trim().length === 0) return { kind: 'edited', message: 'blank line inside the log' };
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    return { kind: 'edited', message: 'not valid JSON: the line was edited or damaged' };
  }
  if (json !== null && typeof json === 'object' && (json as { v?: unknown }).v === 1) {
    return { kind: 'legacy', message: 'written before the hash chain (audit schema v1): cannot be verified' };
  }
  const result = AuditRecord.safeParse(json);
  if (!result.success) return { kind: 'invalid', message: `not a valid audit record: ${formatIssues(result.error).join('; ')}` };
  return { record: result.data };
}

function parseHead(text: string): AuditHead | { problem: string } {
  try {
    const result = AuditHead.safeParse(JSON.parse(text));
    return result.success ? result.data : { problem: formatIssues(result.error).join('; ') };
  } catch {
    return { problem: 'not valid JSON' };
  }
}
