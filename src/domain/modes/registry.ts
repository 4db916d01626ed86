import type { RunPlan } from '../run-state.js';
import { adaptiveMode } from './adaptive.js';
import { hierarchicalMode } from './hierarchical.js';
import type { DeliberationMode } from './mode.js';
import { parallelMode, sequentialRefinementMode } from './parallel.js';
import { planMode } from './plan.js';
import { roundRobinMode } from './round-robin.js';
import { supervisorMode } from './supervisor.js';
import { workItemsMode } from './work-items.js';

const MODES: Record<RunPlan['mode'], DeliberationMode> = {
  round_robin: roundRobinMode,
  parallel: parallelMode,
  sequential_refinement: sequentialRefinementMode,
  supervisor: supervisorMode,
  work_items: workItemsMode,
  adaptive: adaptiveMode,
  hierarchical: hierarchicalMode,
  plan: planMode,
};

/** The module of a deliberation mode. */
export function modeFor(name: RunPlan['mode']): DeliberationMode {
  return MODES[name];
}
