import { actionSupport, arbitrate, investigateOver, supportWords, type ArbitrationResult } from '../arbitration.js';
import {
  ASSESSMENT_INSTRUCTION,
  ASSESSMENT_SCHEMA,
  assessmentRetryPrompt,
  assessmentVerdict,
  parseAssessment,
  renderAssessment,
  round,
  tierConfidence,
  VECTORS,
  type Assessment,
} from '../assessment.js';
import { composeAssessments, effectiveWeights, vectorAgreement, weightList, type ComposedAssessment } from '../composition.js';
import { heatmapSvg } from '../heatmap-svg.js';
import type { Step } from '../run-state.js';
import { callTimes, councilWeights, personaStep, replyCheck, tableCell } from './conversation.js';
import type { ArtifactAttachment, ArtifactSection, Conclusion, DeliberationMode, ModeContext, ModeNext, StepSpec } from './mode.js';
import { aggregateReviews, reviewId, reviewStep, standingTable, type ReviewStanding } from './review.js';
import { readModeSettings } from './settings.js';

/**
 * `parallel` (seed 001's parallel_consensus): every persona assesses the task on its own and at
 * once; with `review: anonymous` each then ranks the others' assessments under neutral labels; the
 * assessments are composed (COMPOSE) and arbitrated (ARBITRATE); the synthesizer writes the proposal.
 * `sequential_refinement` asks the same assessments one at a time, each persona seeing the earlier ones.
 */
export const parallelMode: DeliberationMode = {
  name: 'parallel',
  next: (ctx, done) => nextCalls(ctx, done, false),
  conclude: (ctx, done) => concludeWith(ctx, done, evaluate(ctx, done)),
};

export const sequentialRefinementMode: DeliberationMode = {
  name: 'sequential_refinement',
  next: (ctx, done) => nextCalls(ctx, done, true),
  conclude: (ctx, done) => concludeWith(ctx, done, evaluate(ctx, done)),
};

export const assessmentId = (persona: string): string => `assessment:${persona}`;
export const SYNTHESIS_ID = 'synthesis';

function nextCalls(ctx: ModeContext, done: readonly Step[], sequential: boolean): ModeNext {
  const ids = new Set(done.map((s) => s.id));
  const pending = ctx.plan.personas.filter((p) => !ids.has(assessmentId(p)));
  if (pending.length > 0) {
    const ask = sequential ? pending.slice(0, 1) : pending;
    return { kind: 'steps', steps: ask.map((p) => assessmentSpec(ctx, p, sequential ? assessmentsOf(done) : [])), concurrent: !sequential };
  }
  const settings = readModeSettings(ctx.plan.settings);
  if (settings.review === 'anonymous' && ctx.plan.personas.length > 1) {
    const reviewers = ctx.plan.personas.filter((p) => !ids.has(reviewId(p)));
    if (reviewers.length > 0) {
      const assessed = assessmentsOf(done).map((a) => ({ persona: a.persona, text: renderAssessment({ ...a, persona: '' }) }));
      return { kind: 'steps', steps: reviewers.map((p) => reviewStep(ctx, p, assessed)), concurrent: true };
    }
  }
  if (!ids.has(SYNTHESIS_ID)) return { kind: 'steps', steps: [synthesisSpec(ctx, evaluate(ctx, done))], concurrent: false };
  return { kind: 'conclude' };
}

/** A persona's assessment call; `earlier` assessments are shown as its context (sequential refinement, adaptive specialists). */
export function assessmentSpec(ctx: ModeContext, personaId: string, earlier: readonly Assessment[]): StepSpec {
  const parts = [ctx.briefing];
  if (earlier.length > 0)
    parts.push(
      `--- Earlier assessments by the council (refine them; say where you differ) ---\n${earlier.map(renderAssessment).join('\n\n')}`,
    );
  parts.push(ASSESSMENT_INSTRUCTION);
  return personaStep(ctx, {
    id: assessmentId(personaId),
    kind: 'assessment',
    persona: personaId,
    round: 1,
    prompt: parts.join('\n\n'),
    responseFormat: ASSESSMENT_SCHEMA,
    check: (reply) => {
      const a = parseAssessment(personaId, reply);
      return replyCheck(a.valid ? undefined : (a.problem ?? 'invalid'), assessmentRetryPrompt);
    },
  });
}

/** The synthesizer's call over an evaluation; `extra` lines tell it what the mode did beyond composing (groups, specialists). */
export function synthesisSpec(ctx: ModeContext, result: Evaluation, extra: readonly string[] = []): StepSpec {
  const prompt = [
    ctx.briefing,
    '--- The council assessed the task independently ---',
    ...result.assessments.map(renderAssessment),
    `Composed (${result.composed.strategy}): overall epistemic confidence ${result.composed.tiers?.overall ?? 'none (no valid assessment)'}; ${result.composed.flagged.length > 0 ? `flagged for disagreement: ${result.composed.flagged.join(', ')}` : 'no vector flagged'}.`,
    ...extra,
    `The council's verdicts have been arbitrated: ${result.arbitration.final_action} — ${result.arbitration.reasoning}`,
    'As the synthesizer, write the final proposal in Markdown: the recommendation, the reasons, the open risks, and the next steps.',
    'Do not request files now.',
  ].join('\n\n');
  return personaStep(ctx, { id: SYNTHESIS_ID, kind: 'synthesis', persona: ctx.plan.synthesizer, round: 1, prompt });
}

export function assessmentsOf(done: readonly Step[]): Assessment[] {
  return done.filter((s) => s.kind === 'assessment').map((s) => parseAssessment(s.persona, s.reply));
}

export interface Evaluation {
  readonly assessments: Assessment[];
  readonly standing: ReviewStanding | undefined;
  readonly composed: ComposedAssessment;
  readonly arbitration: ArbitrationResult;
}

/** COMPOSE and ARBITRATE over the finished steps (pure; the same steps give the same result). */
export function evaluate(ctx: ModeContext, done: readonly Step[], personas: readonly string[] = ctx.plan.personas): Evaluation {
  const settings = readModeSettings(ctx.plan.settings);
  // Every persona asked has an assessment: one that is missing counts as invalid (escalate).
  const assessments = personas.map((p) =>
    parseAssessment(p, done.findLast((s) => s.kind === 'assessment' && s.persona === p)?.reply ?? ''),
  );
  const reviews = done.filter((s) => s.kind === 'review');
  const standing = settings.review === 'anonymous' && reviews.length > 0 ? aggregateReviews(ctx.plan.personas, reviews) : undefined;
  const { weights, relevance } = councilWeights(ctx);
  const composed = composeAssessments({
    strategy: settings.composition,
    assessments,
    weighting: settings.weighting,
    relevance,
    threshold: settings.consensusThreshold,
    measure: settings.consensusMeasure,
    personaTiers: Object.fromEntries(personas.map((p) => [p, ctx.personas.get(p)?.tier])),
    ...(settings.priors ? { priors: settings.priors } : {}),
    ...(standing ? { standing: standing.weights } : {}),
  });
  const arbitrationWeights = Object.fromEntries(Object.entries(weights).map(([p, w]) => [p, w * (standing?.weights[p] ?? 1)]));
  const arbitration = arbitrate({
    strategy: ctx.plan.arbitration,
    verdicts: assessments.map(assessmentVerdict),
    weights: arbitrationWeights,
    relevance,
  });
  return { assessments, standing, composed, arbitration: withFlags(arbitration, composed, settings.consensusThreshold) };
}

/** Flagged vectors are open disagreement: a `proceed` over them fails closed to investigate. */
export function withFlags(arbitration: ArbitrationResult, composed: ComposedAssessment, threshold: number): ArbitrationResult {
  const flagged = composed.flagged.map((v) => {
    const c = composed.vectors[v];
    return `vector ${v}: the personas' scores spread ${c.spread} (std dev ${c.std_dev}; consensus threshold ${threshold})`;
  });
  return investigateOver(arbitration, flagged, `${flagged.length} vector(s) flagged by the consensus threshold`);
}

/** The conclusion of an assessment mode from its evaluation; a mode adds its own sections and audit facts. */
export function concludeWith(
  ctx: ModeContext,
  done: readonly Step[],
  result: Evaluation,
  extra: { sections?: readonly ArtifactSection[]; audit?: Readonly<Record<string, unknown>> } = {},
): Conclusion {
  const synthesis = done.find((s) => s.id === SYNTHESIS_ID);
  return {
    verdicts: result.assessments.map(assessmentVerdict),
    arbitration: result.arbitration,
    composed: result.composed,
    assessments: result.assessments,
    proposal: synthesis?.reply ?? '',
    sections: [
      { title: 'Assessments', markdown: assessmentsTable(result) },
      ...(extra.sections ?? []),
      { title: 'Composition and arbitration', markdown: compositionText(result) },
      { title: 'Composed rationale', markdown: rationaleText(result) },
      ...(result.standing ? [{ title: 'Anonymous review', markdown: standingTable(result.standing) }] : []),
      { title: 'Orchestration', markdown: orchestrationText(ctx, done, result) },
    ],
    attachments: [heatmap(result)],
    audit: {
      ...extra.audit,
      mode: ctx.plan.mode,
      composition: result.composed.strategy,
      flagged_vectors: [...result.composed.flagged],
      overall_confidence: result.composed.tiers?.overall ?? null,
      vector_agreement: vectorAgreement(result.composed),
      invalid_assessments: result.assessments.filter((a) => !a.valid).map((a) => a.persona),
      ...(result.standing ? { review_standing: result.standing.order } : {}),
    },
  };
}

export const fmt = (n: number | null | undefined): string => (n === null || n === undefined ? '—' : n.toFixed(2));

function assessmentsTable(r: Evaluation): string {
  const personas = r.assessments.map((a) => a.persona);
  return [
    '| Persona | Action | Confidence | Overall | Foundation | Comprehension | Execution | Rationale |',
    '|---|---|---|---|---|---|---|---|',
    ...r.assessments.map((a) => {
      const t = a.vectors ? tierConfidence(a.vectors) : undefined;
      const flag = a.valid ? '' : ' (fail-closed)';
      return `| \`${a.persona}\` | ${a.action}${flag} | ${a.confidence.toFixed(2)} | ${fmt(t?.overall)} | ${fmt(t?.foundation)} | ${fmt(t?.comprehension)} | ${fmt(t?.execution)} | ${tableCell(a.rationale)} |`;
    }),
    '',
    `| Vector | ${personas.map((p) => `\`${p}\``).join(' | ')} | **composed** | spread | std dev |`,
    `|---|${personas.map(() => '---|').join('')}---|---|---|`,
    ...VECTORS.map((v) => {
      const cells = personas.map((p) => fmt(r.assessments.find((a) => a.persona === p)?.vectors?.[v].score));
      const c = r.composed.vectors[v];
      return `| ${v} | ${cells.join(' | ')} | **${c.flagged ? 'flagged' : fmt(c.score)}** | ${c.spread.toFixed(2)} | ${c.std_dev.toFixed(2)} |`;
    }),
  ].join('\n');
}

export function compositionText(r: Evaluation): string {
  const { composed, arbitration } = r;
  return [
    `**COMPOSE (${composed.strategy}):** ${composed.method}.`,
    '',
    ...effectiveWeights(composed),
    '',
    ...composedFigures(r),
    ...(composed.flagged.length > 0
      ? ['', `Flagged for arbitration (disagreement at or over the threshold): ${composed.flagged.join(', ')}.`]
      : []),
    ...(composed.missing.length > 0
      ? [
          '',
          `Missing or malformed assessments (counted as escalate, left out of the scores): ${composed.missing.map((p) => `\`${p}\``).join(', ')}.`,
        ]
      : []),
    '',
    `**ARBITRATE (${arbitration.strategy}):** ${arbitration.final_action} — ${arbitration.reasoning}. Weights used: ${weightList(arbitration.weights_used)}. Consensus level ${(arbitration.consensus_level * 100).toFixed(0)}%.`,
  ].join('\n');
}

/** Tier confidence and agreement, or plainly that there is nothing to compute them from. */
function composedFigures(r: Evaluation): string[] {
  const { composed, arbitration } = r;
  const tiers = composed.tiers;
  const agreement = vectorAgreement(composed);
  if (!tiers || agreement === null)
    return [
      'No assessment was valid: there is no composed confidence and no vector agreement to report; every verdict counts as escalate.',
    ];
  return [
    `Tier confidence of the composed assessment: foundation ${fmt(tiers.foundation)}, comprehension ${fmt(tiers.comprehension)}, execution ${fmt(tiers.execution)}; overall ${fmt(tiers.overall)} (tier weights: foundation 0.35, comprehension 0.25, execution 0.25, engagement 0.15, discounted by uncertainty).`,
    '',
    `Support for the final action: ${supportWords(arbitration)} (${(actionSupport(arbitration).share * 100).toFixed(0)}%); vector agreement ${(agreement * 100).toFixed(0)}% (1 − mean spread).`,
  ];
}

/** Seed 001's composed_rationale: the personas' rationales concatenated, overall and per vector. */
export function rationaleText(r: Evaluation): string {
  if (r.composed.rationale === '') return 'No valid assessment, so no rationale to compose.';
  const valid = r.assessments.filter((a) => a.valid);
  return [
    "**Overall** (each valid assessment's rationale, in speaker order):",
    '',
    ...valid.map((a) => `- \`${a.persona}\`: ${a.rationale.replace(/\s+/g, ' ').trim()}`),
    '',
    '| Vector | Rationales |',
    '|---|---|',
    ...VECTORS.map((v) => `| ${v} | ${tableCell(r.composed.vectors[v].rationales.join(' · '), 1200)} |`),
  ].join('\n');
}

function orchestrationText(ctx: ModeContext, done: readonly Step[], r: Evaluation): string {
  const settings = readModeSettings(ctx.plan.settings);
  const sequential = ctx.plan.mode === 'sequential_refinement';
  return [
    `| Orchestration | Composition | Arbitration | Review | Concurrency |`,
    `|---|---|---|---|---|`,
    `| ${orchestrationName(ctx.plan.mode)} | ${r.composed.strategy} | ${r.arbitration.strategy} | ${settings.review} | ${sequential ? 1 : settings.concurrency} |`,
    '',
    callTimes(
      'Assessments',
      done.filter((s) => s.kind === 'assessment'),
    ),
  ].join('\n');
}

/** The seed's name of an assessment mode's orchestration strategy (`parallel` is its parallel_consensus). */
export function orchestrationName(mode: string): string {
  return mode === 'parallel' ? 'parallel_consensus' : mode;
}

/** The scores as a heat map: a row per vector, a column per persona (tall, to read on a phone), the composed scores first. */
function heatmap(r: Evaluation): ArtifactAttachment {
  const columns = ['composed', ...r.assessments.map((a) => a.persona)];
  const values = VECTORS.map((v) => [
    r.composed.vectors[v].score,
    ...r.assessments.map((a) => (a.vectors ? round(a.vectors[v].score) : null)),
  ]);
  const flagged = VECTORS.map((v) => [r.composed.vectors[v].flagged, ...r.assessments.map(() => false)]);
  return {
    suffix: '.heatmap.svg',
    alt: 'Heat map of the assessments: a row per vector, a column per persona, the composed scores first (flagged cells: disagreement sent to arbitration)',
    content: heatmapSvg({ title: `Epistemic vectors (${r.composed.strategy})`, rows: [...VECTORS], columns, values, flagged }),
  };
}
