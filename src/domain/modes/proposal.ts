import type { CommandFile } from '../command-file.js';
import type { Step } from '../run-state.js';
import { workItemsProposal } from './work-items.js';

/**
 * A concluded run's final proposal, from its command and its finished steps, as its mode concluded
 * it: the work items' output (one item's own, or their merge) when it had them, else the synthesizer's reply. Undefined when
 * there is none (the run ended before its synthesis).
 */
export function finalProposal(command: Pick<CommandFile, 'work_items'>, steps: readonly Step[]): string | undefined {
  if (command.work_items && command.work_items.length > 0) return workItemsProposal(command.work_items, steps);
  return steps.find((s) => s.kind === 'synthesis')?.reply;
}
