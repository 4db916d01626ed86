import { z } from 'zod';
import type { PersonaPriors } from './persona.js';
import { VerdictAction } from './verdict.js';

/**
 * A persona's record of verdicts against outcomes a person confirmed (`maestro outcome <run_id>
 * right|wrong`), and the reliability it earns from them on top of its declared prior. Only a
 * person's confirmation teaches anything: agreeing with the council is not being right, and a
 * dissenting auditor whom the outcome proves right gains weight.
 */

/** One confirmed outcome, as a persona's session keeps it. */
export const OutcomeEntry = z.strictObject({
  run_id: z.string(),
  /** What the persona said (its verdict, or its assessment's action). */
  said: VerdictAction,
  /** The council's final action in that run. */
  final: VerdictAction,
  /** What a person confirmed: the council's outcome was right, or wrong. */
  outcome: z.enum(['right', 'wrong']),
  /** Whether this persona's verdict was right, given that. */
  right: z.boolean(),
  /** When the person confirmed it. */
  at: z.string(),
  /** The person's note, screened. */
  note: z.string().max(500).optional(),
});
export type OutcomeEntry = z.infer<typeof OutcomeEntry>;

/** How many confirmed outcomes a persona's session keeps (the newest). */
export const OUTCOMES_KEPT = 100;

/** Whether an action goes ahead; the other two hold the run for a person. */
const goesAhead = (action: VerdictAction): boolean => action === 'proceed';

/**
 * Whether a persona's verdict was right, given the council's final action and what a person
 * confirmed of it. The question every verdict answers is whether the run should go ahead: when the
 * council's outcome was right, a verdict on the same side (proceed, or holding back) was right; when
 * it was wrong, a verdict on the other side was.
 */
export function verdictWasRight(said: VerdictAction, final: VerdictAction, outcome: 'right' | 'wrong'): boolean {
  const sameSide = goesAhead(said) === goesAhead(final);
  return outcome === 'right' ? sameSide : !sameSide;
}

/** The entries with this run's entry in place of any earlier one for it (a person may correct themselves), newest kept. */
export function withOutcome(entries: readonly OutcomeEntry[], entry: OutcomeEntry): OutcomeEntry[] {
  return [...entries.filter((e) => e.run_id !== entry.run_id), entry].slice(-OUTCOMES_KEPT);
}

/** The prior of a persona that declares none: 0.5, worth two outcomes (Laplace's rule of succession). */
export const DEFAULT_PRIOR: PersonaPriors = { reliability: 0.5, strength: 2 };

/**
 * A persona's reliability: the mean of its Beta prior updated by its confirmed outcomes,
 * (reliability·strength + right) / (strength + right + wrong), rounded to 3 places. With no record it
 * is the declared reliability; every confirmed outcome moves it by at most 1 / (strength + n).
 */
export function reliability(prior: PersonaPriors | undefined, outcomes: readonly OutcomeEntry[]): number {
  const { reliability: mean, strength } = prior ?? DEFAULT_PRIOR;
  const right = outcomes.filter((o) => o.right).length;
  return Math.round(((mean * strength + right) / (strength + outcomes.length)) * 1000) / 1000;
}
