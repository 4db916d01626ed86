import { describe, expect, it } from 'vitest';
import { checkBudget, type Budget } from '../../src/domain/budget.js';
import { totalUsage } from '../../src/domain/usage.js';

const usage = (calls: number, prompt = 0, completion = 0, cost: number | undefined = 0) => ({
  calls,
  prompt_tokens: prompt,
  completion_tokens: completion,
  cost_usd: cost,
});
const check = (budget: Budget, u: ReturnType<typeof usage>, phase: 'before' | 'after', elapsedSeconds = 0, unpricedModels: string[] = []) =>
  checkBudget({ budget, usage: u, elapsedSeconds, phase, unpricedModels })?.limit ?? null;

describe('budgets', () => {
  it.each<[string, Budget, ReturnType<typeof usage>, 'before' | 'after', number, string | null]>([
    ['4th call allowed under max_calls 4', { max_calls: 4 }, usage(3), 'before', 0, null],
    ['5th call refused under max_calls 4', { max_calls: 4 }, usage(4), 'before', 0, 'max_calls'],
    ['prompt tokens at the limit are fine', { max_prompt_tokens: 100 }, usage(2, 100), 'after', 0, null],
    ['prompt tokens over the limit trip after the call', { max_prompt_tokens: 100 }, usage(2, 101), 'after', 0, 'max_prompt_tokens'],
    ['completion tokens', { max_completion_tokens: 10 }, usage(1, 0, 11), 'after', 0, 'max_completion_tokens'],
    ['wall clock before the next call', { max_wall_seconds: 30 }, usage(1), 'before', 31, 'max_wall_seconds'],
    ['cost', { max_cost_usd: 0.01 }, usage(1, 0, 0, 0.02), 'after', 0, 'max_cost_usd'],
    ['no budget, no limit', {}, usage(1000, 1e9, 1e9), 'before', 1e6, null],
  ])('%s', (_what, budget, u, phase, elapsed, expected) => {
    expect(check(budget, u, phase, elapsed)).toBe(expected);
  });

  it('fails closed when a cost budget meets a model without a price', () => {
    expect(check({ max_cost_usd: 1 }, usage(0), 'before', 0, ['gpt-x'])).toBe('price_unknown');
    expect(check({ max_calls: 10 }, usage(0), 'before', 0, ['gpt-x'])).toBeNull();
  });

  it('sums usage and prices per model; the offline model is free', () => {
    const steps = [
      { persona: 'a', model: 'cloud/gpt-x', calls: 1, usage: { prompt_tokens: 1_000_000, completion_tokens: 500_000 } },
      { persona: 'b', model: 'offline-rehearsal-v1', calls: 2, usage: { prompt_tokens: 10, completion_tokens: 5 } },
    ];
    const total = totalUsage(steps, { 'gpt-x': { prompt_per_mtok: 1, completion_per_mtok: 4 } });
    expect(total).toMatchObject({ calls: 3, prompt_tokens: 1_000_010, completion_tokens: 500_005, cost_usd: 3, unpriced: [] });
    expect(totalUsage(steps, {}).cost_usd).toBeUndefined();
  });
});
