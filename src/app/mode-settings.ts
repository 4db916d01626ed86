import { readModeSettings, type ModeSettings } from '../domain/modes/settings.js';
import type { RunPlan } from '../domain/run-state.js';

/** The engine's view of a plan's mode settings. */
export function modeSettings(plan: RunPlan): ModeSettings {
  return readModeSettings(plan.settings);
}
