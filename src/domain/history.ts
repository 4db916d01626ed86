import type { ChatMessage } from './ports.js';
import type { HistoryMessage } from './session-state.js';
import { BRIEFING_HEADER } from './prompts.js';

export interface HistoryView {
  /** Most recent persisted messages that fit the budget, oldest first, starting with a user message. */
  readonly messages: ChatMessage[];
  /** A summary of the older messages that did not fit, or undefined when nothing was folded. */
  readonly summary?: string;
  readonly folded: number;
}

/**
 * Bounds a persona's persisted history to a token budget: the newest messages are kept whole and
 * the older ones are folded into a short, deterministic summary (one line per earlier run).
 */
export function selectHistory(
  history: readonly HistoryMessage[],
  maxTokens: number,
  countTokens: (text: string) => number,
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
  if (older.length === 0) return { messages: kept, folded: 0 };
  return { messages: kept, summary: summarize(older), folded: older.length };
}

function summarize(messages: readonly HistoryMessage[]): string {
  const runs = new Map<string, HistoryMessage[]>();
  for (const m of messages) runs.set(m.run_id, [...(runs.get(m.run_id) ?? []), m]);
  const lines = [...runs.entries()].slice(-20).map(([runId, ms]) => {
    const task = taskLine(ms.find((m) => m.role === 'user' && m.content.includes(BRIEFING_HEADER))?.content);
    const last = [...ms].reverse().find((m) => m.role === 'assistant')?.content ?? '';
    return `- run ${runId}: task: ${clip(task, 160)}; your last word: ${clip(last, 160)}`;
  });
  const skipped = runs.size > 20 ? `(${runs.size - 20} older runs omitted)\n` : '';
  return `You took part in earlier tasks; their full text did not fit, so here is a summary:\n${skipped}${lines.join('\n')}`;
}

function taskLine(briefing: string | undefined): string {
  if (!briefing) return '(unknown)';
  const match = /TASK:\s*(.+)/.exec(briefing);
  return match?.[1] ?? '(unknown)';
}

function clip(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
