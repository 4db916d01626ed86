import type { CommandFile } from '../command-file.js';
import type { RunPlan, Step } from '../run-state.js';
import { planProposal } from './plan.js';
import { workItemsProposal } from './work-items.js';

/**
 * A concluded run's final proposal, from its command, plan and finished steps, as its mode concluded
 * it: the work items' output (one item's own, or their merge) when it had them or planned them, else
 * the synthesizer's reply. Undefined when there is none (the run ended before its synthesis).
 */
export function finalProposal(run: {
  readonly command: Pick<CommandFile, 'work_items' | 'task_description'>;
  readonly plan?: Pick<RunPlan, 'mode' | 'personas' | 'settings'> | undefined;
  readonly steps: readonly Step[];
}): string | undefined {
  const { command, plan, steps } = run;
  if (command.work_items && command.work_items.length > 0) return workItemsProposal(command.work_items, steps);
  if (plan?.mode === 'plan') return planProposal(plan, command.task_description, steps);
  return steps.find((s) => s.kind === 'synthesis')?.reply;
}
