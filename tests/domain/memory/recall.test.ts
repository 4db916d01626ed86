import { describe, expect, it } from 'vitest';
import type { Passage } from '../../../src/domain/memory/passages.js';
import { MEMORY_HEADER, recallTerms, selectMemory } from '../../../src/domain/memory/recall.js';
import type { TaskSummary } from '../../../src/domain/memory/summary.js';
import { countTokens } from '../../../src/adapters/model/token-counter.js';

const summary = (n: number, asked: string, over: Partial<TaskSummary> = {}): TaskSummary => ({
  run_id: `r${n}`,
  at: `2026-11-${String(n).padStart(2, '0')}T09:00:00.000Z`,
  key: asked,
  asked,
  decided: 'proceed',
  facts: [],
  times: 1,
  ...over,
});
const passage = (n: number, text: string, from = 'self'): Passage => ({
  run_id: `r${n}`,
  at: `2026-11-${String(n).padStart(2, '0')}T09:00:00.000Z`,
  from,
  text,
});
const limits = { budget: 1_500, recent: 2, recall: 2 };

describe('what a persona carries into a task: latest summaries, then what it recalls', () => {
  it('carries nothing when it remembers nothing, or when the budget is 0', () => {
    expect(selectMemory({ tasks: [], passages: [] }, 'Choose the cache', limits)).toEqual({
      text: '',
      summaries: 0,
      recalled: 0,
      tokens: 0,
    });
    const some = { tasks: [summary(1, 'Choose the cache')], passages: [passage(1, 'Redis fits the cache for billing.')] };
    expect(selectMemory(some, 'Choose the cache', { ...limits, budget: 0 }).text).toBe('');
  });

  it('the summaries of the latest tasks, newest first, however unrelated; older ones only when the task is about them', () => {
    const tasks = [
      summary(1, 'Name the billing project', { facts: ['The project is named Falcon; launch on 14 March 2027.'] }),
      summary(2, 'Choose a feature-flag service'),
      summary(3, 'Plan the office move'),
      summary(4, 'Review the on-call rota'),
    ];
    const unrelated = selectMemory({ tasks, passages: [] }, 'Draft the quarterly newsletter', limits);
    expect(unrelated.text.split('\n')).toEqual([
      MEMORY_HEADER,
      'Latest tasks:',
      '- 2026-11-04 asked: Review the on-call rota | decided: proceed',
      '- 2026-11-03 asked: Plan the office move | decided: proceed',
    ]);
    expect(unrelated).toMatchObject({ summaries: 2, recalled: 0 });
    // Several tasks later, a task that refers back to the first finds its summary.
    const back = selectMemory({ tasks, passages: [] }, 'Announce the launch date of the Falcon billing project', limits);
    expect(back.recalled).toBe(1);
    expect(back.text).toContain(
      'Recalled for this task:\n- 2026-11-01 asked: Name the billing project | decided: proceed | settled: The project is named Falcon; launch on 14 March 2027.',
    );
  });

  it('recalls the passages sharing most with the task (two of its terms at least), best first, at most `recall`', () => {
    const passages = [
      passage(1, 'Redis fits the billing cache, read far more often than written.'),
      passage(2, 'The billing team prefers managed services.', 'beta'),
      passage(3, 'Cache invalidation for billing invoices needs a 5-minute expiry.', 'gamma'),
      passage(4, 'The office move is in September.'),
    ];
    const memory = selectMemory({ tasks: [], passages }, 'Choose the cache for billing invoices', limits);
    expect(memory.text.split('\n').slice(1)).toEqual([
      'Recalled for this task:',
      '- (gamma said, 2026-11-03) Cache invalidation for billing invoices needs a 5-minute expiry.',
      '- (you said, 2026-11-01) Redis fits the billing cache, read far more often than written.',
    ]);
    // Sharing one of the task's terms is not enough: "billing" alone does not bring the team's preference back.
    expect(selectMemory({ tasks: [], passages }, 'Choose the cache for billing invoices', { ...limits, recall: 5 }).recalled).toBe(2);
    expect(selectMemory({ tasks: [], passages }, 'Choose the cache for billing invoices', { ...limits, recall: 1 }).text).toContain(
      '(gamma said',
    );
  });

  it('does not recall what says nothing the task does not say, nor a near-copy of a line it carries', () => {
    const passages = [
      passage(1, 'Choose the cache for billing.'),
      passage(2, 'Redis fits the billing cache, with invoices kept five minutes.'),
      passage(3, 'Redis fits the billing cache, with invoices kept five minutes!', 'beta'),
    ];
    const memory = selectMemory({ tasks: [], passages }, 'Choose the cache for billing', limits);
    expect(memory.recalled).toBe(1);
    // Of two equal matches, the newer.
    expect(memory.text).toContain('(beta said, 2026-11-03) Redis fits');
  });

  it('never costs more than the budget, by the counts kept (bytes where none was), whatever it remembers', () => {
    const tasks = Array.from({ length: 40 }, (_, i) =>
      summary(i + 1, `Review the rollout plan of service ${i} and its cache`, {
        facts: [`Service ${i} launches on ${i + 1} March 2027 with Redis.`],
      }),
    );
    const passages = Array.from({ length: 300 }, (_, i) =>
      passage((i % 28) + 1, `Run ${i}: the cache of service ${i} needs Redis and a rollout plan with ${i} steps.`),
    );
    for (const budget of [0, 50, 120, 300, 800, 1500]) {
      const memory = selectMemory({ tasks, passages }, 'Review the cache of the rollout plan', { budget, recent: 5, recall: 10 });
      expect(memory.tokens).toBeLessThanOrEqual(budget);
      expect(countTokens(memory.text ? `\n\n${memory.text}` : '')).toBeLessThanOrEqual(Math.max(memory.tokens, 0));
    }
    const counted = tasks.map((t) => ({ ...t, tokens: 1 }));
    // With counts kept, the same budget carries more.
    expect(selectMemory({ tasks: counted, passages: [] }, 'x', { budget: 300, recent: 40, recall: 0 }).summaries).toBeGreaterThan(
      selectMemory({ tasks, passages: [] }, 'x', { budget: 300, recent: 40, recall: 0 }).summaries,
    );
  });

  it('searches the archive with the task’s words and stems, stop words out', () => {
    expect(recallTerms('Choose the caching for the Billing service')).toEqual([
      'bill',
      'billing',
      'cach',
      'caching',
      'choos',
      'choose',
      'servic',
      'service',
    ]);
  });
});
