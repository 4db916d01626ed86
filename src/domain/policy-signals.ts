import { matchLexicon } from './policy-matcher.js';

/**
 * Category-level signals the gates read from a task: what it asks to do, not what it says. The
 * categories and their wordings are data (`policy-lexicon.ts`, matched by `policy-matcher.ts`);
 * each signal is a short label, and the task text itself never leaves this function. On the
 * offline model these rules alone decide; on a real route the mediator's classification is united
 * with them (`uniteAdvice`).
 */

const BOUNDARY: readonly RegExp[] = [
  /\bdecide for me\b/i,
  /\bchoose for me\b/i,
  /\bwhat do i (?:really )?want\b/i,
  /\bmy (?:personal )?(?:preference|values)\b/i,
  /\bwhich (?:one )?do you (?:like|prefer)\b/i,
];

export interface PolicySignals {
  /** External side effects the task asks for (payment, destructive, credentials, send, publish, …). */
  readonly sideEffects: string[];
  /** High-stakes domains the task asks a decision in (medical, legal, financial, employment). */
  readonly highStakes: string[];
  /** The task asks the council to set a person's own preference or boundary. */
  readonly boundary: boolean;
}

export function readPolicySignals(task: string): PolicySignals {
  const hits = matchLexicon(task);
  return {
    sideEffects: hits.filter((h) => h.kind === 'side_effect').map((h) => h.label),
    highStakes: hits.filter((h) => h.kind === 'high_stakes').map((h) => h.label),
    boundary: BOUNDARY.some((re) => re.test(task)),
  };
}

/** The fingerprint of a conflict for the loop policy: the normalised task's digest, or the command's key. */
export function normaliseTask(task: string): string {
  return task.toLowerCase().replace(/\s+/g, ' ').trim();
}
