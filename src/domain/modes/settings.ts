import { z } from 'zod';
/** How the council deliberates (what `config.mode` may say). */
export const MODES = ['round_robin', 'parallel', 'sequential_refinement', 'supervisor', 'adaptive', 'hierarchical', 'plan'] as const;
/** The modes that collect independent assessments and compose them (seed 001's Sentinel). */
export const ASSESSMENT_MODES: ReadonlySet<string> = new Set(['parallel', 'sequential_refinement', 'adaptive', 'hierarchical']);
/** What a run's plan may say: the modes, and `work_items` — chosen by a command that carries `work_items`, never by `config.mode`. */
export const PLAN_MODES = [...MODES, 'work_items'] as const;
export const Mode = z.enum(PLAN_MODES);
export type Mode = z.infer<typeof Mode>;

/** How assessments are composed in `parallel` and `sequential_refinement` (seed 001's COMPOSE). */
export const COMPOSITIONS = ['average', 'weighted_average', 'consensus_threshold', 'bayesian_fusion'] as const;
export const Composition = z.enum(COMPOSITIONS);
export type Composition = z.infer<typeof Composition>;

/**
 * What `weighted_average` weighs by (seed 001): each persona's own confidence, its declared field's
 * relevance to the task, its reliability (`by_priors`: declared prior and confirmed outcomes) or its tier (`by_tier`). The seed's
 * `by_confidence` and `by_domain` are the same as `confidence` and `domain`, kept for older commands.
 */
export const WEIGHTINGS = ['confidence', 'domain', 'by_priors', 'by_tier', 'by_confidence', 'by_domain'] as const;
export const Weighting = z.enum(WEIGHTINGS, { error: `must be one of ${WEIGHTINGS.map((w) => `"${w}"`).join(', ')}` });
export type Weighting = z.infer<typeof Weighting>;
/** A weighting as one of its four kinds (the seed's `by_` names and ours are the same thing). */
export function weightingKind(w: Weighting): 'confidence' | 'domain' | 'priors' | 'tier' {
  return (
    {
      confidence: 'confidence',
      by_confidence: 'confidence',
      domain: 'domain',
      by_domain: 'domain',
      by_priors: 'priors',
      by_tier: 'tier',
    } as const
  )[w];
}

/** How `consensus_threshold` measures disagreement on a vector: the seed's standard deviation, or max − min. */
export const CONSENSUS_MEASURES = ['spread', 'std_dev'] as const;
export const ConsensusMeasure = z.enum(CONSENSUS_MEASURES, {
  error: `must be one of ${CONSENSUS_MEASURES.map((m) => `"${m}"`).join(', ')}`,
});
export type ConsensusMeasure = z.infer<typeof ConsensusMeasure>;

const personaId = z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, 'must be a persona id (lowercase letters, digits, - and _)');
/** `hierarchical`: named groups of persona ids (each persona in one group at most). */
export const PersonaGroups = z
  .record(
    z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, 'must be a group name (letters, digits, ., - and _)'),
    z.array(personaId).min(1, 'a group needs at least one persona'),
  )
  .superRefine((groups, ctx) => {
    const seen = new Map<string, string>();
    for (const [name, ids] of Object.entries(groups))
      for (const id of ids) {
        const other = seen.get(id);
        const message = `persona "${id}" is already in group "${other}"`;
        if (other !== undefined) ctx.addIssue({ code: 'custom', path: [name], message });
        else seen.set(id, name);
      }
    if (Object.keys(groups).length === 0) ctx.addIssue({ code: 'custom', message: 'must name at least one group' });
  });
export type PersonaGroups = z.infer<typeof PersonaGroups>;

export const REVIEWS = ['none', 'anonymous'] as const;
export const Review = z.enum(REVIEWS);
export type Review = z.infer<typeof Review>;

export const ModeName = z.enum(MODES, {
  error: `must be one of ${MODES.map((m) => `"${m}"`).join(', ')} (a command with \`work_items\` runs them as its own mode and leaves config.mode out)`,
});

/** The mode settings a command or the workspace config may give (every one optional here). */
export const ModeOptions = {
  mode: ModeName.optional().describe(
    'How the council deliberates: `round_robin` (rounds of turns, then verdicts), `parallel` (independent assessments at once, composed and arbitrated), `sequential_refinement` (the same assessments in order, each persona seeing the earlier ones), `supervisor` (a supervisor persona delegates one specialist turn at a time, strict JSON, until it stops or a guardrail trips), `adaptive` (broad personas assess first; specialists are asked only when the composed uncertainty is above `uncertainty_threshold`), `hierarchical` (groups assess in parallel, each group is composed and arbitrated, then a meta-arbiter arbitrates between the groups) or `plan` (a planner persona writes a strict JSON plan of work items, run as work items, with a bounded deterministic replan of an item that fails). A command with `work_items` runs them instead.',
  ),
  composition: Composition.optional().describe(
    'parallel modes: how the assessments are composed: `average`, `weighted_average`, `consensus_threshold` (vectors whose spread exceeds the threshold are flagged instead of averaged) or `bayesian_fusion`.',
  ),
  weighting: Weighting.optional().describe(
    "`weighted_average`: weigh by each persona's `confidence`, by the `domain` relevance of its focus_domains and description to the task (BM25), `by_priors` (its reliability: the `priors` its front matter declares, updated by the outcomes a person confirmed with `maestro outcome`) or `by_tier` (double weight on the vectors of the tier its front matter declares).",
  ),
  consensus_measure: ConsensusMeasure.optional().describe(
    '`consensus_threshold`: `spread` (max − min of the scores, the default: one dissenter is caught whatever the council size) or `std_dev` (the seed: the standard deviation of the scores).',
  ),
  consensus_threshold: z
    .number()
    .min(0)
    .max(1)
    .optional()
    .describe(
      '`consensus_threshold`: the disagreement (by `consensus_measure`) at which a vector is flagged for arbitration instead of averaged.',
    ),
  uncertainty_threshold: z
    .number()
    .min(0)
    .max(1)
    .optional()
    .describe("`adaptive`: specialists are asked when the composed `uncertainty` vector is above this (default 0.7, the seed's)."),
  relevance_floor: z
    .number()
    .min(0)
    .max(1)
    .optional()
    .describe(
      "`adaptive`: personas whose relevance to the task is below this are not asked at all, to save calls (seed 001's cost note); the most relevant persona always is, and a council its relevance cannot tell apart skips nobody. Default 0: everyone is asked.",
    ),
  specialists: z
    .array(personaId)
    .min(1, 'must name at least one persona')
    .max(12)
    .refine((ids) => new Set(ids).size === ids.length, 'must not name a persona twice')
    .optional()
    .describe(
      '`adaptive`: the personas held back until the broad assessment is too uncertain; default: the half of the council most relevant to the task.',
    ),
  groups: PersonaGroups.optional().describe(
    "`hierarchical`: group name → persona ids; each group is composed and arbitrated on its own. Default: by the tier in each persona's front matter.",
  ),
  review: Review.optional().describe(
    "parallel modes: `anonymous` makes each persona rank the others' assessments under neutral labels; the standing is shown and used as arbitration weights.",
  ),
  concurrency: z.number().int().min(1).max(16).optional().describe('parallel modes: model calls in flight at once.'),
  call_timeout_ms: z
    .number()
    .int()
    .min(100)
    .max(3_600_000)
    .optional()
    .describe(
      'parallel modes and `parallel_items`: the time limit of one call (one work item); a call past it fails as a timeout (the others are kept).',
    ),
  max_iterations: z
    .number()
    .int()
    .min(1)
    .max(20)
    .optional()
    .describe(
      '`supervisor`: the most specialist turns the supervisor may delegate (default 4); a delegation past it ends the loop as `guardrail_stop`.',
    ),
  max_replans: z
    .number()
    .int()
    .min(0)
    .max(3)
    .optional()
    .describe(
      '`plan`: how many times an item whose own verdict did not say proceed is given to the next council member (deterministic, no model call); default 1.',
    ),
  parallel_items: z
    .boolean()
    .optional()
    .describe(
      '`work_items`: run the items at once (at most `concurrency` in flight, each limited by `call_timeout_ms`) instead of one after another; the merge is in item order either way.',
    ),
  item_memory: z
    .boolean()
    .optional()
    .describe(
      "`work_items`: give each item's persona its memory of earlier tasks (default false: items run without it, so the same items merge to the same result on every run).",
    ),
};

/** The settings a run fixes when it starts (`plan.settings`), with defaults applied. */
export interface ModeSettings {
  readonly composition: Composition;
  readonly weighting: Weighting;
  readonly consensusThreshold: number;
  readonly consensusMeasure: ConsensusMeasure;
  /** `adaptive`: the composed uncertainty above which specialists are asked. */
  readonly uncertaintyThreshold: number;
  /** `adaptive`: personas less relevant than this are not asked (0 = all are). */
  readonly relevanceFloor: number;
  /** `adaptive`: the personas held back; absent = chosen by relevance. */
  readonly specialists?: readonly string[];
  /** `hierarchical`: the groups; absent = by tier. */
  readonly groups?: PersonaGroups;
  /** `by_priors`, `bayesian_fusion`: each persona's reliability as it stood when the run started (fixed in the plan). */
  readonly priors?: Readonly<Record<string, number>>;
  readonly review: Review;
  readonly concurrency: number;
  readonly callTimeoutMs: number;
  /** `supervisor`: delegations allowed before the loop ends as `guardrail_stop`. */
  readonly maxIterations: number;
  /** `work_items`: run the items at once. */
  readonly parallelItems: boolean;
  /** `work_items`: the items' personas get their memory of earlier tasks. */
  readonly itemMemory: boolean;
  /** `supervisor`: the persona that decides; absent = the first speaker. */
  readonly supervisor?: string;
  /** `plan`: the persona that writes the plan; absent = the first speaker. */
  readonly planner?: string;
  /** `plan`: replans of a failed item (deterministic). */
  readonly maxReplans: number;
  /** `supervisor` and `work_items`: the persona whose critique of the result joins arbitration as a gate. */
  readonly reviewer?: string;
}

export const MODE_DEFAULTS: ModeSettings = {
  composition: 'weighted_average',
  weighting: 'confidence',
  consensusThreshold: 0.25,
  consensusMeasure: 'spread',
  uncertaintyThreshold: 0.7,
  relevanceFloor: 0,
  review: 'none',
  concurrency: 4,
  callTimeoutMs: 120_000,
  maxIterations: 4,
  maxReplans: 1,
  parallelItems: false,
  itemMemory: false,
};

/**
 * The settings a plan fixed, read with the very bounds a command or the config is held to, so a
 * checkpoint cannot carry a value they would refuse (a `max_iterations` of 1000 would lift the
 * supervisor's guardrail): a value missing or out of range reads as its default, a name that is not
 * one as none.
 */
const PlanSettings = z.object({
  composition: Composition.catch(MODE_DEFAULTS.composition),
  weighting: Weighting.catch(MODE_DEFAULTS.weighting),
  consensus_threshold: ModeOptions.consensus_threshold.unwrap().catch(MODE_DEFAULTS.consensusThreshold),
  consensus_measure: ConsensusMeasure.catch(MODE_DEFAULTS.consensusMeasure),
  uncertainty_threshold: ModeOptions.uncertainty_threshold.unwrap().catch(MODE_DEFAULTS.uncertaintyThreshold),
  relevance_floor: ModeOptions.relevance_floor.unwrap().catch(MODE_DEFAULTS.relevanceFloor),
  review: Review.catch(MODE_DEFAULTS.review),
  concurrency: ModeOptions.concurrency.unwrap().catch(MODE_DEFAULTS.concurrency),
  call_timeout_ms: ModeOptions.call_timeout_ms.unwrap().catch(MODE_DEFAULTS.callTimeoutMs),
  max_iterations: ModeOptions.max_iterations.unwrap().catch(MODE_DEFAULTS.maxIterations),
  max_replans: ModeOptions.max_replans.unwrap().catch(MODE_DEFAULTS.maxReplans),
  parallel_items: ModeOptions.parallel_items.unwrap().catch(MODE_DEFAULTS.parallelItems),
  item_memory: ModeOptions.item_memory.unwrap().catch(MODE_DEFAULTS.itemMemory),
  specialists: ModeOptions.specialists.catch(undefined),
  groups: ModeOptions.groups.catch(undefined),
  priors: z.record(z.string(), z.number().min(0).max(1)).optional().catch(undefined),
  supervisor: z.string().optional().catch(undefined),
  planner: z.string().optional().catch(undefined),
  reviewer: z.string().optional().catch(undefined),
});

/**
 * The settings read from each plan's `settings` object: a plan fixes them at the start and they are
 * read at every step and, several times, at the run's end, so each object is read once (a read builds
 * an error for every key the plan left out).
 */
const readSettings = new WeakMap<object, ModeSettings>();

/** Reads `plan.settings` (fixed at the start; older plans have none): each key under its camelCase name in `ModeSettings`. */
export function readModeSettings(settings: Readonly<Record<string, unknown>>): ModeSettings {
  const known = readSettings.get(settings);
  if (known) return known;
  const read = Object.entries(PlanSettings.parse(settings)).filter(([, value]) => value !== undefined);
  const named = read.map(([key, value]) => [key.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase()), value]);
  const settled = Object.freeze(Object.fromEntries(named)) as unknown as ModeSettings;
  readSettings.set(settings, settled);
  return settled;
}

/** A mode option with its default, for the workspace config (whose reference shows the defaults). */
function withDefault<T extends z.ZodType>(option: z.ZodOptional<T>, value: z.util.NoUndefined<z.output<T>>) {
  return option
    .unwrap()
    .default(value)
    .describe(option.description ?? '');
}

/** The workspace config's mode settings: the same keys, with their defaults shown in the reference. */
export const WorkspaceModeOptions = {
  mode: withDefault(ModeOptions.mode, 'round_robin'),
  composition: withDefault(ModeOptions.composition, MODE_DEFAULTS.composition),
  weighting: withDefault(ModeOptions.weighting, MODE_DEFAULTS.weighting),
  consensus_threshold: withDefault(ModeOptions.consensus_threshold, MODE_DEFAULTS.consensusThreshold),
  consensus_measure: withDefault(ModeOptions.consensus_measure, MODE_DEFAULTS.consensusMeasure),
  uncertainty_threshold: withDefault(ModeOptions.uncertainty_threshold, MODE_DEFAULTS.uncertaintyThreshold),
  groups: ModeOptions.groups,
  review: withDefault(ModeOptions.review, MODE_DEFAULTS.review),
  concurrency: withDefault(ModeOptions.concurrency, MODE_DEFAULTS.concurrency),
  call_timeout_ms: withDefault(ModeOptions.call_timeout_ms, MODE_DEFAULTS.callTimeoutMs),
  max_iterations: withDefault(ModeOptions.max_iterations, MODE_DEFAULTS.maxIterations),
  parallel_items: withDefault(ModeOptions.parallel_items, MODE_DEFAULTS.parallelItems),
};

/** The mode a run plans: `work_items` when the command carries them, else the command's mode, the workspace's, or `round_robin`. */
export function planMode(
  command: { readonly work_items?: readonly unknown[]; readonly config: { readonly mode?: (typeof MODES)[number] } },
  workspaceMode: (typeof MODES)[number] | undefined,
): Mode {
  if (command.work_items && command.work_items.length > 0) return 'work_items';
  return command.config.mode ?? workspaceMode ?? 'round_robin';
}
