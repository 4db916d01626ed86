import { arbitrate, type ArbitrationResult } from '../arbitration.js';
import { rankRelevance } from '../relevance.js';
import type { Persona } from '../persona.js';
import type { ChatMessage } from '../chat.js';
import { orchestratorSystemPrompt, renderKnowledgeResult } from '../prompts.js';
import type { Step } from '../run-state.js';
import { parseVerdict, VERDICT_SCHEMA, verdictRetryPrompt, type Verdict } from '../verdict.js';
import type { ModeContext, ReplyCheck, StepSpec } from './mode.js';

/**
 * What every mode shares: how a persona's conversation is built (system prompt, bounded memory,
 * its own turns in this task, the new prompt), how a step is shown to the others, and how verdicts
 * are arbitrated.
 */

/**
 * The messages sent for a step, what is stable first so a provider's prompt cache can reuse the
 * prefix: the system prompt (instructions and persona, then its memory), then its earlier steps in
 * this task (the first carries the briefing), then the prompt. Each call of a persona extends its
 * previous one.
 */
export function personaMessages(ctx: ModeContext, persona: Persona, done: readonly Step[], prompt: string): ChatMessage[] {
  const memory = ctx.memories.get(persona.id)?.text ?? '';
  const system = orchestratorSystemPrompt(persona, ctx.maxRequestsPerTurn);
  const messages: ChatMessage[] = [{ role: 'system', content: memory ? `${system}\n\n${memory}` : system }];
  for (const s of done) {
    if (s.persona !== persona.id) continue;
    messages.push({ role: 'user', content: s.prompt }, { role: 'assistant', content: s.reply });
  }
  messages.push({ role: 'user', content: prompt });
  return messages;
}

/** One call of a persona as a mode words it; its conversation is built here from its `history`. */
export interface PersonaCall extends Omit<StepSpec, 'purpose' | 'messages' | 'knowledge'> {
  /** The finished steps whose turns of this persona its conversation carries; none: the call stands on its prompt alone. */
  readonly history?: readonly Step[];
  /** Whether knowledge requests in the reply are fulfilled (default: not). */
  readonly knowledge?: boolean;
}

/** The step a persona is asked: the call a mode words, the persona's conversation, the purpose its kind. */
export function personaStep(ctx: ModeContext, call: PersonaCall): StepSpec {
  const { history = [], knowledge = false, ...spec } = call;
  return { ...spec, purpose: spec.kind, knowledge, messages: personaMessages(ctx, personaOf(ctx, spec.persona), history, spec.prompt) };
}

/** A structured reply's check from its reading: accepted (no problem), or the problem and the prompt that asks once again. */
export function replyCheck(problem: string | undefined, retryPrompt: (problem: string) => string): ReplyCheck {
  return problem === undefined ? { ok: true } : { ok: false, problem, retryPrompt: retryPrompt(problem) };
}

/**
 * What a persona is told before its next step: the briefing the first time, then everything since
 * it last spoke (`render` shows a step to the others). A knowledge result goes to the next speaker
 * (seed 004); when no other persona has taken a turn since the request — a lone persona, a
 * specialist handed the next turn again — the next speaker is the one who asked, so what its own
 * last step was provided comes first: a requested file always reaches someone.
 */
export function sinceLastSpoke(ctx: ModeContext, persona: string, done: readonly Step[], render: (step: Step) => string[]): string[] {
  let lastOwn = -1;
  done.forEach((s, i) => {
    if (s.persona === persona) lastOwn = i;
  });
  if (lastOwn === -1) {
    const seen = done.flatMap(render);
    return [ctx.briefing, ...(seen.length > 0 ? [`--- Since you last spoke ---\n${seen.join('\n\n')}`] : [])];
  }
  const after = done.slice(lastOwn + 1);
  const heardByAnother = after.some((s) => s.persona !== persona && (s.kind === 'turn' || s.kind === 'item'));
  const own = heardByAnother ? [] : (done[lastOwn]?.knowledge ?? []).map((k) => renderKnowledgeResult(k, persona));
  const seen = [...own, ...after.flatMap(render)];
  return seen.length > 0 ? [`--- Since you last spoke ---\n${seen.join('\n\n')}`] : [];
}

/** A finished step as the next speakers see it: the reply, then every knowledge result it got. */
export function renderStepForOthers(step: Step): string[] {
  const label = step.kind === 'turn' ? step.persona : `${step.persona} (${step.kind})`;
  return [`[${label}, round ${step.round}]\n${step.reply}`, ...step.knowledge.map((k) => renderKnowledgeResult(k, step.persona))];
}

export function personaOf(ctx: ModeContext, id: string): Persona {
  const persona = ctx.personas.get(id);
  if (!persona) throw new Error(`persona "${id}" is not loaded`);
  return persona;
}

/** A verdict step: strict JSON, asked again once with the problem quoted. */
export function verdictStep(base: Omit<StepSpec, 'kind' | 'purpose' | 'responseFormat' | 'check' | 'knowledge'>): StepSpec {
  return {
    ...base,
    kind: 'verdict',
    purpose: 'verdict',
    responseFormat: VERDICT_SCHEMA,
    knowledge: false,
    check: (reply) => {
      const verdict = parseVerdict(base.persona, reply);
      return replyCheck(verdict.valid ? undefined : (verdict.problem ?? 'invalid'), verdictRetryPrompt);
    },
  };
}

export function collectVerdicts(steps: readonly Step[]): Verdict[] {
  return steps.filter((s) => s.kind === 'verdict').map((s) => parseVerdict(s.persona, s.reply));
}

type CouncilWeights = { readonly weights: Readonly<Record<string, number>>; readonly relevance: Readonly<Record<string, number>> };

/**
 * Each context's weights, worked out once: they depend only on its (fixed) plan, personas and task,
 * and the relevance ranking builds a search index, which an assessment mode's evaluation asked for
 * again at every step, and a hierarchical one for every group, at the run's end (where it held up
 * the next run).
 */
const weightsByContext = new WeakMap<ModeContext, CouncilWeights>();

/**
 * Persona id → configured weight, and → relevance to the task: the mediator's rating on a real route
 * where it gave one, else BM25 over the persona's declared field and its common words (relevance.ts).
 */
export function councilWeights(ctx: ModeContext): CouncilWeights {
  const known = weightsByContext.get(ctx);
  if (known) return known;
  const weights: Record<string, number> = {};
  for (const id of ctx.plan.personas) weights[id] = ctx.personas.get(id)?.weight ?? 1;
  const profiles = ctx.plan.personas.map((id) => ctx.personas.get(id) ?? { id, focus_domains: [] });
  const relevance = { ...rankRelevance(profiles, ctx.task), ...ctx.relevance };
  const worked = Object.freeze({ weights: Object.freeze(weights), relevance: Object.freeze(relevance) });
  weightsByContext.set(ctx, worked);
  return worked;
}

export function arbitrateVerdicts(ctx: ModeContext, verdicts: readonly Verdict[]): ArbitrationResult {
  return arbitrate({ strategy: ctx.plan.arbitration, verdicts, ...councilWeights(ctx) });
}

/** Text on one line, cut to `max` characters when given. */
export function clip(text: string, max = Number.POSITIVE_INFINITY): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** Text as one cell of a Markdown table: on one line, cut to `max`, its pipes escaped. */
export function tableCell(text: string, max = 200): string {
  return clip(text, max).replace(/\|/g, '\\|');
}

/** How long a set of calls took: their model time, and the wall time from the first start to the last end. */
export function callTimes(label: string, steps: readonly Step[]): string {
  const start = Math.min(...steps.map((s) => Date.parse(s.started_at)));
  if (!Number.isFinite(start)) return `${label}: none finished.`;
  const end = Math.max(...steps.map((s) => Date.parse(s.started_at) + s.duration_ms));
  const model = steps.reduce((n, s) => n + s.duration_ms, 0);
  return `${label}: ${steps.length} calls, ${(model / 1000).toFixed(2)} s of model time in ${((end - start) / 1000).toFixed(2)} s of wall time.`;
}
