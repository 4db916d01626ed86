import type { CommandFile } from '../command-file.js';
import type { Step } from '../run-state.js';
import { mergeWorkItems } from './work-items.js';

/**
 * A concluded run's final proposal, from its command and its finished steps, as its mode concluded
 * it: the merge of the work items when it had them, else the synthesizer's reply. Undefined when
 * there is none (the run ended before its synthesis).
 */
export function finalProposal(command: Pick<CommandFile, 'work_items'>, steps: readonly Step[]): string | undefined {
  if (command.work_items && command.work_items.length > 0) return mergeWorkItems(command.work_items, steps);
  return steps.find((s) => s.kind === 'synthesis')?.reply;
}
