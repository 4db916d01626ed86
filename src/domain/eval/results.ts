import { z } from 'zod';
import { MODES } from '../modes/settings.js';

/** The council modes an eval compares (work items are a command's shape, not a way to answer one question). */
export const EVAL_MODES = ['round_robin', 'parallel', 'supervisor'] as const satisfies readonly (typeof MODES)[number][];
/** A mode an eval may run (`--modes`): any deliberation mode. */
export const EvalMode = z.enum(MODES);
export type EvalMode = z.infer<typeof EvalMode>;

const Cost = {
  calls: z.number().int().min(0),
  prompt_tokens: z.number().int().min(0),
  completion_tokens: z.number().int().min(0),
  /** USD; absent when a model of the call has no price in `prices`. */
  cost_usd: z.number().min(0).optional(),
};

/** One single call (sample 0 is the single-call arm; samples 0..n-1 vote in a self-consistency arm). */
export const SampleLine = z.strictObject({
  kind: z.literal('sample'),
  item: z.string(),
  index: z.number().int().min(0),
  answer: z.string().optional(),
  /** Why the reply gave no answer (unreadable, or the call failed). */
  problem: z.string().max(500).optional(),
  ...Cost,
});
export type SampleLine = z.infer<typeof SampleLine>;

/** One council run on one item: its answer from the synthesis, how the run ended, what it cost. */
export const CouncilLine = z.strictObject({
  kind: z.literal('council'),
  item: z.string(),
  mode: EvalMode,
  run_id: z.string(),
  status: z.string(),
  reason_code: z.string(),
  answer: z.string().optional(),
  problem: z.string().max(500).optional(),
  ...Cost,
});
export type CouncilLine = z.infer<typeof CouncilLine>;

/** One line of `results.jsonl`. */
export const ResultLine = z.discriminatedUnion('kind', [SampleLine, CouncilLine]);
export type ResultLine = z.infer<typeof ResultLine>;

/** What is known about one item so far: its samples in order, and each mode's council run. */
export interface ItemResults {
  readonly samples: SampleLine[];
  readonly council: Map<EvalMode, CouncilLine>;
}

/**
 * The results file folded: per item, the samples (by index; a later copy of an index wins, as a
 * resumed eval may have redone one) and the council runs. Unreadable lines are returned, never dropped silently.
 */
export function foldResults(lines: readonly string[]): { items: Map<string, ItemResults>; problems: string[] } {
  const items = new Map<string, ItemResults>();
  const problems: string[] = [];
  lines.forEach((text, i) => {
    if (text.trim() === '') return;
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      problems.push(`line ${i + 1}: not valid JSON (a write cut short?); that result will be made again`);
      return;
    }
    const read = ResultLine.safeParse(json);
    if (!read.success) {
      problems.push(`line ${i + 1}: not a result line; it will be made again`);
      return;
    }
    const line = read.data;
    let item = items.get(line.item);
    if (!item) items.set(line.item, (item = { samples: [], council: new Map() }));
    if (line.kind === 'sample') item.samples[line.index] = line;
    else item.council.set(line.mode, line);
  });
  return { items, problems };
}

/** The samples of an item, index 0 upwards, up to the first one missing. */
export function contiguousSamples(item: ItemResults | undefined): SampleLine[] {
  const out: SampleLine[] = [];
  for (const s of item?.samples ?? []) {
    if (!s) break;
    out.push(s);
  }
  return out;
}
