import { renderKnowledgeResult, stepInstruction } from '../prompts.js';
import type { Step } from '../run-state.js';
import { parseVerdict, type Verdict } from '../verdict.js';
import { clip, personaStep, sinceLastSpoke, tableCell, verdictStep } from './conversation.js';
import type { Conclusion, DeliberationMode, ModeContext, ModeNext, StepSpec } from './mode.js';
import { GUARDRAIL_REASONS, loopEvents } from './supervisor-events.js';
import { arbitrateWithReviewer, reviewerSection, reviewerStep, reviewerStepId, reviewerVerdictOf } from './reviewer-gate.js';
import { readModeSettings } from './settings.js';
import {
  checkDecision,
  DECISION_CONTRACT,
  DECISION_SCHEMA,
  decisionStepId,
  describeGuardrail,
  evaluateLoop,
  loopTurnId,
  type Iteration,
  type LoopRules,
  type LoopState,
} from './supervisor-loop.js';

/**
 * `supervisor` (seed 002): a supervisor persona decides, as strict JSON, whether to delegate the next
 * turn to one specialist, respond, or stop; control returns to it after each specialist turn, and it
 * sees the recent delegation history. Guardrails end the loop loudly (`guardrail_stop`); a decision
 * that cannot be read even when asked again pauses the run (fail closed). Then, as in every mode,
 * every persona gives a verdict, the reviewer gate (if named) critiques the result, the verdicts are
 * arbitrated and the synthesizer writes the proposal.
 */
export const supervisorMode: DeliberationMode = {
  name: 'supervisor',
  next(ctx, done): ModeNext {
    const loop = loopOf(ctx, done);
    const pending = loop.pending;
    if (pending?.kind === 'decision') return one(decisionSpec(ctx, loop, done, pending.n));
    if (pending?.kind === 'turn') return one(turnSpec(ctx, done, pending.n, pending.specialist, pending.instruction));
    if (pending?.kind === 'hold') {
      return {
        kind: 'hold',
        call: 'decision',
        reason: 'SUPERVISOR_DECISION_INVALID',
        message: `the supervisor's decision in iteration ${pending.n} could not be read, even when asked again (${pending.problem}); nothing was delegated. Continue to end the loop here and go on to the verdicts, or stop`,
        details: { iteration: pending.n, supervisor: rulesOf(ctx).supervisor },
      };
    }
    const ids = new Set(done.map((s) => s.id));
    const round = 0; // after the loop: not an iteration
    for (const persona of ctx.plan.personas) {
      if (!ids.has(`verdict:${persona}`)) return one(verdictSpec(ctx, loop, done, persona, round));
    }
    const { reviewer } = readModeSettings(ctx.plan.settings);
    if (reviewer && !ids.has(reviewerStepId(reviewer)))
      return one(reviewerStep(ctx, reviewer, { title: 'The supervisor loop', text: loopTranscript(loop) }, round));
    if (!ids.has('synthesis')) return one(synthesisSpec(ctx, loop, done, round));
    return { kind: 'conclude' };
  },
  conclude(ctx, done): Conclusion {
    const loop = loopOf(ctx, done);
    const verdicts = councilVerdicts(done);
    const review = reviewerVerdictOf(done);
    const end = loop.end;
    return {
      verdicts: review ? [...verdicts, review] : verdicts,
      arbitration: arbitrateWithReviewer(ctx, verdicts, review),
      proposal: done.find((s) => s.id === 'synthesis')?.reply ?? '',
      sections: [
        { title: 'Supervisor loop', markdown: loopSection(ctx, loop) },
        ...(review ? [{ title: 'Reviewer gate', markdown: reviewerSection(review) }] : []),
      ],
      attachments: [],
      audit: {
        mode: 'supervisor',
        supervisor: rulesOf(ctx).supervisor,
        iterations: loop.iterations.length,
        delegations: loop.delegations,
        loop_status: end?.kind ?? 'running',
        ...(end?.kind === 'guardrail_stop' ? { guardrail: end.limit, threshold: end.threshold } : {}),
        ...(end?.kind === 'stopped' ? { stopped_by: end.by } : {}),
        ...(review ? { reviewer: review.reviewer, reviewer_action: review.action } : {}),
      },
      notes: [`supervisor loop: ${loopStatusLine(loop)}`],
      ...(end?.kind === 'guardrail_stop'
        ? { guardrail: { reason: GUARDRAIL_REASONS[end.limit], note: `supervisor loop: guardrail_stop — ${describeGuardrail(end)}` } }
        : {}),
    };
  },
  onStepRecorded: (ctx, done, step) => loopEvents(rulesOf(ctx).supervisor, loopOf(ctx, done), step),
};

const one = (spec: StepSpec): ModeNext => ({ kind: 'steps', steps: [spec], concurrent: false });

function rulesOf(ctx: ModeContext): LoopRules {
  const settings = readModeSettings(ctx.plan.settings);
  const supervisor = settings.supervisor ?? ctx.plan.personas[0] ?? '';
  return {
    supervisor,
    specialists: ctx.plan.personas.filter((p) => p !== supervisor),
    maxIterations: settings.maxIterations,
    unreadableApproved: ctx.approved?.has('SUPERVISOR_DECISION_INVALID') ?? false,
  };
}

function loopOf(ctx: ModeContext, done: readonly Step[]): LoopState {
  return evaluateLoop(rulesOf(ctx), done);
}

/** Verdict steps of the council (the reviewer's is read apart). */
function councilVerdicts(done: readonly Step[]): Verdict[] {
  return done.filter((s) => s.kind === 'verdict' && s.id.startsWith('verdict:')).map((s) => parseVerdict(s.persona, s.reply));
}

/** What happened since `persona` last spoke, for its next prompt: specialist turns and their knowledge, verdicts; decisions are shown as delegations. */
function since(ctx: ModeContext, persona: string, done: readonly Step[]): string[] {
  return sinceLastSpoke(ctx, persona, done, renderForOthers);
}

function renderForOthers(step: Step): string[] {
  if (step.kind === 'decision') return []; // the supervisor's JSON is its own; others see the delegation in their instruction
  const label = step.kind === 'turn' ? `${step.persona}, iteration ${step.round}` : `${step.persona} (${step.kind})`;
  return [`[${label}]\n${step.reply}`, ...step.knowledge.map((k) => renderKnowledgeResult(k, step.persona))];
}

function decisionSpec(ctx: ModeContext, loop: LoopState, done: readonly Step[], n: number): StepSpec {
  const rules = rulesOf(ctx);
  const left = rules.maxIterations - loop.delegations;
  const specialists = rules.specialists.map((id) => `${id} (${ctx.personas.get(id)?.name ?? id})`).join(', ');
  const last = loop.iterations.at(-1);
  const prompt = [
    ...since(ctx, rules.supervisor, done),
    `--- Delegation history (most recent last) ---\n${historyLines(loop).join('\n') || '(none yet: this is the first decision)'}`,
    [
      `You are the supervisor of this council. Iteration ${n}: decide what happens next. Delegations used: ${loop.delegations} of ${rules.maxIterations}.`,
      rules.specialists.length > 0
        ? `Specialists you may delegate to: ${specialists}.`
        : 'There are no specialists to delegate to: answer "stop" or "respond".',
      ...(left <= 0 ? ['No delegations are left: answer "stop" (or "respond").'] : []),
      ...(last?.outcome === 'invalid_target'
        ? [`Your last decision could not be followed: ${last.problem ?? 'invalid target'}. Name one of the specialists above.`]
        : []),
      ...(last?.noOp ? [`The last turn (${last.specialist}) brought nothing new; another such turn ends the loop.`] : []),
      'Hand the same specialist two turns in a row only when its last turn left a specific gap; stop when the specialists have covered the task.',
      `Reply with ONE JSON object and nothing else: ${DECISION_CONTRACT}`,
      'delegate = hand the next turn to one specialist (control comes back to you after it); respond = answer yourself and end the loop; stop = the work is done, end the loop.',
    ].join('\n'),
  ].join('\n\n');
  const call = { id: decisionStepId(n), kind: 'decision', persona: rules.supervisor, round: n, prompt, history: done } as const;
  return personaStep(ctx, { ...call, responseFormat: DECISION_SCHEMA, check: checkDecision });
}

/** The last six iterations, one line each, so the supervisor does not ping-pong. */
function historyLines(loop: LoopState): string[] {
  return loop.iterations.slice(-6).map((it) => `iteration ${it.n}: ${describeIteration(it)}`);
}

function describeIteration(it: Iteration): string {
  const instruction = it.read?.instruction ? ` — "${clip(it.read.instruction, 120)}"` : '';
  switch (it.outcome) {
    case 'delegated': {
      if (!it.turn) return `delegated to ${it.specialist}${instruction} (in progress)`;
      const knowledge = it.turn.knowledge.length > 0 ? `, ${it.turn.knowledge.length} knowledge request(s)` : '';
      return `delegated to ${it.specialist}${instruction} → ${it.noOp ? 'no-op turn (nothing new)' : `${it.turn.reply.length} characters${knowledge}`}`;
    }
    case 'invalid_target':
      return `invalid delegation (${it.problem ?? 'invalid target'}); nothing was delegated`;
    case 'over_limit':
      return `delegation to ${it.specialist} refused: max_iterations reached`;
    case 'unreadable':
      return `decision could not be read (${it.problem ?? 'unreadable'})`;
    case 'stop':
    case 'respond':
      return `${it.outcome}${instruction}`;
  }
}

function turnSpec(ctx: ModeContext, done: readonly Step[], n: number, specialist: string, instruction: string): StepSpec {
  const rules = rulesOf(ctx);
  const supervisorName = ctx.personas.get(rules.supervisor)?.name ?? rules.supervisor;
  const prompt = [
    ...since(ctx, specialist, done),
    [
      `--- Iteration ${n} (at most ${rules.maxIterations}): the supervisor, ${supervisorName}, hands this turn to you ---`,
      `Instruction: ${instruction || '(none given: use your judgement on the task)'}`,
      'Give your analysis or next step; control returns to the supervisor after your turn.',
    ].join('\n'),
  ].join('\n\n');
  return personaStep(ctx, {
    id: loopTurnId(n, specialist),
    kind: 'turn',
    persona: specialist,
    round: n,
    prompt,
    history: done,
    knowledge: true,
  });
}

function verdictSpec(ctx: ModeContext, loop: LoopState, done: readonly Step[], persona: string, round: number): StepSpec {
  const prompt = [
    ...since(ctx, persona, done),
    `The supervisor loop is over: ${loopStatusLine(loop)}.`,
    stepInstruction({ kind: 'verdict', round, rounds: round }),
  ].join('\n\n');
  return verdictStep(personaStep(ctx, { id: `verdict:${persona}`, kind: 'verdict', persona, round, prompt, history: done }));
}

function synthesisSpec(ctx: ModeContext, loop: LoopState, done: readonly Step[], round: number): StepSpec {
  const persona = ctx.plan.synthesizer;
  const arbitration = arbitrateWithReviewer(ctx, councilVerdicts(done), reviewerVerdictOf(done));
  const prompt = [
    ...since(ctx, persona, done),
    `The supervisor loop is over: ${loopStatusLine(loop)}.`,
    stepInstruction({ kind: 'synthesis', round, rounds: round }, `${arbitration.final_action} — ${arbitration.reasoning}`),
  ].join('\n\n');
  return personaStep(ctx, { id: 'synthesis', kind: 'synthesis', persona, round, prompt, history: done });
}

/** One line: how the loop ended. */
export function loopStatusLine(loop: LoopState): string {
  const end = loop.end;
  const count = `${loop.delegations} delegation(s) in ${loop.iterations.length} iteration(s)`;
  if (!end) return `running (${count})`;
  if (end.kind === 'guardrail_stop') return `guardrail_stop — ${describeGuardrail(end)}; ${count}`;
  if (end.by === 'person')
    return `stopped — the decision of iteration ${end.iteration} could not be read and a person chose to go on; ${count}`;
  return `stopped by the supervisor (${end.by}) at iteration ${end.iteration}; ${count}`;
}

/** The loop as the reviewer reads it: each iteration's delegation and the specialist's reply. */
function loopTranscript(loop: LoopState): string {
  return loop.iterations
    .map((it) => {
      const head = `Iteration ${it.n}: ${describeIteration(it)}`;
      return it.turn ? `${head}\n[${it.specialist}]\n${it.turn.reply}` : head;
    })
    .join('\n\n');
}

function loopSection(ctx: ModeContext, loop: LoopState): string {
  const rules = rulesOf(ctx);
  const end = loop.end;
  const rows = loop.iterations.map((it) => {
    const decision = it.read ? it.read.action : 'unreadable';
    const what =
      it.outcome === 'invalid_target'
        ? `invalid target: ${it.problem ?? ''}`
        : it.outcome === 'over_limit'
          ? `refused: max_iterations (${rules.maxIterations}) reached`
          : it.outcome === 'unreadable'
            ? `could not be read: ${it.problem ?? ''}`
            : it.turn
              ? `${it.turn.reply.length} characters${it.turn.knowledge.length > 0 ? `, ${it.turn.knowledge.length} knowledge request(s)` : ''}${it.noOp ? ' — **no-op**' : ''}`
              : it.specialist
                ? 'not finished'
                : '—';
    return `| ${it.n} | ${decision} | ${it.specialist ? `\`${it.specialist}\`` : '—'} | ${tableCell(it.read?.instruction ?? '') || '—'} | ${tableCell(what) || '—'} |`;
  });
  const status = !end
    ? 'running'
    : end.kind === 'guardrail_stop'
      ? `**guardrail_stop** — ${describeGuardrail(end)}`
      : `**stopped** — ${loopStatusLine(loop)}`;
  return [
    `Supervisor: \`${rules.supervisor}\` · specialists: ${rules.specialists.map((s) => `\`${s}\``).join(', ') || 'none'} · max_iterations ${rules.maxIterations} · delegations ${loop.delegations}.`,
    '',
    '| Iteration | Decision | Specialist | Instruction / response | Turn |',
    '|---|---|---|---|---|',
    ...rows,
    '',
    `Loop status: ${status}.`,
    '',
    "_Audit events: `LOOP_ITERATION_STARTED`, `LOOP_ITERATION_STOPPED` and `LOOP_GUARDRAIL_STOP` are seed 002's `loop.iteration_started`, `loop.iteration_stopped` and `loop.guardrail_stop` (audit event codes are upper-case)._",
  ].join('\n');
}
