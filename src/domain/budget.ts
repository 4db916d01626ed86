import { z } from 'zod';
import { round } from './assessment.js';

/** Per-run limits (`config.budget` in a command, or the workspace default). Crossing one pauses the run. */
export const Budget = z.strictObject({
  max_calls: z.number().int().min(1).optional().describe('Model calls per run.'),
  max_prompt_tokens: z.number().int().min(1).optional().describe('Prompt tokens per run.'),
  max_completion_tokens: z.number().int().min(1).optional().describe('Completion tokens per run.'),
  max_wall_seconds: z.number().min(1).optional().describe('Seconds from the start of a run.'),
  max_cost_usd: z.number().positive().optional().describe('USD per run, priced with `prices` (a model without a price pauses the run).'),
});
export type Budget = z.infer<typeof Budget>;

/** USD per million tokens for one model. */
export const Price = z.strictObject({
  prompt_per_mtok: z.number().min(0).describe('USD per million prompt tokens.'),
  completion_per_mtok: z.number().min(0).describe('USD per million completion tokens.'),
  cached_prompt_per_mtok: z
    .number()
    .min(0)
    .optional()
    .describe("USD per million prompt tokens served from the provider's prompt cache (default: the prompt price)."),
});
export type Price = z.infer<typeof Price>;

/** Where a prompt's tokens went: the persona's instructions, its memory of earlier tasks, the task and its inputs, the deliberation. */
export interface PromptSplit {
  readonly instructions: number;
  readonly memory: number;
  readonly task: number;
  readonly deliberation: number;
}

export interface UsageTotals {
  readonly calls: number;
  readonly prompt_tokens: number;
  readonly completion_tokens: number;
  /** Of the prompt tokens, those the providers' prompt caches served. */
  readonly cached_tokens?: number;
  /** Where the prompt tokens went (calls that did not record it, such as those of older runs, are left out). */
  readonly prompt_split?: PromptSplit;
  /** Undefined when a call's model has no price. */
  readonly cost_usd: number | undefined;
}

export interface BudgetExceeded {
  readonly limit: keyof Budget | 'price_unknown';
  readonly used: number;
  readonly allowed: number;
  /** One line for people. */
  readonly message: string;
}

/**
 * Checks a budget. `before` a call: may the next call be made? `after` a call: did that call cross a
 * token or cost limit? A cost limit without a price for a model in use fails closed.
 */
export function checkBudget(options: {
  budget: Budget;
  usage: UsageTotals;
  elapsedSeconds: number;
  phase: 'before' | 'after';
  unpricedModels: readonly string[];
}): BudgetExceeded | null {
  const { budget: b, usage: u, phase } = options;
  // Before a call the limit is reached (none left: 4 of 4 is not "exceeded"); after one, it was gone past.
  const over = (limit: keyof Budget, used: number, allowed: number, what: string): BudgetExceeded => ({
    limit,
    used,
    allowed,
    message:
      phase === 'before'
        ? `${what}: ${round(used, 4)} used of ${round(allowed, 4)}, none left (config.budget.${limit})`
        : `${what}: ${round(used, 4)}, over the limit of ${round(allowed, 4)} (config.budget.${limit})`,
  });
  if (b.max_cost_usd !== undefined && options.unpricedModels.length > 0) {
    return {
      limit: 'price_unknown',
      used: 0,
      allowed: b.max_cost_usd,
      message: `a cost budget is set but there is no price for ${options.unpricedModels.join(', ')} (add it to "prices" in maestro.config.json)`,
    };
  }
  if (phase === 'before') {
    if (b.max_calls !== undefined && u.calls >= b.max_calls) return over('max_calls', u.calls, b.max_calls, 'model calls');
    if (b.max_wall_seconds !== undefined && options.elapsedSeconds >= b.max_wall_seconds) {
      return over('max_wall_seconds', options.elapsedSeconds, b.max_wall_seconds, 'wall-clock seconds');
    }
  }
  if (b.max_prompt_tokens !== undefined && u.prompt_tokens > b.max_prompt_tokens)
    return over('max_prompt_tokens', u.prompt_tokens, b.max_prompt_tokens, 'prompt tokens');
  if (b.max_completion_tokens !== undefined && u.completion_tokens > b.max_completion_tokens) {
    return over('max_completion_tokens', u.completion_tokens, b.max_completion_tokens, 'completion tokens');
  }
  if (b.max_cost_usd !== undefined && (u.cost_usd ?? 0) > b.max_cost_usd)
    return over('max_cost_usd', u.cost_usd ?? 0, b.max_cost_usd, 'cost in USD');
  return null;
}
