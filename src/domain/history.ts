import type { ChatMessage } from './chat.js';
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
 * The summary is part of the budget: kept messages plus the summary never exceed `maxTokens` (each
 * message costs its tokens plus 4 for the chat framing). When even the summary alone does not fit,
 * its oldest lines go first.
 */
export function selectHistory(
  history: readonly HistoryMessage[],
  maxTokens: number,
  countTokens: (text: string) => number,
  archived: { count: number; recent: readonly ArchivedRun[] } = { count: 0, recent: [] },
): HistoryView {
  // Every token of a byte-level BPE covers at least one UTF-8 byte, so bytes bound tokens from above:
  // a history whose bytes fit needs no counting (and the tokenizer need not even be loaded).
  if (archived.count === 0 && history.reduce((sum, m) => sum + utf8Bytes(m.content) + 4, 0) <= maxTokens) {
    return { messages: toChat(history), folded: 0 };
  }
  const costs = history.map((m) => (m.tokens ?? countTokens(m.content)) + 4);
  let used = 0;
  let keepFrom = history.length;
  for (let i = history.length - 1; i >= 0; i--) {
    const cost = costs[i] as number;
    if (used + cost > maxTokens) break;
    used += cost;
    keepFrom = i;
  }
  const startOnUser = (): void => {
    while (keepFrom < history.length && history[keepFrom]?.role !== 'user') used -= costs[keepFrom++] as number;
  };
  startOnUser();
  if (keepFrom === 0 && archived.count === 0) return { messages: toChat(history), folded: 0 };
  // Something was folded: make room for the summary, folding more of the oldest kept messages if need be.
  for (;;) {
    const summary = summarize(history.slice(0, keepFrom), archived, maxTokens - used, countTokens);
    if (summary !== undefined || keepFrom === history.length) {
      const kept = history.slice(keepFrom);
      return { messages: toChat(kept), ...(summary !== undefined ? { summary } : {}), folded: keepFrom };
    }
    used -= costs[keepFrom++] as number;
    startOnUser();
  }
}

const encoder = new TextEncoder();
function utf8Bytes(text: string): number {
  return encoder.encode(text).length;
}

function toChat(messages: readonly HistoryMessage[]): ChatMessage[] {
  return messages.map((m) => ({ role: m.role, content: m.content }) as ChatMessage);
}

const SUMMARY_HEADER = 'You took part in earlier tasks; their full text did not fit, so here is a summary:';

/**
 * The summary of folded and archived runs within `budget` tokens (newest lines kept), or undefined
 * when not even one line fits. At most 20 lines.
 */
function summarize(
  messages: readonly HistoryMessage[],
  archived: { count: number; recent: readonly ArchivedRun[] },
  budget: number,
  countTokens: (text: string) => number,
): string | undefined {
  const runs = new Map<string, HistoryMessage[]>();
  for (const m of messages) runs.set(m.run_id, [...(runs.get(m.run_id) ?? []), m]);
  const all = [...archived.recent, ...[...runs.entries()].map(([runId, ms]) => summarizeRun(runId, ms))].map(
    (r) => `- run ${r.run_id}: task: ${r.task}; your last word: ${r.last_word}`,
  );
  const total = archived.count + runs.size;
  const textOf = (n: number): string => {
    const lines = all.slice(-n);
    const omitted = total > lines.length ? `(${total - lines.length} older runs omitted)\n` : '';
    return `${SUMMARY_HEADER}\n${omitted}${lines.join('\n')}`;
  };
  // The summary goes into the system prompt after a separator line; 8 tokens cover that framing.
  // Bytes bound tokens from above, so a summary whose bytes fit is not counted.
  const fits = (text: string): boolean => utf8Bytes(text) + 8 <= budget || countTokens(text) + 8 <= budget;
  // The most lines that fit, found by halving: one more line always costs more tokens (a line is at
  // least "- run <id>: task: …; your last word: …", more than the "(N older runs omitted)" line it can
  // replace), so "fits" holds for every count below the largest that fits.
  let low = 0;
  let high = Math.min(20, all.length);
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (fits(textOf(mid))) low = mid;
    else high = mid - 1;
  }
  return low === 0 ? undefined : textOf(low);
}
