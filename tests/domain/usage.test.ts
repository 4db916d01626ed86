import { describe, expect, it } from 'vitest';
import type { Price } from '../../src/domain/budget.js';
import { MEMORY_HEADER } from '../../src/domain/memory/recall.js';
import { modelOf, splitPrompt, totalUsage, usageByPersona } from '../../src/domain/usage.js';

const call = (persona: string, model: string, prompt: number, completion: number, calls = 1) => ({
  persona,
  model,
  calls,
  usage: { prompt_tokens: prompt, completion_tokens: completion },
});
const prices: Record<string, Price> = {
  'gpt-4o-mini': { prompt_per_mtok: 0.15, completion_per_mtok: 0.6 },
  'big-model': { prompt_per_mtok: 10, completion_per_mtok: 30 },
};

/** No cached tokens, and no prompt tokens anywhere. */
const NOTHING = { cached_tokens: 0, prompt_split: { instructions: 0, memory: 0, task: 0, deliberation: 0 } };

describe('modelOf: prices are looked up by the model, not the route', () => {
  it.each([
    ['openai/gpt-4o-mini', 'gpt-4o-mini'],
    ['gpt-4o-mini', 'gpt-4o-mini'],
    ['azure/org/model-x', 'org/model-x'],
  ])('%s → %s', (label, model) => {
    expect(modelOf(label)).toBe(model);
  });
});

describe('totalUsage', () => {
  it('sums calls, tokens and the cost of every step', () => {
    const total = totalUsage([call('a', 'openai/gpt-4o-mini', 1_000_000, 0), call('b', 'work/big-model', 1000, 2000, 2)], prices);
    expect(total).toMatchObject({ calls: 3, prompt_tokens: 1_001_000, completion_tokens: 2000, unpriced: [] });
    // 1M prompt tokens at 0.15; 1000 at 10 and 2000 at 30 per million.
    expect(total.cost_usd).toBeCloseTo(0.15 + 0.01 + 0.06, 10);
  });

  it('has no cost at all when one model has no price, and names the unpriced models once, sorted', () => {
    const total = totalUsage(
      [call('a', 'r/zeta', 10, 10), call('a', 'openai/gpt-4o-mini', 10, 10), call('b', 'r/alpha', 1, 1), call('b', 's/zeta', 1, 1)],
      prices,
    );
    expect(total.cost_usd).toBeUndefined();
    expect(total.unpriced).toEqual(['alpha', 'zeta']);
    expect(total.prompt_tokens).toBe(22);
  });

  it('counts the offline rehearsal as free, whatever the price table says', () => {
    expect(totalUsage([call('a', 'offline/offline-rehearsal-v1', 5000, 5000)], {}).cost_usd).toBe(0);
  });

  it('counts a step without usage as its calls only (a step with no `calls` is one call)', () => {
    const total = totalUsage(
      [
        { persona: 'a', model: 'r/unknown' },
        { persona: 'a', model: 'r/unknown', calls: 2 },
      ],
      {},
    );
    expect(total).toEqual({ calls: 3, prompt_tokens: 0, completion_tokens: 0, ...NOTHING, cost_usd: 0, unpriced: [] });
  });

  it('is zero for no steps', () => {
    expect(totalUsage([], prices)).toEqual({ calls: 0, prompt_tokens: 0, completion_tokens: 0, ...NOTHING, cost_usd: 0, unpriced: [] });
  });
});

describe('usageByPersona', () => {
  it('gives one row per persona in the order asked, including personas that made no call', () => {
    const steps = [
      call('beta', 'openai/gpt-4o-mini', 100, 50),
      call('alpha', 'openai/gpt-4o-mini', 10, 5),
      call('beta', 'openai/gpt-4o-mini', 1, 1),
    ];
    const rows = usageByPersona(steps, ['alpha', 'beta', 'gamma'], prices);
    expect(rows.map((r) => r.persona)).toEqual(['alpha', 'beta', 'gamma']);
    expect(rows[0]?.totals).toMatchObject({ calls: 1, prompt_tokens: 10, completion_tokens: 5 });
    expect(rows[1]?.totals).toMatchObject({ calls: 2, prompt_tokens: 101, completion_tokens: 51 });
    expect(rows[2]?.totals).toMatchObject({ calls: 0, prompt_tokens: 0, cost_usd: 0 });
  });

  it('leaves a persona without cost only when its own model is unpriced', () => {
    const rows = usageByPersona([call('alpha', 'openai/gpt-4o-mini', 10, 5), call('beta', 'r/mystery', 10, 5)], ['alpha', 'beta'], prices);
    expect(rows[0]?.totals.cost_usd).toBeCloseTo((10 * 0.15 + 5 * 0.6) / 1_000_000, 12);
    expect(rows[1]?.totals.cost_usd).toBeUndefined();
  });
});

describe('where the tokens went', () => {
  const briefing = '=== TASK BRIEFING ===\n\nTASK: Choose the cache for billing.\n\nNo input artifacts were provided.';
  const messages = [
    {
      role: 'system' as const,
      content: `${'You are Auditor. '.repeat(20)}\n\n${MEMORY_HEADER}\n${'- asked: an earlier task | decided: proceed\n'.repeat(5)}`,
    },
    {
      role: 'user' as const,
      content: `${briefing}\n\n[strategist, round 1]\nRedis fits the billing cache.\n\nRound 1 of 2: your analysis.`,
    },
    { role: 'assistant' as const, content: 'My analysis: Redis, with a fallback.' },
    { role: 'user' as const, content: '[strategist, round 2]\nAgreed.\n\nRound 2 of 2.' },
  ];

  it('shares the prompt tokens out among instructions, memory, task and deliberation, adding up to the count', () => {
    for (const tokens of [0, 1, 7, 613, 10_000]) {
      const split = splitPrompt(messages, tokens, briefing);
      expect(Object.values(split).reduce((a, b) => a + b, 0)).toBe(tokens);
    }
    const split = splitPrompt(messages, 1000, briefing);
    const chars = messages.reduce((n, m) => n + m.content.length, 0);
    const memory = messages[0]!.content.length - messages[0]!.content.indexOf(MEMORY_HEADER);
    expect(split.memory).toBeCloseTo((1000 * memory) / chars, -0.5);
    expect(split.task).toBeCloseTo((1000 * briefing.length) / chars, -0.5);
    expect(split.instructions + split.memory).toBeCloseTo((1000 * messages[0]!.content.length) / chars, -0.5);
    // The others' replies in the briefing's message are deliberation, not the task.
    expect(split.deliberation).toBeGreaterThan(split.task);
  });

  it('without a memory block there is no memory; without the briefing the first user message is the task', () => {
    const bare = [
      { role: 'system' as const, content: 'Classify the task.' },
      { role: 'user' as const, content: 'Task to classify: choose a cache.' },
    ];
    expect(splitPrompt(bare, 100)).toEqual({ instructions: 35, memory: 0, task: 65, deliberation: 0 });
  });

  it('sums the cached tokens and the split, and prices cached prompt tokens at the cached price (else the prompt price)', () => {
    const split = { instructions: 400, memory: 300, task: 100, deliberation: 200 };
    const cachedCall = {
      persona: 'a',
      model: 'r/cheap-cache',
      usage: { prompt_tokens: 1000, completion_tokens: 0, cached_tokens: 800, prompt_split: split },
    };
    const cheap = { 'cheap-cache': { prompt_per_mtok: 1, completion_per_mtok: 2, cached_prompt_per_mtok: 0.1 } };
    const total = totalUsage([cachedCall, cachedCall, call('b', 'r/cheap-cache', 500, 1000)], cheap);
    expect(total).toMatchObject({
      prompt_tokens: 2500,
      cached_tokens: 1600,
      prompt_split: { instructions: 800, memory: 600, task: 200, deliberation: 400 },
    });
    // 2 × (200 at 1 + 800 at 0.1) + 500 at 1 + 1000 at 2, per million.
    expect(total.cost_usd).toBeCloseTo((2 * (200 + 80) + 500 + 2000) / 1_000_000, 12);
    expect(totalUsage([cachedCall], { 'cheap-cache': { prompt_per_mtok: 1, completion_per_mtok: 2 } }).cost_usd).toBeCloseTo(
      1000 / 1_000_000,
      12,
    );
  });
});
