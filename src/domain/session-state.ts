import { z } from 'zod';
import { formatIssues, type Parsed } from './issues.js';

export const SESSION_STATE_VERSION = 1;

/** One message of a persona's persisted chat history. */
export const HistoryMessage = z.strictObject({
  role: z.enum(['user', 'assistant']),
  content: z.string(),
  run_id: z.string(),
  ts: z.string(),
});
export type HistoryMessage = z.infer<typeof HistoryMessage>;

/** `session_states/<persona>_session.json`: a persona's memory across tasks (the persistent council). */
export const SessionState = z.strictObject({
  schemaVersion: z.literal(SESSION_STATE_VERSION),
  persona_id: z.string(),
  updated_at: z.string(),
  /** Ids of the runs whose turns are in `messages`, oldest first; a run is never saved twice. */
  runs: z.array(z.string()),
  messages: z.array(HistoryMessage),
});
export type SessionState = z.infer<typeof SessionState>;

export function emptySessionState(personaId: string, now: string): SessionState {
  return { schemaVersion: SESSION_STATE_VERSION, persona_id: personaId, updated_at: now, runs: [], messages: [] };
}

/** Validates a session file's JSON; migrations from older versions go here. */
export function parseSessionState(json: unknown): Parsed<SessionState> {
  const result = SessionState.safeParse(json);
  if (!result.success) return { ok: false, issues: formatIssues(result.error) };
  return { ok: true, value: result.data };
}

/** Appends one run's messages; a run already saved is not appended again (idempotent on resume). */
export function appendRun(
  state: SessionState,
  runId: string,
  messages: readonly HistoryMessage[],
  now: string,
): SessionState {
  if (state.runs.includes(runId)) return state;
  return { ...state, updated_at: now, runs: [...state.runs, runId], messages: [...state.messages, ...messages] };
}
