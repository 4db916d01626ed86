import type { Price, UsageTotals } from './budget.js';

interface UsageLike {
  readonly persona: string;
  readonly model: string;
  readonly calls?: number;
  readonly usage?: { prompt_tokens: number; completion_tokens: number };
}

/** The model name prices are looked up by: `route/model` → `model`. */
export function modelOf(label: string): string {
  const slash = label.indexOf('/');
  return slash === -1 ? label : label.slice(slash + 1);
}

/** Models the offline rehearsal uses cost nothing. */
function priceFor(model: string, prices: Readonly<Record<string, Price>>): Price | undefined {
  if (model.startsWith('offline-')) return { prompt_per_mtok: 0, completion_per_mtok: 0 };
  return prices[model];
}

/** Sums calls, tokens and cost over steps; cost is undefined if any model has no price. */
export function totalUsage(steps: readonly UsageLike[], prices: Readonly<Record<string, Price>>): UsageTotals & { unpriced: string[] } {
  let calls = 0;
  let prompt = 0;
  let completion = 0;
  let cost = 0;
  const unpriced = new Set<string>();
  for (const s of steps) {
    calls += s.calls ?? 1;
    const u = s.usage;
    if (!u) continue;
    prompt += u.prompt_tokens;
    completion += u.completion_tokens;
    const price = priceFor(modelOf(s.model), prices);
    if (price) cost += (u.prompt_tokens * price.prompt_per_mtok + u.completion_tokens * price.completion_per_mtok) / 1_000_000;
    else unpriced.add(modelOf(s.model));
  }
  return {
    calls,
    prompt_tokens: prompt,
    completion_tokens: completion,
    cost_usd: unpriced.size > 0 ? undefined : cost,
    unpriced: [...unpriced].sort(),
  };
}

/** The mediator's classification in usage tables: not a persona of the council. */
export const CLASSIFICATION_ENTRY = "(mediator's classification)";

/** A run's model calls as usage counts them: the council's steps, and the mediator's classification when it was asked. */
export function runCalls(run: {
  readonly steps: readonly UsageLike[];
  readonly classification?: Omit<UsageLike, 'persona'> | undefined;
}): UsageLike[] {
  return run.classification ? [{ persona: CLASSIFICATION_ENTRY, ...run.classification }, ...run.steps] : [...run.steps];
}

/** Usage per persona, in the given order. */
export function usageByPersona(
  steps: readonly UsageLike[],
  personas: readonly string[],
  prices: Readonly<Record<string, Price>>,
): { persona: string; totals: UsageTotals }[] {
  return personas.map((persona) => ({
    persona,
    totals: totalUsage(
      steps.filter((s) => s.persona === persona),
      prices,
    ),
  }));
}
