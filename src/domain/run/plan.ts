import type { CommandFile } from '../command-file.js';
import { planMode, readModeSettings, weightingKind } from '../modes/settings.js';
import type { RunPlan } from '../run-state.js';
import type { WorkspaceConfig } from '../workspace-config.js';

/** The mode settings a run fixes when it starts (the command's, else the workspace's), so a resumed run does the same. */
const PLAN_SETTINGS = [
  'composition',
  'weighting',
  'consensus_threshold',
  'consensus_measure',
  'uncertainty_threshold',
  'relevance_floor',
  'specialists',
  'groups',
  'review',
  'concurrency',
  'call_timeout_ms',
  'max_iterations',
  'parallel_items',
  'item_memory',
  'supervisor',
  'planner',
  'max_replans',
  'reviewer',
] as const;

/** A new run's plan, from the command and the workspace's settings (a resumed run keeps the one its checkpoint holds). */
export function composePlan(options: {
  command: CommandFile;
  deliberation: WorkspaceConfig['deliberation'];
  personaIds: string[];
  outputPath: string;
  /** The council's client's label, each persona's route, and whether every route is the offline rehearsal. */
  models: { readonly llm: { readonly label: string }; readonly routes: Record<string, string>; readonly rehearsal: boolean };
}): RunPlan {
  const { command, deliberation, personaIds, models } = options;
  const mode = planMode(command, deliberation.mode);
  const given: Readonly<Record<string, unknown>> = command.config;
  const defaults: Readonly<Record<string, unknown>> = deliberation;
  const settings = Object.fromEntries(
    PLAN_SETTINGS.flatMap((key) => {
      const value = given[key] ?? defaults[key];
      return value === undefined ? [] : [[key, value]];
    }),
  );
  return {
    mode,
    personas: personaIds,
    // In the supervisor loop a "round" is an iteration: progress shows `iteration n/max`.
    rounds: mode === 'supervisor' ? readModeSettings(settings).maxIterations : (command.config.max_rounds ?? deliberation.max_rounds),
    synthesizer: command.config.synthesizer ?? personaIds[0] ?? '',
    arbitration: command.config.arbitration ?? deliberation.arbitration,
    output_path: options.outputPath,
    model: models.llm.label,
    routes: models.routes,
    rehearsal: models.rehearsal,
    settings,
  };
}

/**
 * `by_priors` and `bayesian_fusion`: each persona's reliability — its declared prior and the outcomes
 * a person confirmed — as it stood at the start is fixed in the plan, so a resumed run (or its
 * draft) weighs as it began, whatever was confirmed meanwhile.
 */
export function withPriors(plan: RunPlan, reliabilityOf: (persona: string) => number): RunPlan {
  const { weighting, composition } = readModeSettings(plan.settings);
  if (weightingKind(weighting) !== 'priors' && composition !== 'bayesian_fusion') return plan;
  return { ...plan, settings: { ...plan.settings, priors: Object.fromEntries(plan.personas.map((id) => [id, reliabilityOf(id)])) } };
}
