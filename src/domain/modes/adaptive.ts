import type { Step } from '../run-state.js';
import { councilWeights } from './conversation.js';
import type { Conclusion, DeliberationMode, ModeContext, ModeNext } from './mode.js';
import { assessmentId, assessmentSpec, assessmentsOf, concludeWith, evaluate, SYNTHESIS_ID, synthesisSpec } from './parallel.js';
import { readModeSettings } from './settings.js';

/**
 * `adaptive` (seed 001): the broad personas assess the task first, at once. When the composed
 * `uncertainty` vector is above `uncertainty_threshold` (default 0.7, the seed's), the specialists
 * are asked too, each with the broad assessments as its context; then everything asked is composed
 * and arbitrated as in `parallel`, and the synthesizer writes the proposal. No usable composed
 * uncertainty (no valid broad assessment, or the vector flagged for disagreement) counts as above
 * the threshold: when in doubt, the specialists are asked (fail closed).
 */
export const adaptiveMode: DeliberationMode = {
  name: 'adaptive',
  next: nextCalls,
  conclude: concludeAdaptive,
};

/** The council split into who assesses first, who is held back, and who is not asked at all. */
export interface AdaptiveSplit {
  readonly broad: readonly string[];
  readonly specialists: readonly string[];
  /** Below the relevance floor: never asked (seed 001's cost note). */
  readonly skipped: readonly string[];
  /** How the specialists were chosen, for the artifact. */
  readonly chosenBy: 'command' | 'relevance';
}

/**
 * The personas by relevance to the task, most relevant first. **Ties go to the later speaker**: the
 * specialists come from the end of the speaking order, and the first speaker — the synthesizer by
 * default, who opens the discussion — stays broad when relevance cannot tell them apart.
 */
export function byRelevance(council: readonly string[], relevance: Readonly<Record<string, number>>): string[] {
  return [...council].sort((a, b) => (relevance[b] ?? 0) - (relevance[a] ?? 0) || council.indexOf(b) - council.indexOf(a));
}

/**
 * Who is asked, and when. Personas below `relevance_floor` are not asked at all — but the most
 * relevant persona always is, and a council whose relevance is all one value skips nobody (there is
 * no evidence that anyone is off-topic). Of the rest, the specialists are those the command names,
 * or else the more relevant half (rounded down), ties to the later speaker. At least one persona
 * always assesses first: if every persona asked were a specialist, they all assess first.
 */
export function adaptiveSplit(ctx: ModeContext): AdaptiveSplit {
  const council = ctx.plan.personas;
  const { specialists: named, relevanceFloor } = readModeSettings(ctx.plan.settings);
  const { relevance } = councilWeights(ctx);
  const ranked = byRelevance(council, relevance);
  const tellsApart = new Set(council.map((p) => relevance[p] ?? 0)).size > 1;
  const skipped = tellsApart ? council.filter((p) => p !== ranked[0] && (relevance[p] ?? 0) < relevanceFloor) : [];
  const asked = ranked.filter((p) => !skipped.includes(p));
  let specialists = named ? asked.filter((p) => named.includes(p)) : asked.slice(0, Math.floor(asked.length / 2));
  if (specialists.length >= asked.length) specialists = [];
  return {
    broad: council.filter((p) => asked.includes(p) && !specialists.includes(p)),
    specialists: council.filter((p) => specialists.includes(p)),
    skipped,
    chosenBy: named ? 'command' : 'relevance',
  };
}

/** The split and what the broad assessment made of it: its composed uncertainty, and so whether the specialists are asked. */
interface AdaptiveReading extends AdaptiveSplit {
  readonly uncertainty: number | null;
  readonly spawn: boolean;
  /** Everyone asked: the broad set, and the specialists when the broad assessment was too uncertain. */
  readonly asked: readonly string[];
}

/** Reads the adaptive escalation from the finished steps: no usable composed uncertainty counts as above the threshold. */
function readAdaptive(ctx: ModeContext, done: readonly Step[]): AdaptiveReading {
  const split = adaptiveSplit(ctx);
  const threshold = readModeSettings(ctx.plan.settings).uncertaintyThreshold;
  const uncertainty = evaluate(ctx, done, split.broad).composed.vectors.uncertainty.score;
  const spawn = uncertainty === null || uncertainty > threshold;
  return { ...split, uncertainty, spawn, asked: spawn ? [...split.broad, ...split.specialists] : [...split.broad] };
}

function nextCalls(ctx: ModeContext, done: readonly Step[]): ModeNext {
  const ids = new Set(done.map((s) => s.id));
  const pendingBroad = adaptiveSplit(ctx).broad.filter((p) => !ids.has(assessmentId(p)));
  if (pendingBroad.length > 0) return { kind: 'steps', steps: pendingBroad.map((p) => assessmentSpec(ctx, p, [])), concurrent: true };
  const reading = readAdaptive(ctx, done);
  const pendingSpecialists = reading.asked.filter((p) => reading.specialists.includes(p) && !ids.has(assessmentId(p)));
  if (pendingSpecialists.length > 0) {
    // The specialists see the broad assessments (the seed's prior_assessment as context).
    const earlier = assessmentsOf(done).filter((a) => reading.broad.includes(a.persona));
    return { kind: 'steps', steps: pendingSpecialists.map((p) => assessmentSpec(ctx, p, earlier)), concurrent: true };
  }
  if (!ids.has(SYNTHESIS_ID)) {
    const result = evaluate(ctx, done, reading.asked);
    return { kind: 'steps', steps: [synthesisSpec(ctx, result, [escalationLine(ctx, reading)])], concurrent: false };
  }
  return { kind: 'conclude' };
}

function escalationLine(ctx: ModeContext, reading: AdaptiveReading): string {
  const { broad, specialists, chosenBy, skipped, spawn, uncertainty } = reading;
  const threshold = readModeSettings(ctx.plan.settings).uncertaintyThreshold;
  const measured = uncertainty === null ? 'could not be composed (counted as above the threshold)' : `was ${uncertainty.toFixed(2)}`;
  const list = (ids: readonly string[]): string => (ids.length > 0 ? ids.map((p) => `\`${p}\``).join(', ') : 'none');
  const outcome =
    specialists.length === 0
      ? skipped.length > 0
        ? 'there were no specialists to ask: every one was below the relevance floor.'
        : 'there were no specialists to ask (the council is too small to split, or every persona was named a specialist).'
      : spawn
        ? `so the specialists (${list(specialists)}, chosen by ${chosenBy === 'command' ? 'the command' : 'relevance to the task, ties to the later speaker'}) were asked, with the broad assessments as their context.`
        : `so the specialists (${list(specialists)}) were not needed.`;
  const { relevance } = councilWeights(ctx);
  const floor = readModeSettings(ctx.plan.settings).relevanceFloor;
  const skip =
    skipped.length > 0
      ? ` Not asked, below the relevance floor ${floor}: ${skipped.map((p) => `\`${p}\` (${(relevance[p] ?? 0).toFixed(2)})`).join(', ')}.`
      : '';
  return `Adaptive: the broad personas (${list(broad)}) assessed first; their composed uncertainty ${measured} against the threshold ${threshold}, ${outcome}${skip}`;
}

function concludeAdaptive(ctx: ModeContext, done: readonly Step[]): Conclusion {
  const reading = readAdaptive(ctx, done);
  return concludeWith(ctx, done, evaluate(ctx, done, reading.asked), {
    sections: [{ title: 'Adaptive escalation', markdown: escalationLine(ctx, reading) }],
    audit: {
      adaptive: {
        broad: [...reading.broad],
        specialists: [...reading.specialists],
        broad_uncertainty: reading.uncertainty,
        threshold: readModeSettings(ctx.plan.settings).uncertaintyThreshold,
        specialists_asked: reading.spawn && reading.specialists.length > 0,
        skipped: [...reading.skipped],
      },
    },
  });
}
