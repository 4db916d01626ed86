import { describe, expect, it } from 'vitest';
import { mergeSummary, renderSummary, settledFacts, summarizeTask } from '../../../src/domain/memory/summary.js';

const base = { runId: 'r1', at: '2026-11-20T09:00:00.000Z', key: 'k1', decision: 'proceed' };

describe('a task summary (what was asked, decided, settled), made without a model', () => {
  it('keeps the task, the final action with the proposal’s first sentence, and the sentences that settle something', () => {
    const s = summarizeTask({
      ...base,
      task: 'Name the new billing project and fix its launch date. Keep it short.',
      proposal: [
        '### Recommendation',
        '',
        'Go ahead with the plan as discussed by the council.',
        '',
        '- The project is named Falcon, owned by Dana Ruiz.',
        '- Launch is set for 14 March 2027 with a budget of $40,000.',
        '- We should keep an eye on things.',
      ].join('\n'),
    });
    expect(s.asked).toBe('Name the new billing project and fix its launch date. Keep it short.');
    expect(s.decided).toBe('proceed — Go ahead with the plan as discussed by the council.');
    expect(s.facts).toEqual([
      'The project is named Falcon, owned by Dana Ruiz.',
      'Launch is set for 14 March 2027 with a budget of $40,000.',
    ]);
    expect(renderSummary(s)).toBe(
      '- 2026-11-20 asked: Name the new billing project and fix its launch date. Keep it short. | decided: proceed — Go ahead with the plan as discussed by the council. | settled: The project is named Falcon, owned by Dana Ruiz.; Launch is set for 14 March 2027 with a budget of $40,000.',
    );
  });

  it('clips a long task, and finds the facts beyond what the summary keeps of it', () => {
    const task = `${'Review the rollout of the payments service and list what could go wrong. '.repeat(3)}The freeze starts on 2027-01-04 and Alex Kim signs off.`;
    const s = summarizeTask({ ...base, task, proposal: 'Proceed.' });
    expect(s.asked.length).toBeLessThanOrEqual(160);
    expect(s.asked.endsWith('…')).toBe(true);
    expect(s.decided).toBe('proceed');
    expect(s.facts).toEqual(['The freeze starts on 2027-01-04 and Alex Kim signs off.']);
  });

  it('finds dates, numbers, names and decisions; a sentence with only one weak sign is not a fact', () => {
    const facts = settledFacts(
      [
        [
          'We agreed to move the reads first.',
          'The contract renews on May 1, 2027.',
          'Memory grows by 12 GiB a month on Kafka.',
          'It was a good discussion overall.',
          'There are 3 options.',
          'Ask Maria.',
        ].join(' '),
      ],
      [],
    );
    expect(facts).toEqual([
      'We agreed to move the reads first.',
      'The contract renews on May 1, 2027.',
      'Memory grows by 12 GiB a month on Kafka.',
    ]);
  });

  it('keeps at most three facts, the strongest, in the order they were said, and none the summary already says', () => {
    const text = [
      'The budget is 10 USD.',
      'We decided on Redis on 2027-02-02.',
      'Dana Ruiz owns the cache from Q3 2027.',
      'The deadline is Friday.',
      'The owner is Sam Lee.',
    ].join(' ');
    expect(settledFacts([text], [])).toEqual([
      'We decided on Redis on 2027-02-02.',
      'Dana Ruiz owns the cache from Q3 2027.',
      'The deadline is Friday.',
    ]);
    expect(settledFacts([text], ['We decided on Redis on 2027-02-02.'])).not.toContain('We decided on Redis on 2027-02-02.');
  });

  it('the same task done again: the newest decision, its facts first, counted', () => {
    const first = summarizeTask({ ...base, task: 'Choose the cache', proposal: 'Use Memcached for now. The budget is $500 a month.' });
    const again = summarizeTask({
      ...base,
      runId: 'r2',
      decision: 'investigate',
      task: 'Choose the cache',
      proposal: 'Measure the hit rate first. We agreed on a 2-week trial.',
    });
    const merged = mergeSummary({ ...first, tokens: 30 }, again);
    expect(merged).toMatchObject({ run_id: 'r2', times: 2, decided: 'investigate — Measure the hit rate first.' });
    expect(merged.facts).toEqual(['We agreed on a 2-week trial.', 'The budget is $500 a month.']);
    // Its line changed, so the count kept with the older one is dropped.
    expect(merged.tokens).toBeUndefined();
    expect(renderSummary(merged)).toContain('asked (2 times): Choose the cache');
  });
});
