import type { ArbitrationStrategy } from './command-file.js';
import type { Verdict, VerdictAction } from './verdict.js';

/** How cautious an action is; higher wins ties and `pessimistic`. */
const CAUTION: Record<VerdictAction, number> = { proceed: 0, investigate: 1, escalate: 2 };

export interface ArbitrationInput {
  readonly strategy: ArbitrationStrategy;
  readonly verdicts: readonly Verdict[];
  /** Persona id → its configured weight (default 1). */
  readonly weights: Readonly<Record<string, number>>;
  /** Persona id → relevance of its focus domains to the task, 0–1 (for `domain_weighted`). */
  readonly relevance?: Readonly<Record<string, number>>;
}

export interface ArbitrationResult {
  readonly strategy: ArbitrationStrategy;
  readonly final_action: VerdictAction;
  readonly reasoning: string;
  /** Share of the winning action in the strategy's own scoring, 0–1. */
  readonly confidence: number;
  /**
   * Share of personas that voted the most common action, 0–1: how united the council was, whichever
   * action won. Not the support for the final action (a `proceed` one of three voted for, against two
   * investigates, has agreement 0.67): that is `actionSupport`, and it is what is printed beside it.
   */
  readonly agreement: number;
  readonly votes: Readonly<Record<string, VerdictAction>>;
  readonly scores: Readonly<Record<VerdictAction, number>>;
  /** One line per persona that disagreed with the final action, or whose verdict was invalid. */
  readonly conflicts: readonly string[];
  /** Persona id → the weight its vote carried under this strategy. */
  readonly weights_used: Readonly<Record<string, number>>;
  /** 0 (total disagreement) to 1 (full consensus): the share of personas behind the most common action. */
  readonly consensus_level: number;
  /**
   * What held back a `proceed` the votes gave (`investigateOver`): open disagreement they do not show
   * — vectors flagged by the consensus threshold, items the contradiction check found at odds.
   */
  readonly held_back_by?: { readonly why: string; readonly found: readonly string[] };
}

/**
 * Turns verdicts into one action. Ties always go to the more cautious action, an empty council
 * escalates, and action needs a majority in every mode (`requireMajority`): the result can over-stop,
 * never fail open.
 */
export function arbitrate(input: ArbitrationInput): ArbitrationResult {
  const { strategy, verdicts } = input;
  const scores: Record<VerdictAction, number> = { proceed: 0, investigate: 0, escalate: 0 };
  const votes: Record<string, VerdictAction> = {};
  for (const v of verdicts) votes[v.persona] = v.action;

  if (verdicts.length === 0) {
    return finish(input, 'escalate', scores, votes, 'no verdicts were given, so the council escalates (fail closed)');
  }

  const counts: Record<VerdictAction, number> = { proceed: 0, investigate: 0, escalate: 0 };
  for (const v of verdicts) counts[v.action] += 1;
  const distinct = Object.values(counts).filter((c) => c > 0).length;

  let action: VerdictAction;
  let why: string;
  switch (strategy) {
    case 'majority_vote':
      for (const v of verdicts) scores[v.action] += 1;
      action = top(scores);
      why = `majority vote: ${describe(scores, 0)}`;
      break;
    case 'pessimistic':
      for (const v of verdicts) scores[v.action] += 1;
      action = verdicts.reduce<VerdictAction>((worst, v) => (CAUTION[v.action] > CAUTION[worst] ? v.action : worst), 'proceed');
      why = `pessimistic: the most cautious verdict wins (${describe(scores, 0)})`;
      break;
    case 'escalate_on_conflict':
      for (const v of verdicts) scores[v.action] += 1;
      if (distinct > 1) {
        action = 'escalate';
        why = `escalate on conflict: the council disagreed (${describe(scores, 0)})`;
      } else {
        action = top(scores);
        why = `escalate on conflict: the council was unanimous (${action})`;
      }
      break;
    case 'domain_weighted':
      for (const v of verdicts) scores[v.action] += (input.relevance?.[v.persona] ?? 0.5) * weightOf(input, v.persona);
      action = top(scores);
      why = `domain weighted: votes weighted by each persona's relevance to the task × weight (${describe(scores, 2)})`;
      break;
    case 'confidence_weighted':
      for (const v of verdicts) scores[v.action] += v.confidence * weightOf(input, v.persona);
      action = top(scores);
      why = `confidence weighted: votes weighted by confidence × weight (${describe(scores, 2)})`;
      break;
  }
  return requireMajority(finish(input, action, scores, votes, why));
}

function weightOf(input: ArbitrationInput, persona: string): number {
  return input.weights[persona] ?? 1;
}

/** Highest score; ties go to the more cautious action. */
function top(scores: Record<VerdictAction, number>): VerdictAction {
  const order: VerdictAction[] = ['escalate', 'investigate', 'proceed'];
  return order.reduce((best, a) => (scores[a] > scores[best] ? a : best), order[0] as VerdictAction);
}

function describe(scores: Record<VerdictAction, number>, digits: number): string {
  return (['proceed', 'investigate', 'escalate'] as const).map((a) => `${a} ${scores[a].toFixed(digits)}`).join(', ');
}

function finish(
  input: ArbitrationInput,
  action: VerdictAction,
  scores: Record<VerdictAction, number>,
  votes: Record<string, VerdictAction>,
  why: string,
): ArbitrationResult {
  const total = scores.proceed + scores.investigate + scores.escalate;
  const n = input.verdicts.length;
  const counts = new Map<VerdictAction, number>();
  for (const v of input.verdicts) counts.set(v.action, (counts.get(v.action) ?? 0) + 1);
  const agreement = n === 0 ? 0 : Math.max(...counts.values()) / n;
  const conflicts = input.verdicts
    .filter((v) => !v.valid || v.action !== action)
    .map((v) =>
      v.valid
        ? `${v.persona} said ${v.action} (${v.confidence.toFixed(2)}): ${v.rationale}`
        : `${v.persona}: ${v.problem ?? 'invalid verdict'} → counted as escalate`,
    );
  const invalid = input.verdicts.filter((v) => !v.valid).length;
  const reasoning = invalid > 0 ? `${why}; ${invalid} verdict(s) missing or malformed counted as escalate` : why;
  const weightsUsed: Record<string, number> = {};
  for (const v of input.verdicts) {
    const w =
      input.strategy === 'confidence_weighted'
        ? v.confidence * weightOf(input, v.persona)
        : input.strategy === 'domain_weighted'
          ? (input.relevance?.[v.persona] ?? 0.5) * weightOf(input, v.persona)
          : 1;
    weightsUsed[v.persona] = Math.round(w * 1000) / 1000;
  }
  return {
    strategy: input.strategy,
    final_action: action,
    reasoning,
    confidence: total > 0 ? scores[action] / total : 0,
    agreement,
    votes,
    scores: { ...scores },
    conflicts,
    weights_used: weightsUsed,
    consensus_level: agreement,
  };
}

/**
 * Seed 001's parallel_consensus "requires majority agreement for action": a `proceed` that fewer than
 * a strict majority of the voters voted for (however confident its few voters) becomes `investigate`.
 * A cautious result stands as it is: it never needs a majority to hold the council back. The one rule
 * of every arbitration (each mode's council, a hierarchy's groups and its meta-arbiter, a reviewer's
 * vote among the council's), so no mode lets one sure persona outvote two unsure ones.
 */
function requireMajority(result: ArbitrationResult): ArbitrationResult {
  if (result.final_action !== 'proceed') return result;
  const votes = Object.values(result.votes);
  const proceed = votes.filter((a) => a === 'proceed').length;
  if (proceed * 2 > votes.length) return result;
  return {
    ...result,
    final_action: 'investigate',
    confidence: votes.length > 0 ? 1 - proceed / votes.length : 0,
    reasoning: `${result.reasoning}; but only ${proceed} of ${votes.length} persona(s) voted proceed, and action needs a majority, so the council investigates`,
  };
}

/**
 * Open disagreement the votes do not show (vectors flagged by the consensus threshold, work items that
 * contradict each other): it joins the conflicts, and a `proceed` over it fails closed to investigate.
 */
export function investigateOver(result: ArbitrationResult, found: readonly string[], why: string): ArbitrationResult {
  if (found.length === 0) return result;
  const conflicts = [...result.conflicts, ...found];
  if (result.final_action !== 'proceed') return { ...result, conflicts };
  return {
    ...result,
    final_action: 'investigate',
    conflicts,
    reasoning: `${result.reasoning}; ${why}, so the council investigates first`,
    held_back_by: { why, found: [...found] },
  };
}

/** The votes and the action they came to (an arbitration, or an event that reports one). */
type VotedAction = { readonly votes: Readonly<Record<string, string>>; readonly final_action: string };

/** How many voters voted the final action, of how many: the support printed beside the action. */
export interface ActionSupport {
  readonly voted: number;
  readonly of: number;
  /** `voted / of`, 0 when nobody voted. */
  readonly share: number;
}

/** The final action's support among the votes (a reviewer's vote included when it was one). */
export function actionSupport(result: VotedAction): ActionSupport {
  const votes = Object.values(result.votes);
  const voted = votes.filter((a) => a === result.final_action).length;
  return { voted, of: votes.length, share: votes.length > 0 ? voted / votes.length : 0 };
}

/** The support as people read it beside the action: `2 of 3 voted proceed`. */
export function supportWords(result: VotedAction): string {
  const { voted, of } = actionSupport(result);
  return `${voted} of ${of} voted ${result.final_action}`;
}
