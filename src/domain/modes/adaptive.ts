import { rankRelevance } from '../relevance.js';
import type { Step } from '../run-state.js';
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

/** The council split into who assesses first and who is held back. */
export interface AdaptiveSplit {
  readonly broad: readonly string[];
  readonly specialists: readonly string[];
  /** How the specialists were chosen, for the artifact. */
  readonly chosenBy: 'command' | 'relevance';
}

/**
 * The specialists a command names (those of the council), or else the half of the council (rounded
 * down) whose declared field is most relevant to the task, ties in speaking order. At least one
 * persona always assesses first: if every persona were a specialist, they all assess first.
 */
export function adaptiveSplit(ctx: ModeContext): AdaptiveSplit {
  const council = ctx.plan.personas;
  const named = readModeSettings(ctx.plan.settings).specialists;
  let specialists: string[];
  if (named) specialists = council.filter((p) => named.includes(p));
  else {
    const relevance = rankRelevance(
      council.map((id) => ctx.personas.get(id) ?? { id, focus_domains: [] }),
      ctx.task,
    );
    const ranked = [...council].sort((a, b) => (relevance[b] ?? 0) - (relevance[a] ?? 0) || council.indexOf(a) - council.indexOf(b));
    specialists = ranked.slice(0, Math.floor(council.length / 2));
  }
  if (specialists.length >= council.length) specialists = [];
  return { broad: council.filter((p) => !specialists.includes(p)), specialists, chosenBy: named ? 'command' : 'relevance' };
}

/** Whether the broad assessment leaves the council uncertain enough to ask the specialists. */
export function needsSpecialists(
  ctx: ModeContext,
  done: readonly Step[],
  broad: readonly string[],
): { spawn: boolean; uncertainty: number | null } {
  const threshold = readModeSettings(ctx.plan.settings).uncertaintyThreshold;
  const uncertainty = evaluate(ctx, done, broad).composed.vectors.uncertainty.score;
  return { spawn: uncertainty === null || uncertainty > threshold, uncertainty };
}

function nextCalls(ctx: ModeContext, done: readonly Step[]): ModeNext {
  const ids = new Set(done.map((s) => s.id));
  const { broad, specialists } = adaptiveSplit(ctx);
  const pendingBroad = broad.filter((p) => !ids.has(assessmentId(p)));
  if (pendingBroad.length > 0) return { kind: 'steps', steps: pendingBroad.map((p) => assessmentSpec(ctx, p, [])), concurrent: true };
  const asked = askedPersonas(ctx, done);
  const pendingSpecialists = asked.filter((p) => specialists.includes(p) && !ids.has(assessmentId(p)));
  if (pendingSpecialists.length > 0) {
    // The specialists see the broad assessments (the seed's prior_assessment as context).
    const earlier = assessmentsOf(done).filter((a) => broad.includes(a.persona));
    return { kind: 'steps', steps: pendingSpecialists.map((p) => assessmentSpec(ctx, p, earlier)), concurrent: true };
  }
  if (!ids.has(SYNTHESIS_ID)) {
    return { kind: 'steps', steps: [synthesisSpec(ctx, evaluate(ctx, done, asked), [escalationLine(ctx, done)])], concurrent: false };
  }
  return { kind: 'conclude' };
}

/** Everyone asked: the broad set, and the specialists when the broad assessment was too uncertain. */
function askedPersonas(ctx: ModeContext, done: readonly Step[]): string[] {
  const { broad, specialists } = adaptiveSplit(ctx);
  return needsSpecialists(ctx, done, broad).spawn ? [...broad, ...specialists] : [...broad];
}

function escalationLine(ctx: ModeContext, done: readonly Step[]): string {
  const { broad, specialists, chosenBy } = adaptiveSplit(ctx);
  const threshold = readModeSettings(ctx.plan.settings).uncertaintyThreshold;
  const { spawn, uncertainty } = needsSpecialists(ctx, done, broad);
  const measured = uncertainty === null ? 'could not be composed (counted as above the threshold)' : `was ${uncertainty.toFixed(2)}`;
  const list = (ids: readonly string[]): string => (ids.length > 0 ? ids.map((p) => `\`${p}\``).join(', ') : 'none');
  const outcome =
    specialists.length === 0
      ? 'there were no specialists to ask (the council is too small to split, or every persona was named a specialist).'
      : spawn
        ? `so the specialists (${list(specialists)}, chosen by ${chosenBy === 'command' ? 'the command' : 'relevance to the task'}) were asked, with the broad assessments as their context.`
        : `so the specialists (${list(specialists)}) were not needed.`;
  return `Adaptive: the broad personas (${list(broad)}) assessed first; their composed uncertainty ${measured} against the threshold ${threshold}, ${outcome}`;
}

function concludeAdaptive(ctx: ModeContext, done: readonly Step[]): Conclusion {
  const { broad, specialists } = adaptiveSplit(ctx);
  const asked = askedPersonas(ctx, done);
  const { spawn, uncertainty } = needsSpecialists(ctx, done, broad);
  return concludeWith(ctx, done, evaluate(ctx, done, asked), {
    sections: [{ title: 'Adaptive escalation', markdown: escalationLine(ctx, done) }],
    audit: {
      adaptive: {
        broad: [...broad],
        specialists: [...specialists],
        broad_uncertainty: uncertainty,
        threshold: readModeSettings(ctx.plan.settings).uncertaintyThreshold,
        specialists_asked: spawn && specialists.length > 0,
      },
    },
  });
}
