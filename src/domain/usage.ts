import type { Price, PromptSplit, UsageTotals } from './budget.js';
import type { ChatMessage } from './chat.js';
import { MEMORY_HEADER } from './memory/recall.js';

interface CallUsage {
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens?: number;
  prompt_split?: PromptSplit;
}

interface UsageLike {
  readonly persona: string;
  readonly model: string;
  readonly calls?: number;
  readonly usage?: CallUsage;
}

export const SPLIT_PARTS = ['instructions', 'memory', 'task', 'deliberation'] as const;
/** How the split's parts are named for people. */
export const SPLIT_LABELS: Readonly<Record<keyof PromptSplit, string>> = {
  instructions: 'instructions',
  memory: 'memory',
  task: 'task and inputs',
  deliberation: 'deliberation',
};

/**
 * Where a request's prompt tokens went, by where its text came from: the system message is the
 * instructions (the persona and the rules) up to its memory block, then the memory; the task
 * `briefing` (the task and its inputs) wherever a message carries it, or else the first user message,
 * is the task; everything else (the others' replies, the persona's own, the prompts) is the
 * deliberation. The endpoint counts the prompt as a whole, so its count is shared out in proportion
 * to the characters of each part (largest remainders: the parts add up to the count).
 */
export function splitPrompt(messages: readonly ChatMessage[], promptTokens: number, briefing = ''): PromptSplit {
  const chars = { instructions: 0, memory: 0, task: 0, deliberation: 0 };
  const briefed = briefing !== '' && messages.some((m) => m.role !== 'system' && m.content.includes(briefing));
  let first = true;
  for (const m of messages) {
    if (m.role === 'system') {
      const at = m.content.indexOf(MEMORY_HEADER);
      chars.instructions += at === -1 ? m.content.length : at;
      chars.memory += at === -1 ? 0 : m.content.length - at;
      continue;
    }
    const task = briefed ? (m.content.includes(briefing) ? briefing.length : 0) : first && m.role === 'user' ? m.content.length : 0;
    if (m.role === 'user') first = false;
    chars.task += task;
    chars.deliberation += m.content.length - task;
  }
  const all = SPLIT_PARTS.reduce((sum, k) => sum + chars[k], 0);
  if (all === 0) return { instructions: promptTokens, memory: 0, task: 0, deliberation: 0 };
  const shares = SPLIT_PARTS.map((k) => (chars[k] * promptTokens) / all);
  const split = shares.map(Math.floor);
  const left = promptTokens - split.reduce((a, b) => a + b, 0);
  const byRemainder = shares.map((share, i) => ({ i, rest: share - Math.floor(share) })).sort((a, b) => b.rest - a.rest);
  for (const { i } of byRemainder.slice(0, left)) split[i] = (split[i] ?? 0) + 1;
  const [instructions = 0, memory = 0, task = 0, deliberation = 0] = split;
  return { instructions, memory, task, deliberation };
}

/** Two calls' usage as one (a step asked again; the parts that both know of are added). */
export function addUsage(a: CallUsage | undefined, b: CallUsage | undefined): CallUsage | undefined {
  if (!a || !b) return a ?? b;
  const cached =
    a.cached_tokens !== undefined || b.cached_tokens !== undefined ? (a.cached_tokens ?? 0) + (b.cached_tokens ?? 0) : undefined;
  const split = a.prompt_split && b.prompt_split ? addSplit(a.prompt_split, b.prompt_split) : undefined;
  return {
    prompt_tokens: a.prompt_tokens + b.prompt_tokens,
    completion_tokens: a.completion_tokens + b.completion_tokens,
    ...(cached !== undefined ? { cached_tokens: cached } : {}),
    ...(split ? { prompt_split: split } : {}),
  };
}

function addSplit(a: PromptSplit, b: PromptSplit): PromptSplit {
  return {
    instructions: a.instructions + b.instructions,
    memory: a.memory + b.memory,
    task: a.task + b.task,
    deliberation: a.deliberation + b.deliberation,
  };
}

/**
 * What a step's calls since an earlier record of it used (a question asked again once the budget had
 * room): its calls and tokens less the earlier ones, so every call is on the record once.
 */
export function callsSince<T extends { readonly calls: number; readonly usage?: CallUsage | undefined }>(step: T, earlier: T): T {
  const a = step.usage;
  const b = earlier.usage;
  const usage =
    a && b ? { prompt_tokens: a.prompt_tokens - b.prompt_tokens, completion_tokens: a.completion_tokens - b.completion_tokens } : a;
  return { ...step, calls: Math.max(1, step.calls - earlier.calls), ...(usage ? { usage } : {}) };
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

/** Sums calls, tokens and cost over steps; cost is undefined if any model has no price. Cached prompt tokens cost the cached price where a model has one. */
export function totalUsage(
  steps: readonly UsageLike[],
  prices: Readonly<Record<string, Price>>,
): UsageTotals & { cached_tokens: number; prompt_split: PromptSplit; unpriced: string[] } {
  let calls = 0;
  let prompt = 0;
  let completion = 0;
  let cached = 0;
  let split: PromptSplit = { instructions: 0, memory: 0, task: 0, deliberation: 0 };
  let cost = 0;
  const unpriced = new Set<string>();
  for (const s of steps) {
    calls += s.calls ?? 1;
    const u = s.usage;
    if (!u) continue;
    prompt += u.prompt_tokens;
    completion += u.completion_tokens;
    cached += u.cached_tokens ?? 0;
    if (u.prompt_split) split = addSplit(split, u.prompt_split);
    const price = priceFor(modelOf(s.model), prices);
    if (!price) unpriced.add(modelOf(s.model));
    else {
      const hit = Math.min(u.cached_tokens ?? 0, u.prompt_tokens);
      const hitPrice = price.cached_prompt_per_mtok ?? price.prompt_per_mtok;
      cost +=
        ((u.prompt_tokens - hit) * price.prompt_per_mtok + hit * hitPrice + u.completion_tokens * price.completion_per_mtok) / 1_000_000;
    }
  }
  return {
    calls,
    prompt_tokens: prompt,
    completion_tokens: completion,
    cached_tokens: cached,
    prompt_split: split,
    cost_usd: unpriced.size > 0 ? undefined : cost,
    unpriced: [...unpriced].sort(),
  };
}

/** The mediator's classification in usage tables: not a persona of the council. */
export const CLASSIFICATION_ENTRY = "(mediator's classification)";

/** The loop policy's plan (asked of the synthesizer at a conflict's third pause) in usage tables: the orchestrator's call, not a step. */
export const LOOP_PLAN_ENTRY = "(loop policy's plan)";

/**
 * A run's model calls as usage counts them: the council's steps, the mediator's classification when it
 * was asked, and the loop policy's plan when the run asked for it.
 */
export function runCalls(run: {
  readonly steps: readonly UsageLike[];
  readonly classification?: Omit<UsageLike, 'persona'> | undefined;
  readonly plan_call?: Omit<UsageLike, 'persona'> | undefined;
}): UsageLike[] {
  return [
    ...(run.classification ? [{ persona: CLASSIFICATION_ENTRY, ...run.classification }] : []),
    ...run.steps,
    ...(run.plan_call ? [{ persona: LOOP_PLAN_ENTRY, ...run.plan_call }] : []),
  ];
}

/** Usage per persona, in the given order. */
export function usageByPersona(
  steps: readonly UsageLike[],
  personas: readonly string[],
  prices: Readonly<Record<string, Price>>,
): { persona: string; totals: ReturnType<typeof totalUsage> }[] {
  return personas.map((persona) => ({
    persona,
    totals: totalUsage(
      steps.filter((s) => s.persona === persona),
      prices,
    ),
  }));
}

/**
 * Where a run's prompt tokens went, for people: `instructions 1200 · memory 640 · task and inputs 310 ·
 * deliberation 4100 · cached 1024`; the tokens of calls that did not record it (a run checkpointed
 * before) are `not split`.
 */
export function promptBreakdown(u: {
  readonly prompt_tokens: number;
  readonly prompt_split: PromptSplit;
  readonly cached_tokens: number;
}): string {
  const unsplit = u.prompt_tokens - SPLIT_PARTS.reduce((sum, k) => sum + u.prompt_split[k], 0);
  const parts = SPLIT_PARTS.map((k) => `${SPLIT_LABELS[k]} ${u.prompt_split[k]}`);
  return [...parts, ...(unsplit > 0 ? [`not split ${unsplit}`] : []), `cached ${u.cached_tokens}`].join(' · ');
}
