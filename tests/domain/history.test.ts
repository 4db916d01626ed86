import { describe, expect, it } from 'vitest';
import { selectHistory } from '../../src/domain/history.js';
import type { HistoryMessage } from '../../src/domain/session-state.js';

const words = (t: string) => t.split(/\s+/).filter(Boolean).length;
const run = (id: string, task: string, reply: string): HistoryMessage[] => [
  { role: 'user', content: `=== TASK BRIEFING ===\n\nTASK: ${task}\n\n${'context '.repeat(20)}`, run_id: id, ts: 't' },
  { role: 'assistant', content: reply, run_id: id, ts: 't' },
];

describe('persona history in prompts', () => {
  it('keeps everything when it fits', () => {
    const h = [...run('r1', 'one', 'a'), ...run('r2', 'two', 'b')];
    expect(selectHistory(h, 1000, words)).toEqual({ messages: h.map(({ role, content }) => ({ role, content })), folded: 0 });
  });

  it('keeps the newest whole messages within the budget, starting with a user message, and folds the rest', () => {
    const h = [...run('r1', 'first task', 'first answer'), ...run('r2', 'second task', 'second answer')];
    const view = selectHistory(h, 40, words);
    expect(view.messages.map((m) => m.content.includes('second') || m.content === 'second answer')).toEqual([true, true]);
    expect(view.messages[0]?.role).toBe('user');
    expect(view.folded).toBe(2);
    expect(view.summary).toContain('- run r1: task: first task; your last word: first answer');
  });

  it('includes archived runs in the summary, newest last, and says how many were left out', () => {
    const archived = { count: 30, recent: [{ run_id: 'old-1', task: 'ancient task', last_word: 'done' }] };
    const view = selectHistory(run('r9', 'now', 'ok'), 1000, words, archived);
    expect(view.messages).toHaveLength(2);
    expect(view.summary).toContain('- run old-1: task: ancient task; your last word: done');
    expect(view.summary).toContain('(29 older runs omitted)');
  });
});
