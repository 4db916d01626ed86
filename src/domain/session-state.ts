import { z } from 'zod';
import { formatIssues, type Parsed } from './issues.js';
import { BRIEFING_HEADER } from './prompts.js';
import { OutcomeEntry } from './track-record.js';

export const SESSION_STATE_VERSION = 3;

/** One message of a persona's persisted chat history. */
export const HistoryMessage = z.strictObject({
  role: z.enum(['user', 'assistant']),
  content: z.string(),
  run_id: z.string(),
  ts: z.string(),
  /** Tokens of `content` (o200k), kept once counted so later runs need not count (or load the tokenizer) again. */
  tokens: z.number().int().min(0).optional(),
});
export type HistoryMessage = z.infer<typeof HistoryMessage>;

/** What remains in the state file of a run whose messages moved to the archive: one summary line. */
export const ArchivedRun = z.strictObject({ run_id: z.string(), task: z.string(), last_word: z.string() });
export type ArchivedRun = z.infer<typeof ArchivedRun>;

/** How many archived runs keep a summary line in the state file. */
const ARCHIVED_SUMMARIES = 50;

/** `session_states/<persona>_session.json`: a persona's memory across tasks (the persistent council). */
export const SessionState = z.strictObject({
  schemaVersion: z.literal(SESSION_STATE_VERSION),
  persona_id: z.string(),
  updated_at: z.string(),
  /** Ids of the runs whose turns are in `messages`, oldest first; a run is never saved twice. */
  runs: z.array(z.string()),
  messages: z.array(HistoryMessage),
  /** Older runs moved to `session_states/archive/<persona>_history.jsonl`: how many, and the latest summaries. */
  archived: z.strictObject({ count: z.number().int().min(0), recent: z.array(ArchivedRun) }).default({ count: 0, recent: [] }),
  /** Its verdicts against outcomes a person confirmed (`maestro outcome`), newest last: what `by_priors` and `bayesian_fusion` learn from. */
  outcomes: z.array(OutcomeEntry).default([]),
});
export type SessionState = z.infer<typeof SessionState>;

/** Version 1 (the first release): no archive. */
const SessionStateV1 = z.strictObject({
  schemaVersion: z.literal(1),
  persona_id: z.string(),
  updated_at: z.string(),
  runs: z.array(z.string()),
  messages: z.array(HistoryMessage),
});

/**
 * Version 2: the archive, and a `track` of how often the persona's verdict matched the council's
 * final action. That record measured conformity, not being right (a dissenting auditor sank to 0.11
 * in three runs), so migrating drops it: a persona starts its record of confirmed outcomes empty.
 */
const SessionStateV2 = SessionState.omit({ schemaVersion: true, outcomes: true }).extend({
  schemaVersion: z.literal(2),
  track: z.array(z.strictObject({ run_id: z.string(), said: z.string(), final: z.string() })).default([]),
});

export function emptySessionState(personaId: string, now: string): SessionState {
  return {
    schemaVersion: SESSION_STATE_VERSION,
    persona_id: personaId,
    updated_at: now,
    runs: [],
    messages: [],
    archived: { count: 0, recent: [] },
    outcomes: [],
  };
}

/** Validates a session file's JSON, migrating known older versions. */
export function parseSessionState(json: unknown): Parsed<SessionState> {
  const v1 = SessionStateV1.safeParse(json);
  if (v1.success)
    return { ok: true, value: { ...v1.data, schemaVersion: SESSION_STATE_VERSION, archived: { count: 0, recent: [] }, outcomes: [] } };
  const v2 = SessionStateV2.safeParse(json);
  if (v2.success) {
    const { track: _conformity, ...rest } = v2.data;
    return { ok: true, value: { ...rest, schemaVersion: SESSION_STATE_VERSION, outcomes: [] } };
  }
  const result = SessionState.safeParse(json);
  if (!result.success) return { ok: false, issues: formatIssues(result.error) };
  return { ok: true, value: result.data };
}

/** Appends one run's messages; a run already saved (or archived) is not appended again (idempotent on resume). */
export function appendRun(state: SessionState, runId: string, messages: readonly HistoryMessage[], now: string): SessionState {
  if (state.runs.includes(runId) || state.archived.recent.some((r) => r.run_id === runId)) return state;
  return { ...state, updated_at: now, runs: [...state.runs, runId], messages: [...state.messages, ...messages] };
}

/**
 * Keeps the state file small: the messages of all but the newest `keepRuns` runs move out (to be
 * appended to the archive by the caller, nothing is dropped), leaving one summary line per run.
 */
export function compactSession(state: SessionState, keepRuns: number): { state: SessionState; moved: HistoryMessage[] } {
  if (state.runs.length <= keepRuns) return { state, moved: [] };
  const leaving = new Set(state.runs.slice(0, state.runs.length - keepRuns));
  const moved = state.messages.filter((m) => leaving.has(m.run_id));
  const summaries = [...leaving].map((runId) =>
    summarizeRun(
      runId,
      moved.filter((m) => m.run_id === runId),
    ),
  );
  return {
    state: {
      ...state,
      runs: state.runs.filter((r) => !leaving.has(r)),
      messages: state.messages.filter((m) => !leaving.has(m.run_id)),
      archived: { count: state.archived.count + leaving.size, recent: [...state.archived.recent, ...summaries].slice(-ARCHIVED_SUMMARIES) },
    },
    moved,
  };
}

/**
 * The moved messages the archive does not hold yet. A crash between archiving runs and saving the
 * state file leaves them in both, and the next save moves them again: `archived` says how many of
 * each run's messages already end the archive (they are appended in order, so the first ones), and
 * only the rest is appended. A retry never writes a message twice.
 */
export function unarchivedMessages(moved: readonly HistoryMessage[], archived: ReadonlyMap<string, number>): HistoryMessage[] {
  const seen = new Map<string, number>();
  return moved.filter((m) => {
    const nth = (seen.get(m.run_id) ?? 0) + 1;
    seen.set(m.run_id, nth);
    return nth > (archived.get(m.run_id) ?? 0);
  });
}

/** One line about a run: its task and the persona's last word, each clipped. */
export function summarizeRun(runId: string, messages: readonly HistoryMessage[]): ArchivedRun {
  const briefing = messages.find((m) => m.role === 'user' && m.content.includes(BRIEFING_HEADER))?.content;
  const task = briefing ? (/TASK:\s*(.+)/.exec(briefing)?.[1] ?? '(unknown)') : '(unknown)';
  const last = [...messages].reverse().find((m) => m.role === 'assistant')?.content ?? '';
  return { run_id: runId, task: clip(task, 160), last_word: clip(last, 160) };
}

function clip(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
