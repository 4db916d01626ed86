import type { ChatMessage } from './ports.js';
import { summarizeRun, type ArchivedRun, type HistoryMessage } from './session-state.js';

export interface HistoryView {
  /** Most recent persisted messages that fit the budget, oldest first, starting with a user message. */
  readonly messages: ChatMessage[];
  /** A summary of the older messages that did not fit, or undefined when nothing was folded. */
  readonly summary?: string;
  readonly folded: number;
}

/**
 * Bounds a persona's persisted history to a token budget: the newest messages are kept whole and
 * the older ones (and the archived runs) are folded into a short, deterministic summary, one line per run.
 */
export function selectHistory(
  history: readonly HistoryMessage[],
  maxTokens: number,
  countTokens: (text: string) => number,
  archived: { count: number; recent: readonly ArchivedRun[] } = { count: 0, recent: [] },
): HistoryView {
  let used = 0;
  let keepFrom = history.length;
  for (let i = history.length - 1; i >= 0; i--) {
    const cost = countTokens((history[i] as HistoryMessage).content) + 4;
    if (used + cost > maxTokens) break;
    used += cost;
    keepFrom = i;
  }
  while (keepFrom < history.length && history[keepFrom]?.role !== 'user') keepFrom++;
  const kept = history.slice(keepFrom).map((m) => ({ role: m.role, content: m.content }) as ChatMessage);
  const older = history.slice(0, keepFrom);
  if (older.length === 0 && archived.count === 0) return { messages: kept, folded: 0 };
  return { messages: kept, summary: summarize(older, archived), folded: older.length };
}

function summarize(messages: readonly HistoryMessage[], archived: { count: number; recent: readonly ArchivedRun[] }): string {
  const runs = new Map<string, HistoryMessage[]>();
  for (const m of messages) runs.set(m.run_id, [...(runs.get(m.run_id) ?? []), m]);
  const lines = [...archived.recent, ...[...runs.entries()].map(([runId, ms]) => summarizeRun(runId, ms))]
    .slice(-20)
    .map((r) => `- run ${r.run_id}: task: ${r.task}; your last word: ${r.last_word}`);
  const total = archived.count + runs.size;
  const omitted = total > lines.length ? `(${total - lines.length} older runs omitted)\n` : '';
  return `You took part in earlier tasks; their full text did not fit, so here is a summary:\n${omitted}${lines.join('\n')}`;
}
