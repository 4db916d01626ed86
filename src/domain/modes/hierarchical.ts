import { arbitrate, supportWords, type ArbitrationResult } from '../arbitration.js';
import type { Step } from '../run-state.js';
import type { Verdict } from '../verdict.js';
import { councilWeights } from './conversation.js';
import type { Conclusion, DeliberationMode, ModeContext, ModeNext } from './mode.js';
import {
  assessmentId,
  assessmentSpec,
  concludeWith,
  evaluate,
  fmt,
  SYNTHESIS_ID,
  synthesisSpec,
  withFlags,
  type Evaluation,
} from './parallel.js';
import { readModeSettings } from './settings.js';

/**
 * `hierarchical` (seed 001): the council is split into groups (from the command or the workspace
 * config, else by the tier each persona declares); every persona assesses at once, each group's
 * assessments are composed and arbitrated on their own, and a meta-arbiter — the plan's arbitration
 * strategy over the groups' results, each group one voice — decides between the groups. As in
 * `parallel_consensus`, action needs a majority (here of the groups), and a group whose every
 * assessment was invalid counts as escalate.
 */
export const hierarchicalMode: DeliberationMode = {
  name: 'hierarchical',
  next: nextCalls,
  conclude: concludeHierarchical,
};

/** A named group of the council. */
export interface PersonaGroup {
  readonly name: string;
  readonly members: readonly string[];
}

/**
 * The groups a run uses: the configured ones (members outside the council left out, and personas
 * in no group gathered in `others`), or by declared tier (`general` for personas with none).
 */
export function groupsOf(ctx: ModeContext): PersonaGroup[] {
  const council = ctx.plan.personas;
  const configured = readModeSettings(ctx.plan.settings).groups;
  const groups: PersonaGroup[] = [];
  if (configured) {
    for (const [name, ids] of Object.entries(configured)) {
      const members = council.filter((p) => ids.includes(p));
      if (members.length > 0) groups.push({ name, members });
    }
  } else {
    const byTier = new Map<string, string[]>();
    for (const p of council) {
      const tier = ctx.personas.get(p)?.tier ?? 'general';
      byTier.set(tier, [...(byTier.get(tier) ?? []), p]);
    }
    for (const [name, members] of byTier) groups.push({ name, members });
  }
  const grouped = new Set(groups.flatMap((g) => g.members));
  const others = council.filter((p) => !grouped.has(p));
  if (others.length === 0) return groups;
  const name = groups.some((g) => g.name === 'others') ? 'others-ungrouped' : 'others';
  groups.push({ name, members: others });
  return groups;
}

function nextCalls(ctx: ModeContext, done: readonly Step[]): ModeNext {
  const ids = new Set(done.map((s) => s.id));
  // The groups assess in parallel: every persona of every group at once (bounded by `concurrency`).
  const pending = groupsOf(ctx)
    .flatMap((g) => g.members)
    .filter((p) => !ids.has(assessmentId(p)));
  if (pending.length > 0) return { kind: 'steps', steps: pending.map((p) => assessmentSpec(ctx, p, [])), concurrent: true };
  if (!ids.has(SYNTHESIS_ID)) {
    const h = evaluateHierarchy(ctx, done);
    return { kind: 'steps', steps: [synthesisSpec(ctx, h.overall, groupLines(h))], concurrent: false };
  }
  return { kind: 'conclude' };
}

/** One group's own composition and arbitration. */
export interface GroupResult extends PersonaGroup {
  readonly evaluation: Evaluation;
}

export interface Hierarchy {
  readonly groups: readonly GroupResult[];
  /** Every assessment composed together (for the vectors), with the meta-arbiter's result as its arbitration. */
  readonly overall: Evaluation;
  readonly meta: ArbitrationResult;
}

/** Each group composed and arbitrated, then the meta-arbiter over the groups (pure). */
export function evaluateHierarchy(ctx: ModeContext, done: readonly Step[]): Hierarchy {
  const groups = groupsOf(ctx).map((g) => ({ ...g, evaluation: evaluate(ctx, done, g.members) }));
  const { relevance } = councilWeights(ctx);
  const verdicts: Verdict[] = groups.map((g) => groupVerdict(g));
  const groupRelevance = Object.fromEntries(
    groups.map((g) => [g.name, g.members.reduce((n, p) => n + (relevance[p] ?? 0.5), 0) / g.members.length]),
  );
  const meta = arbitrate({
    strategy: ctx.plan.arbitration,
    verdicts,
    weights: Object.fromEntries(groups.map((g) => [g.name, 1])),
    relevance: groupRelevance,
  });
  const all = evaluate(
    ctx,
    done,
    groups.flatMap((g) => g.members),
  );
  const threshold = readModeSettings(ctx.plan.settings).consensusThreshold;
  return { groups, overall: { ...all, arbitration: withFlags(meta, all.composed, threshold) }, meta };
}

/** A group's result as one voice before the meta-arbiter: invalid when none of its assessments was. */
function groupVerdict(g: GroupResult): Verdict {
  const e = g.evaluation;
  const valid = e.assessments.some((a) => a.valid);
  return {
    persona: g.name,
    valid,
    action: valid ? e.arbitration.final_action : 'escalate',
    confidence: valid ? e.arbitration.confidence : 1,
    rationale: e.arbitration.reasoning,
    ...(valid ? {} : { problem: 'no valid assessment in the group' }),
  };
}

function groupLines(h: Hierarchy): string[] {
  return [
    'Hierarchical: each group was composed and arbitrated on its own, then a meta-arbiter decided between the groups:',
    ...h.groups.map(
      (g) =>
        `- group ${g.name} (${g.members.join(', ')}): ${g.evaluation.arbitration.final_action} — ${g.evaluation.arbitration.reasoning}`,
    ),
    `Meta-arbiter (${h.meta.strategy}): ${h.meta.final_action} — ${h.meta.reasoning}`,
  ];
}

function groupsTable(h: Hierarchy): string {
  return [
    '| Group | Members | Group action | Confidence | Composed overall | Support for its action |',
    '|---|---|---|---|---|---|',
    ...h.groups.map((g) => {
      const e = g.evaluation;
      return `| ${g.name} | ${g.members.map((p) => `\`${p}\``).join(', ')} | ${e.arbitration.final_action} | ${e.arbitration.confidence.toFixed(2)} | ${fmt(e.composed.tiers?.overall)} | ${supportWords(e.arbitration)} |`;
    }),
    '',
    `**Meta-arbiter (${h.meta.strategy}, each group one voice):** ${h.meta.final_action} — ${h.meta.reasoning}.`,
  ].join('\n');
}

function concludeHierarchical(ctx: ModeContext, done: readonly Step[]): Conclusion {
  const h = evaluateHierarchy(ctx, done);
  return concludeWith(ctx, done, h.overall, {
    sections: [{ title: 'Groups and meta-arbitration', markdown: groupsTable(h) }],
    audit: {
      hierarchical: {
        groups: h.groups.map((g) => ({ name: g.name, members: [...g.members], action: g.evaluation.arbitration.final_action })),
        meta_action: h.meta.final_action,
      },
    },
  });
}
