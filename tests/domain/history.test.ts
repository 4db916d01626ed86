import { describe, expect, it } from 'vitest';
import { selectHistory } from '../../src/domain/history.js';
import type { HistoryMessage } from '../../src/domain/session-state.js';
import { countTokens } from '../../src/adapters/model/token-counter.js';

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

  it('uses the token counts kept with stored messages instead of counting them again', () => {
    const h = [...run('r1', 'first task', 'first answer'), ...run('r2', 'second task', 'second answer')].map((m) => ({
      ...m,
      tokens: words(m.content),
    }));
    const counted: string[] = [];
    const view = selectHistory(h, 73, (text) => (counted.push(text), words(text)));
    expect(view.folded).toBe(2);
    expect(counted.every((text) => text.includes('summary'))).toBe(true); // only the summary is counted
    expect(selectHistory(h, 73, words)).toEqual(view);
  });

  it('keeps the newest whole messages within the budget, starting with a user message, and folds the rest', () => {
    const h = [...run('r1', 'first task', 'first answer'), ...run('r2', 'second task', 'second answer')];
    // Each run costs 37 (27 + 4, 2 + 4): the whole history is 74. r2 plus the summary of r1 (27 words
    // + 8 of framing) is 72, so a budget of 73 keeps r2 and folds r1.
    const view = selectHistory(h, 73, words);
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

  it('counts the summary against the budget: with 500 prior turns nothing carries more than max_tokens', () => {
    const history: HistoryMessage[] = [];
    for (let i = 0; i < 250; i++)
      history.push(...run(`run-${i}`, `task number ${i}: review the rollout plan of service ${i}`, `answer ${i}: `.repeat(30)));
    const archived = {
      count: 40,
      recent: Array.from({ length: 20 }, (_, i) => ({
        run_id: `old-${i}`,
        task: `an archived task ${i} `.repeat(8),
        last_word: `done ${i} `.repeat(10),
      })),
    };
    for (const budget of [6000, 1500, 300, 60]) {
      const view = selectHistory(history, budget, countTokens, archived);
      const messages = view.messages.reduce((sum, m) => sum + countTokens(m.content) + 4, 0);
      const summary = view.summary === undefined ? 0 : countTokens(`\n\n--- Memory of earlier tasks ---\n${view.summary}`);
      expect(messages + summary, `budget ${budget}`).toBeLessThanOrEqual(budget);
      expect(view.folded + view.messages.length).toBe(history.length);
      if (view.messages.length > 0) expect(view.messages[0]?.role).toBe('user');
    }
    // With a generous budget the newest run is kept whole and the summary names the archive.
    const roomy = selectHistory(history, 6000, countTokens, archived);
    expect(roomy.messages.at(-1)?.content).toContain('answer 249');
    expect(roomy.summary).toMatch(/older runs omitted/);
  });

  it('drops the oldest summary lines first when the summary alone would not fit', () => {
    const archived = { count: 3, recent: ['a', 'b', 'c'].map((id) => ({ run_id: id, task: `task ${id}`, last_word: 'ok' })) };
    const view = selectHistory([], 40, words, archived);
    expect(view.summary).toContain('- run c:');
    expect(view.summary).not.toContain('- run a:');
    expect(words(view.summary ?? '') + 8).toBeLessThanOrEqual(40);
  });
});
