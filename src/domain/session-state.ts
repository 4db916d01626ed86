import { z } from 'zod';
import { formatIssues, type Parsed } from './issues.js';
import { legacyPassages, Passage } from './memory/passages.js';
import { mergeSummary, renderSummary, TaskSummary } from './memory/summary.js';
import { clip, utf8Bytes } from './memory/text.js';
import { BRIEFING_HEADER } from './prompts.js';
import { OutcomeEntry } from './track-record.js';
import { parseVerdict } from './verdict.js';

/**
 * 3: a persona keeps a summary per task and passages, not whole transcripts, and its verdicts against
 * outcomes a person confirmed; versions 1 and 2 (every message of every run) migrate on read.
 */
export const SESSION_STATE_VERSION = 3;

/** One message of a version-2 history (and of archives written by it). */
export const HistoryMessage = z.strictObject({
  role: z.enum(['user', 'assistant']),
  content: z.string(),
  run_id: z.string(),
  ts: z.string(),
  tokens: z.number().int().min(0).optional(),
});
export type HistoryMessage = z.infer<typeof HistoryMessage>;

/** How many task summaries the state keeps (the newest); the archive holds the summary of every archived run. */
const TASKS_KEPT = 200;

/** `session_states/<persona>_session.json`: a persona's memory across tasks (the persistent council). */
export const SessionState = z.strictObject({
  schemaVersion: z.literal(SESSION_STATE_VERSION),
  persona_id: z.string(),
  updated_at: z.string(),
  /** Ids of the runs whose passages are in `passages`, oldest first; a run is never saved twice. */
  runs: z.array(z.string()),
  /** One summary per earlier task, newest last (a task done again updates its own). */
  tasks: z.array(TaskSummary),
  /** The passages of the runs in `runs`, oldest first. */
  passages: z.array(Passage),
  /** Runs whose passages moved to `session_states/archive/<persona>_history.jsonl` (or the engine's archive). */
  archived: z.strictObject({ count: z.number().int().min(0) }),
  /** Its verdicts against outcomes a person confirmed (`maestro outcome`), newest last: what `by_priors` and `bayesian_fusion` learn from. */
  outcomes: z.array(OutcomeEntry).default([]),
});
export type SessionState = z.infer<typeof SessionState>;

/** What one finished run adds to a persona's memory. */
export interface RunMemory {
  readonly summary: TaskSummary;
  readonly passages: readonly Passage[];
}

/**
 * Versions 1 (no archive) and 2: every message of every run, older runs folded into one line each.
 * Version 2 also kept a `track` of how often the persona's verdict matched the council's final
 * action. That record measured conformity, not being right (a dissenting auditor sank to 0.11 in
 * three runs), so migrating drops it: a persona starts its record of confirmed outcomes empty.
 * A development build wrote messages with `outcomes` as version 3 for a while (never released): it
 * migrates the same way, keeping its outcomes.
 */
const SessionStateV2 = z.strictObject({
  schemaVersion: z.union([z.literal(1), z.literal(2), z.literal(3)]),
  persona_id: z.string(),
  updated_at: z.string(),
  runs: z.array(z.string()),
  messages: z.array(HistoryMessage),
  archived: z
    .strictObject({
      count: z.number().int().min(0),
      recent: z.array(z.strictObject({ run_id: z.string(), task: z.string(), last_word: z.string() })),
    })
    .default({ count: 0, recent: [] }),
  track: z.array(z.strictObject({ run_id: z.string(), said: z.string(), final: z.string() })).default([]),
  outcomes: z.array(OutcomeEntry).default([]),
});

export function emptySessionState(personaId: string, now: string): SessionState {
  return {
    schemaVersion: SESSION_STATE_VERSION,
    persona_id: personaId,
    updated_at: now,
    runs: [],
    tasks: [],
    passages: [],
    archived: { count: 0 },
    outcomes: [],
  };
}

/** Validates a session file's JSON, migrating known older versions. */
export function parseSessionState(json: unknown): Parsed<SessionState> {
  const old = SessionStateV2.safeParse(json);
  if (old.success) return { ok: true, value: migrateV2(old.data) };
  const result = SessionState.safeParse(json);
  if (!result.success) return { ok: false, issues: formatIssues(result.error) };
  return { ok: true, value: result.data };
}

/**
 * A version-1 or -2 state as version 3: each message's passages, a summary per run (what was asked,
 * from its briefing; the persona's last word standing for the decision, which they did not keep),
 * the summary lines of archived runs as summaries; the conformity `track` is dropped, confirmed
 * outcomes kept (only the interim version 3 had any).
 */
function migrateV2(old: z.infer<typeof SessionStateV2>): SessionState {
  const folded = old.archived.recent.map((r) => ({ run_id: r.run_id, asked: r.task, decided: lastWord(r.last_word), facts: [], times: 1 }));
  const kept = old.runs.map((runId): TaskSummary => {
    const messages = old.messages.filter((m) => m.run_id === runId);
    const briefing = messages.find((m) => m.role === 'user' && m.content.includes(BRIEFING_HEADER))?.content ?? '';
    const last = [...messages].reverse().find((m) => m.role === 'assistant')?.content ?? '';
    return {
      run_id: runId,
      ...(messages[0] ? { at: messages[0].ts } : {}),
      asked: clip(/TASK:\s*(.+)/.exec(briefing)?.[1] ?? '(unknown)', 200),
      decided: lastWord(last),
      facts: [],
      times: 1,
    };
  });
  return {
    schemaVersion: SESSION_STATE_VERSION,
    persona_id: old.persona_id,
    updated_at: old.updated_at,
    runs: old.runs,
    tasks: [...folded, ...kept],
    passages: old.messages.flatMap(legacyPassages),
    archived: { count: old.archived.count },
    outcomes: old.outcomes,
  };
}

function lastWord(text: string): string {
  const verdict = text.trim().startsWith('{') ? parseVerdict('self', text) : undefined;
  return verdict?.valid ? `you said ${verdict.action}: ${clip(verdict.rationale, 120)}` : `your last word: ${clip(text, 120)}`;
}

/** Whether the state holds this run (its passages, or its task's summary). */
export function holdsRun(state: SessionState, runId: string): boolean {
  return state.runs.includes(runId) || state.tasks.some((t) => t.run_id === runId);
}

/**
 * Adds one run (its summary, its passages); a run the state holds already is not added again
 * (idempotent on resume). The summary of a task done before replaces that task's.
 */
export function appendRun(state: SessionState, runId: string, memory: RunMemory, now: string): SessionState {
  if (holdsRun(state, runId)) return state;
  const same = memory.summary.key === undefined ? undefined : state.tasks.find((t) => t.key === memory.summary.key);
  const summary = same ? mergeSummary(same, memory.summary) : memory.summary;
  return {
    ...state,
    updated_at: now,
    runs: [...state.runs, runId],
    tasks: [...state.tasks.filter((t) => t !== same), summary].slice(-TASKS_KEPT),
    passages: [...state.passages, ...memory.passages],
  };
}

/**
 * Keeps the state small: the passages of all but the newest `keepRuns` runs move out (to be appended
 * to the archive by the caller, nothing is dropped), each run's with its task's summary when the
 * summary is still that run's. The summaries stay (the newest 200).
 */
export function compactSession(state: SessionState, keepRuns: number): { state: SessionState; moved: Passage[] } {
  if (state.runs.length <= keepRuns) return { state, moved: [] };
  const leaving = state.runs.slice(0, state.runs.length - keepRuns);
  const moved = leaving.flatMap((runId) => {
    const summary = state.tasks.find((t) => t.run_id === runId);
    const passages = state.passages.filter((p) => p.run_id === runId);
    return summary ? [...passages, summaryPassage(summary)] : passages;
  });
  const gone = new Set(leaving);
  return {
    state: {
      ...state,
      runs: state.runs.filter((r) => !gone.has(r)),
      passages: state.passages.filter((p) => !gone.has(p.run_id)),
      archived: { count: state.archived.count + leaving.length },
    },
    moved,
  };
}

/** A task summary as an archived passage: recall finds it there once the state no longer keeps it. */
function summaryPassage(s: TaskSummary): Passage {
  return {
    run_id: s.run_id,
    ...(s.at ? { at: s.at } : {}),
    from: 'summary',
    text: renderSummary(s).replace(/^- /, ''),
    ...(s.tokens !== undefined ? { tokens: s.tokens } : {}),
  };
}

/**
 * The memory with its token counts, once its bytes pass the budget: each summary and passage is
 * counted once (when it is saved), so choosing what a run carries never counts. Smaller memory
 * needs no count: bytes bound tokens from above, and all of it fits.
 */
export function countMemory(state: SessionState, budget: number, count: (text: string) => number): SessionState {
  const bytes =
    state.tasks.reduce((sum, t) => sum + utf8Bytes(renderSummary(t)), 0) + state.passages.reduce((sum, p) => sum + utf8Bytes(p.text), 0);
  if (bytes <= budget) return state;
  return {
    ...state,
    tasks: state.tasks.map((t) => (t.tokens === undefined ? { ...t, tokens: count(renderSummary(t)) } : t)),
    passages: state.passages.map((p) => (p.tokens === undefined ? { ...p, tokens: count(p.text) } : p)),
  };
}

/**
 * The moved passages the archive does not hold yet. A crash between archiving runs and saving the
 * state file leaves them in both, and the next save moves them again: `archived` says how many of
 * each run's records already end the archive (they are appended in order, so the first ones), and
 * only the rest is appended. A retry never writes a record twice.
 */
export function unarchivedMessages<T extends { run_id: string }>(moved: readonly T[], archived: ReadonlyMap<string, number>): T[] {
  const seen = new Map<string, number>();
  return moved.filter((m) => {
    const nth = (seen.get(m.run_id) ?? 0) + 1;
    seen.set(m.run_id, nth);
    return nth > (archived.get(m.run_id) ?? 0);
  });
}

/** An archive line as recall reads it: a passage, or a version-2 message (its passages); nothing else (reset markers, corrupt states). */
export function archivedPassages(json: unknown): Passage[] {
  const passage = Passage.safeParse(json);
  if (passage.success) return [passage.data];
  const message = HistoryMessage.safeParse(json);
  return message.success ? legacyPassages(message.data) : [];
}

/**
 * The one sentence that reports a persona's corrupt memory, whoever found it (a run, the watcher,
 * `maestro outcome`, `maestro session show`): moved aside and the persona starting fresh, or — found by
 * a command that only looks — left where it is for the next run to move aside.
 */
export function corruptSessionNotice(
  persona: string,
  found: { readonly problem: string } & ({ readonly movedTo: string } | { readonly file: string }),
): string {
  const problem = found.problem.replace(/\s+/g, ' ').trim();
  if ('movedTo' in found) return `session state of ${persona} was corrupt (${problem}); moved to ${found.movedTo}, starting fresh`;
  return `session state of ${persona} is corrupt (${problem}): ${found.file} is left as it is; the next run moves it aside and ${persona} starts fresh`;
}
