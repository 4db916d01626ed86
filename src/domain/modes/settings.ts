import { z } from 'zod';
/** How the council deliberates. */
export const MODES = ['round_robin', 'parallel', 'sequential_refinement'] as const;
export const Mode = z.enum(MODES);
export type Mode = z.infer<typeof Mode>;

/** How assessments are composed in `parallel` and `sequential_refinement` (seed 001's COMPOSE). */
export const COMPOSITIONS = ['average', 'weighted_average', 'consensus_threshold', 'bayesian_fusion'] as const;
export const Composition = z.enum(COMPOSITIONS);
export type Composition = z.infer<typeof Composition>;

/** What `weighted_average` weighs by: each persona's own confidence, or its focus domains' relevance to the task. */
export const WEIGHTINGS = ['confidence', 'domain'] as const;
export const Weighting = z.enum(WEIGHTINGS);
export type Weighting = z.infer<typeof Weighting>;

export const REVIEWS = ['none', 'anonymous'] as const;
export const Review = z.enum(REVIEWS);
export type Review = z.infer<typeof Review>;

export const ModeName = z.enum(MODES, {
  error: `must be one of ${MODES.map((m) => `"${m}"`).join(', ')} (the "supervisor" mode is not available in this version)`,
});

/** The mode settings a command or the workspace config may give (every one optional here). */
export const ModeOptions = {
  mode: ModeName.optional().describe('How the council deliberates: `round_robin` (rounds of turns, then verdicts), `parallel` (independent assessments at once, composed and arbitrated) or `sequential_refinement` (the same assessments in order, each persona seeing the earlier ones).'),
  composition: Composition.optional().describe('parallel modes: how the assessments are composed: `average`, `weighted_average`, `consensus_threshold` (vectors whose spread exceeds the threshold are flagged instead of averaged) or `bayesian_fusion`.'),
  weighting: Weighting.optional().describe('`weighted_average`: weigh by each persona\'s `confidence` or by the `domain` relevance of its focus_domains to the task.'),
  consensus_threshold: z.number().min(0).max(1).optional().describe('`consensus_threshold`: the largest spread (max − min score) a vector may have and still be averaged.'),
  review: Review.optional().describe('parallel modes: `anonymous` makes each persona rank the others\' assessments under neutral labels; the standing is shown and used as arbitration weights.'),
  concurrency: z.number().int().min(1).max(16).optional().describe('parallel modes: model calls in flight at once.'),
  call_timeout_ms: z.number().int().min(100).max(3_600_000).optional().describe('parallel modes: the time limit of one call; a call past it fails as a timeout (the others are kept).'),
};

/** The settings a run fixes when it starts (`plan.settings`), with defaults applied. */
export interface ModeSettings {
  readonly composition: Composition;
  readonly weighting: Weighting;
  readonly consensusThreshold: number;
  readonly review: Review;
  readonly concurrency: number;
  readonly callTimeoutMs: number;
}

export const MODE_DEFAULTS: ModeSettings = {
  composition: 'weighted_average',
  weighting: 'confidence',
  consensusThreshold: 0.25,
  review: 'none',
  concurrency: 4,
  callTimeoutMs: 120_000,
};

/** Reads `plan.settings` (fixed at the start; older plans have none): defaults for what is missing. */
export function readModeSettings(settings: Readonly<Record<string, unknown>>): ModeSettings {
  const pick = <T>(schema: z.ZodType<T>, value: unknown, fallback: T): T => {
    const r = schema.safeParse(value);
    return r.success && r.data !== undefined ? r.data : fallback;
  };
  return {
    composition: pick(Composition, settings.composition, MODE_DEFAULTS.composition),
    weighting: pick(Weighting, settings.weighting, MODE_DEFAULTS.weighting),
    consensusThreshold: pick(z.number().min(0).max(1), settings.consensus_threshold, MODE_DEFAULTS.consensusThreshold),
    review: pick(Review, settings.review, MODE_DEFAULTS.review),
    concurrency: pick(z.number().int().min(1).max(16), settings.concurrency, MODE_DEFAULTS.concurrency),
    callTimeoutMs: pick(z.number().int().min(100), settings.call_timeout_ms, MODE_DEFAULTS.callTimeoutMs),
  };
}

/** The workspace config's mode settings: the same keys, with their defaults shown in the reference. */
export const WorkspaceModeOptions = {
  mode: Mode.default('round_robin').describe(ModeOptions.mode.description ?? ''),
  composition: Composition.default(MODE_DEFAULTS.composition).describe(ModeOptions.composition.description ?? ''),
  weighting: Weighting.default(MODE_DEFAULTS.weighting).describe(ModeOptions.weighting.description ?? ''),
  consensus_threshold: z.number().min(0).max(1).default(MODE_DEFAULTS.consensusThreshold).describe(ModeOptions.consensus_threshold.description ?? ''),
  review: Review.default(MODE_DEFAULTS.review).describe(ModeOptions.review.description ?? ''),
  concurrency: z.number().int().min(1).max(16).default(MODE_DEFAULTS.concurrency).describe(ModeOptions.concurrency.description ?? ''),
  call_timeout_ms: z.number().int().min(100).max(3_600_000).default(MODE_DEFAULTS.callTimeoutMs).describe(ModeOptions.call_timeout_ms.description ?? ''),
};
