import type { ArbitrationStrategy } from '../domain/command-file.js';
import type { Composition, Weighting } from '../domain/modes/settings.js';
import { screenText } from '../domain/screen.js';
import { finalProposal } from '../domain/modes/proposal.js';
import { processCommand } from './process-command.js';
import type { RunDeps, RunOutcome } from './run-deps.js';

/** What `maestro ask` was given: a question and the few settings a command file's `config` would carry. */
export interface AskInput {
  readonly question: string;
  /** Speaker order by persona id; absent = every persona by its `order`. */
  readonly personas?: readonly string[];
  /** Absent = `ASK_MODE`. */
  readonly mode?: string;
  readonly weighting?: Weighting;
  readonly composition?: Composition;
  readonly arbitration?: ArbitrationStrategy;
  readonly rounds?: number;
  /** Workspace-relative files, as a command file's `input_artifacts`. */
  readonly inputs?: readonly string[];
}

/**
 * The mode of a question asked in one line: seed 001's parallel_consensus, its Q1 "default to
 * parallel". Each persona assesses once and at once, then COMPOSE, ARBITRATE and a synthesis: n + 1
 * calls instead of round robin's rounds × n + n + 1, and no persona's view shaped by the others'.
 */
export const ASK_MODE = 'parallel';

/**
 * The command file a one-line question is: the same schema a dropped file is held to (an unknown
 * persona, a bad mode or a path outside the workspace are refused the same way, by the same checks).
 */
export function askCommand(input: AskInput): Record<string, unknown> {
  const config: Record<string, unknown> = { mode: input.mode ?? ASK_MODE };
  if (input.personas && input.personas.length > 0) config.personas = [...input.personas];
  if (input.weighting) config.weighting = input.weighting;
  if (input.composition) config.composition = input.composition;
  if (input.arbitration) config.arbitration = input.arbitration;
  if (input.rounds !== undefined) config.max_rounds = input.rounds;
  return { task_description: input.question, input_artifacts: [...(input.inputs ?? [])], config };
}

export interface AskOutcome {
  readonly outcome: RunOutcome;
  /** The council's final proposal, screened; null unless the run completed (a paused run has a draft, not an answer). */
  readonly answer: string | null;
}

/**
 * Asks the council one question through the one pipeline every command goes through: the same
 * validation, floor, gates, policy, audit log and artifact as `maestro run` on a file.
 */
export async function askCouncil(input: AskInput, deps: RunDeps, runId?: string): Promise<AskOutcome> {
  const text = JSON.stringify(askCommand(input));
  const outcome = await processCommand({ text, source: 'ask', ...(runId ? { runId } : {}) }, deps);
  if (outcome.status !== 'completed') return { outcome, answer: null };
  const state = await deps.ledger.load(outcome.run_id);
  const proposal = state ? finalProposal(state) : undefined;
  return { outcome, answer: proposal === undefined ? null : screenText(proposal) };
}
