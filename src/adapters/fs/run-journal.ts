import path from 'node:path';
import { CheckpointUnreadableError } from '../../domain/errors.js';
import { applyRunEvent, type RunEvent } from '../../domain/run-machine.js';
import type { RunState } from '../../domain/run-state.js';
import { screenRunEvent, screenRunState } from '../../domain/screen.js';
import { readIfExists } from './read.js';

/**
 * `.maestro/runs/<run_id>/journal.jsonl`: a running run's checkpoint as an append-only journal. The
 * first line is a whole state (`{"v":1,"base":…}`); each later line is either an event applied to
 * the state before it (`{"at":…,"event":…}`) or a whole state again (`base`). One line is appended
 * and flushed (fdatasync) per change, instead of rewriting `state.json` (temporary file, fsync,
 * rename, folder fsync). When the journal exists it is the checkpoint, whatever `state.json` says:
 * `state.json` is the snapshot it is folded into (compaction) when the run stops being executed.
 *
 * A line may carry the audit records written with it (`"audit":[<line>, …]`, each the exact line of
 * the run's audit log): the journal is the audit log's write-ahead log, so a step and its records
 * become durable in one flush (see audit-wal.ts). An event line may also name the run files the
 * change removes (`"remove":[<name>, …]`): they are removed once the line is durable, and again when
 * the journal is folded (a crash in between).
 *
 * A crash can leave only the last line cut or unreadable (every line is flushed before the next is
 * written), and that line was never acknowledged: it is ignored. Any other unreadable line means
 * the file was damaged, and the checkpoint is refused rather than guessed at. A journal that holds no
 * whole line (a crash as it was begun: empty, only zeros, a first line cut short) acknowledged nothing:
 * it reads as no journal.
 */
export const JOURNAL_FILE = 'journal.jsonl';
export const JOURNAL_VERSION = 1;

export type JournalLine =
  | { readonly v: number; readonly base: RunState; readonly audit?: readonly string[] }
  | { readonly at: string; readonly event: RunEvent; readonly audit?: readonly string[]; readonly remove?: readonly string[] };

/** A whole state as a journal line, screened as every kept state is (screen.ts), with the records written ahead with it. */
export function baseLine(state: RunState, audit?: readonly string[]): string {
  return `${JSON.stringify({ v: JOURNAL_VERSION, base: screenRunState(state), ...(audit && audit.length > 0 ? { audit } : {}) })}\n`;
}

/** One change as a journal line: the texts it carries screened, as the state they make is; its records and the run files it removes. */
export function eventLine(at: string, event: RunEvent, audit?: readonly string[], remove?: readonly string[]): string {
  const screened = screenRunEvent(event);
  return `${JSON.stringify({ at, event: screened, ...(audit && audit.length > 0 ? { audit } : {}), ...(remove && remove.length > 0 ? { remove } : {}) })}\n`;
}

/**
 * The audit lines a journal's text carries, in order: those of every whole line that reads (a cut
 * or unreadable last line was never acknowledged, and neither were its records).
 */
export function journalAuditLines(text: string): string[] {
  return wholeLines(text).flatMap((line) => line.audit ?? []);
}

/** The run files a journal's text says were removed (the lines that read, as for `journalAuditLines`). */
export function journalRemovals(text: string): string[] {
  return wholeLines(text).flatMap((line) => ('remove' in line ? (line.remove ?? []) : []));
}

/** Every whole line of a journal's text that reads (a cut or unreadable last line was never acknowledged). */
function wholeLines(text: string): JournalLine[] {
  const lines = text.split('\n');
  lines.pop(); // a fragment after the last newline, or nothing
  return lines.map(parseLine).filter((line): line is JournalLine => line !== undefined);
}

type JournalReplay =
  | { readonly ok: true; readonly state: unknown; readonly lines: number }
  | { readonly ok: false; readonly line: number; readonly problem: string };

/**
 * The state a journal's text describes: its last base, with every event after it applied by the
 * domain's one apply function. The state is returned as read (the caller validates it); `lines: 0`
 * (no state) when the journal acknowledged nothing.
 */
function replayJournal(text: string): JournalReplay {
  const lines = text.split('\n');
  // A fragment after the last newline (a write cut short, or zeros a power loss left) was never acknowledged.
  const fragment = lines.pop() ?? '';
  const parsed: (JournalLine | undefined)[] = lines.map(parseLine);
  // Only the last line can be unacknowledged: one that does not read is a write cut short.
  if (fragment.length === 0 && parsed.length > 0 && parsed[parsed.length - 1] === undefined) parsed.pop();
  // Nothing acknowledged (a crash between creating the journal and flushing its first line).
  if (parsed.length === 0) return { ok: true, state: undefined, lines: 0 };
  let state: unknown;
  for (const [i, line] of parsed.entries()) {
    if (line === undefined) return { ok: false, line: i + 1, problem: 'not a journal line: the file was damaged or edited' };
    if ('base' in line) {
      if (line.v !== JOURNAL_VERSION)
        return {
          ok: false,
          line: i + 1,
          problem: `journal version ${JSON.stringify(line.v)}; this maestro reads version ${JOURNAL_VERSION}`,
        };
      state = line.base;
      continue;
    }
    if (state === undefined) return { ok: false, line: i + 1, problem: 'the journal does not start with a whole state' };
    try {
      state = applyRunEvent(state as RunState, line.event, line.at);
    } catch (error) {
      return { ok: false, line: i + 1, problem: `the event does not apply (${(error as Error).message})` };
    }
  }
  if (state === undefined) return { ok: false, line: 1, problem: 'the journal holds no whole state' };
  return { ok: true, state, lines: parsed.length };
}

function parseLine(raw: string): JournalLine | undefined {
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    return undefined;
  }
  if (json === null || typeof json !== 'object') return undefined;
  const line = json as Record<string, unknown>;
  if (!isStringList(line, 'audit')) return undefined;
  if ('base' in line) return line.base !== null && typeof line.base === 'object' ? (line as JournalLine) : undefined;
  const event = line.event as { type?: unknown } | undefined;
  if (typeof line.at !== 'string' || event === null || typeof event !== 'object' || typeof event.type !== 'string') return undefined;
  if (!isStringList(line, 'remove')) return undefined;
  return line as JournalLine;
}

/** A field that is absent, or a list of strings. */
function isStringList(line: Record<string, unknown>, key: string): boolean {
  const value = line[key];
  return !(key in line) || (Array.isArray(value) && value.every((a) => typeof a === 'string'));
}

/**
 * A run's checkpoint as stored, not yet validated: the journal replayed when there is one, else
 * `state.json`; undefined when the run has neither. Throws a CheckpointUnreadableError for a damaged or empty file.
 * Shared by every reader of checkpoints (`status`, `runs`, `show`, `audit prune`).
 */
export async function readCheckpoint(runDir: string): Promise<{ json: unknown; file: string } | undefined> {
  const journal = path.join(runDir, JOURNAL_FILE);
  const text = await readIfExists(journal);
  if (text !== undefined) {
    const replay = replayJournal(text);
    if (!replay.ok) {
      const problem = `damaged at line ${replay.line}: ${replay.problem}`;
      throw new CheckpointUnreadableError(`the run checkpoint ${journal} is ${problem}`, journal, problem);
    }
    // A journal that acknowledged nothing: the checkpoint is state.json, or there is none yet.
    if (replay.lines > 0) return { json: replay.state, file: journal };
  }
  const file = path.join(runDir, 'state.json');
  const state = await readIfExists(file);
  if (state === undefined) return undefined;
  // A file of nothing (a disk that lost its data, a hand that emptied it) says so, not "not valid JSON".
  if (state.trim() === '') throw new CheckpointUnreadableError(`the run checkpoint ${file} is empty`, file, 'empty');
  try {
    return { json: JSON.parse(state), file };
  } catch (error) {
    throw new CheckpointUnreadableError(`the run checkpoint ${file} is not valid JSON`, file, 'not valid JSON', { cause: error });
  }
}
