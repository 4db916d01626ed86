import { stepInstruction } from '../prompts.js';
import { roundRobinStepId, type Step } from '../run-state.js';
import { arbitrateVerdicts, collectVerdicts, personaStep, renderStepForOthers, sinceLastSpoke, verdictStep } from './conversation.js';
import type { Conclusion, DeliberationMode, ModeContext, ModeNext, StepSpec } from './mode.js';

/**
 * `round_robin` (the default): for each round each persona speaks in speaker order, seeing what was
 * said and provided since it last spoke; then every persona gives a verdict; the verdicts are
 * arbitrated; the synthesizer writes the proposal.
 */
export const roundRobinMode: DeliberationMode = {
  name: 'round_robin',
  next(ctx, done) {
    const ids = new Set(done.map((s) => s.id));
    for (const slot of schedule(ctx)) {
      if (ids.has(slot.id)) continue;
      return { kind: 'steps', steps: [specFor(ctx, slot, done)], concurrent: false } satisfies ModeNext;
    }
    return { kind: 'conclude' };
  },
  conclude(ctx, done): Conclusion {
    const verdicts = collectVerdicts(done);
    const synthesis = done.find((s) => s.kind === 'synthesis');
    return {
      verdicts,
      arbitration: arbitrateVerdicts(ctx, verdicts),
      proposal: synthesis?.reply ?? '',
      sections: [],
      attachments: [],
      audit: {},
    };
  },
};

interface Slot {
  readonly id: string;
  readonly kind: 'turn' | 'verdict' | 'synthesis';
  readonly persona: string;
  readonly round: number;
}

/** The order of model calls: rounds × speakers, verdicts, synthesis. */
function schedule(ctx: ModeContext): Slot[] {
  const { plan } = ctx;
  const slots: Slot[] = [];
  const slot = (kind: Slot['kind'], persona: string, round: number): Slot => ({
    id: roundRobinStepId(kind, persona, round),
    kind,
    persona,
    round,
  });
  for (let round = 1; round <= plan.rounds; round++) for (const persona of plan.personas) slots.push(slot('turn', persona, round));
  for (const persona of plan.personas) slots.push(slot('verdict', persona, plan.rounds));
  slots.push(slot('synthesis', plan.synthesizer, plan.rounds));
  return slots;
}

function specFor(ctx: ModeContext, slot: Slot, done: readonly Step[]): StepSpec {
  let summary: string | undefined;
  if (slot.kind === 'synthesis') {
    const arbitration = arbitrateVerdicts(ctx, collectVerdicts(done));
    summary = `${arbitration.final_action} — ${arbitration.reasoning}`;
  }
  const prompt = composePrompt(ctx, slot, done, summary);
  const step = personaStep(ctx, { ...slot, prompt, history: done, knowledge: slot.kind === 'turn' });
  return slot.kind === 'verdict' ? verdictStep(step) : step;
}

/** The user message for a step: the briefing (first time) or what happened since the persona last spoke, then the instruction. */
function composePrompt(ctx: ModeContext, slot: Slot, done: readonly Step[], arbitrationSummary: string | undefined): string {
  return [
    ...sinceLastSpoke(ctx, slot.persona, done, renderStepForOthers),
    stepInstruction({ kind: slot.kind, round: slot.round, rounds: ctx.plan.rounds }, arbitrationSummary),
  ].join('\n\n');
}
