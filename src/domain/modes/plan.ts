import { z } from 'zod';
import type { WorkItem } from '../command-file.js';
import type { RunPlan, Step } from '../run-state.js';
import { jsonSchemaOf, readStructured } from '../structured-reply.js';
import { parseVerdict } from '../verdict.js';
import { personaStep, replyCheck, tableCell } from './conversation.js';
import type { ArtifactSection, Conclusion, DeliberationMode, ModeContext, ModeNext, StepSpec } from './mode.js';
import { readModeSettings } from './settings.js';
import { workItemsMode, workItemsProposal } from './work-items.js';

/**
 * `plan` (seed 003's Stage-7 agent: "produces strict JSON plans … supports replanning"): a planner
 * persona writes the plan as strict JSON — work items, each for one council member — validated
 * against a schema; the items then run exactly as a command's `work_items` do (each its agent run
 * directly, code-first). When an item fails — its own verdict does not say proceed — it is replanned
 * deterministically, with no model call: the same goal goes to the next council member in speaking
 * order who has not tried it, with the failed attempt's verdict as its input, at most `max_replans`
 * times per item. A plan that does not read, even when asked again with the problem quoted, falls
 * back deterministically to one item: the whole task, for the planner.
 */
export const planMode: DeliberationMode = {
  name: 'plan',
  next(ctx, done): ModeNext {
    if (!done.some((s) => s.id === PLAN_STEP)) return { kind: 'steps', steps: [planSpec(ctx)], concurrent: false };
    return workItemsMode.next(withItems(ctx, done), done);
  },
  conclude(ctx, done): Conclusion {
    const worked = planWork(ctx.plan, ctx.task, done);
    const base = workItemsMode.conclude(withItems(ctx, done), done);
    const section: ArtifactSection = { title: 'Plan', markdown: planSection(worked) };
    return {
      ...base,
      sections: [section, ...base.sections],
      audit: {
        ...base.audit,
        mode: 'plan',
        plan: {
          planner: worked.planner,
          items: worked.planned.length,
          fallback: worked.fallback,
          replans: worked.attempts.length - worked.planned.length,
        },
      },
      notes: [`plan: ${worked.planned.length} item(s) by ${worked.planner}${worked.fallback ? ' (fallback: the plan did not read)' : ''}`],
    };
  },
  // The items as the planner wrote them (a replan keeps an item's goal and expected output, and is made
  // with no model call); the fallback's one item is the task itself, already read.
  modelItems(ctx, done) {
    const planned = done.find((s) => s.id === PLAN_STEP);
    if (!planned) return undefined;
    const worked = planWork(ctx.plan, ctx.task, done);
    return worked.fallback ? undefined : { by: worked.planner, items: worked.planned, writtenAt: planned.started_at };
  },
};

export const PLAN_STEP = 'plan';

const itemId = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$/, 'must be letters, digits, - and _ (at most 32)');
/** One planned item: the work, the council member who does it, what it should give back. */
const PlannedItem = z.strictObject({
  id: itemId,
  assigned_agent: z.string().trim().toLowerCase(),
  goal: z.string().trim().min(1).max(2_000),
  expected_output: z.string().trim().max(1_000),
});
/** The plan a planner writes: strict JSON, every key required. */
export const WorkPlan = z.strictObject({
  items: z.array(PlannedItem).min(1, 'a plan needs at least one item').max(8, 'at most 8 items'),
  rationale: z.string().trim().max(1_000),
});
export type WorkPlan = z.infer<typeof WorkPlan>;
export const WORK_PLAN_SCHEMA = { name: 'work_plan', schema: jsonSchemaOf(WorkPlan) };

/** The plan as read, checked against the council: ids unique, every item for a council member. */
export function readPlan(reply: string, council: readonly string[]): { ok: true; plan: WorkPlan } | { ok: false; problem: string } {
  const read = readStructured(reply, WorkPlan);
  if (!read.ok) return { ok: false, problem: read.error };
  const ids = read.value.items.map((i) => i.id);
  const twice = ids.find((id, i) => ids.indexOf(id) !== i);
  if (twice) return { ok: false, problem: `items.id: "${twice}" is used twice` };
  const stranger = read.value.items.find((i) => !council.includes(i.assigned_agent));
  if (stranger)
    return {
      ok: false,
      problem: `items.assigned_agent: "${stranger.assigned_agent}" is not a member of this council (${council.join(', ')})`,
    };
  return { ok: true, plan: read.value };
}

function planSpec(ctx: ModeContext): StepSpec {
  const members = ctx.plan.personas.map((id) => {
    const p = ctx.personas.get(id);
    return `- ${id} (${p?.name ?? id})${p && p.focus_domains.length > 0 ? `: ${p.focus_domains.join(', ')}` : ''}`;
  });
  const prompt = [
    ctx.briefing,
    [
      '--- Plan the work ---',
      'You are the planner. Split the task into work items, each done by one council member on its own (it sees the task and its item, nothing of the other items); their outputs are merged in your order.',
      `Council members:\n${members.join('\n')}`,
      'Reply with ONE JSON object and nothing else:',
      '{"items": [{"id": "<short id: letters, digits, - and _>", "assigned_agent": "<a council member id>", "goal": "<what this item must achieve>", "expected_output": "<what it should give back>"}], "rationale": "<one line: why this split>"}',
      'At most 8 items; every item assigned to a council member above.',
    ].join('\n'),
  ].join('\n\n');
  return personaStep(ctx, {
    id: PLAN_STEP,
    kind: 'plan',
    persona: plannerOf(ctx.plan),
    round: 1,
    prompt,
    responseFormat: WORK_PLAN_SCHEMA,
    check: (reply) => {
      const read = readPlan(reply, ctx.plan.personas);
      return replyCheck(
        read.ok ? undefined : read.problem,
        (problem) => `That was not a valid plan (${problem}). Reply with ONE JSON object and nothing else, as asked.`,
      );
    },
  });
}

/** The planner: `config.planner`, else the first speaker. */
function plannerOf(plan: Pick<RunPlan, 'personas' | 'settings'>): string {
  return readModeSettings(plan.settings).planner ?? plan.personas[0] ?? '';
}

/** What the plan came to: the planned items, every attempt at them (replans included), and the attempt that stands for each. */
export interface PlanWork {
  readonly planner: string;
  readonly fallback?: string;
  readonly rationale: string;
  readonly planned: readonly WorkItem[];
  readonly attempts: readonly WorkItem[];
  readonly current: readonly WorkItem[];
}

/**
 * The work the plan step and the finished items make (pure: the same steps give the same work). A
 * failed attempt — its own verdict not proceed — is replanned deterministically: the next council
 * member in speaking order after the ones who tried, with the attempt's verdict as its input, while
 * the item has replans left (`max_replans`) and someone has not tried it.
 */
export function planWork(plan: Pick<RunPlan, 'personas' | 'settings'>, task: string, done: readonly Step[]): PlanWork {
  const planner = plannerOf(plan);
  const reply = done.find((s) => s.id === PLAN_STEP)?.reply ?? '';
  const read = readPlan(reply, plan.personas);
  const planned: WorkItem[] = read.ok
    ? read.plan.items.map((i) => ({ ...i, inputs: {} }))
    : [{ id: 'task', assigned_agent: planner, goal: task, inputs: {}, expected_output: {} }];
  const { maxReplans } = readModeSettings(plan.settings);
  const attempts: WorkItem[] = [];
  const current = planned.map((item) => {
    let attempt = item;
    attempts.push(attempt);
    const tried = [item.assigned_agent];
    for (let n = 2; n <= maxReplans + 1; n++) {
      const verdict = done.find((s) => s.id === `item:${attempt.id}:verdict`);
      const said = verdict ? parseVerdict(verdict.persona, verdict.reply) : undefined;
      if (!said || said.action === 'proceed') break;
      const next = nextAgent(plan.personas, tried);
      if (!next) break;
      tried.push(next);
      const previous = { by: attempt.assigned_agent, verdict: said.action, rationale: said.rationale };
      attempt = { ...item, id: `${item.id}.r${n}`, assigned_agent: next, inputs: { previous_attempt: previous } };
      attempts.push(attempt);
    }
    return attempt;
  });
  return {
    planner,
    ...(read.ok ? {} : { fallback: read.problem }),
    rationale: read.ok ? read.plan.rationale : '',
    planned,
    attempts,
    current,
  };
}

/** The council member after the last one who tried, in speaking order (wrapping), who has not tried yet. */
function nextAgent(council: readonly string[], tried: readonly string[]): string | undefined {
  const from = council.indexOf(tried.at(-1) ?? '');
  for (let k = 1; k <= council.length; k++) {
    const candidate = council[(from + k) % council.length];
    if (candidate !== undefined && !tried.includes(candidate)) return candidate;
  }
  return undefined;
}

/** The context the work items run in: the plan's current items as the command's (one per item set, for the items' own caches). */
const planned = new WeakMap<ModeContext, Map<string, ModeContext>>();
function withItems(ctx: ModeContext, done: readonly Step[]): ModeContext {
  const { current } = planWork(ctx.plan, ctx.task, done);
  const key = JSON.stringify(current.map((i) => [i.id, i.assigned_agent]));
  const known = planned.get(ctx)?.get(key);
  if (known) return known;
  const command = ctx.command ?? { task_description: ctx.task, input_artifacts: [], config: {} };
  const next: ModeContext = { ...ctx, command: { ...command, work_items: [...current] } };
  const byKey = planned.get(ctx) ?? new Map<string, ModeContext>();
  byKey.set(key, next);
  planned.set(ctx, byKey);
  return next;
}

/** The run's final proposal in `plan` mode: its current items' output, as work items give it. */
export function planProposal(plan: Pick<RunPlan, 'personas' | 'settings'>, task: string, done: readonly Step[]): string {
  return workItemsProposal(planWork(plan, task, done).current, done);
}

function planSection(w: PlanWork): string {
  const replans = w.attempts.filter((a) => a.id.includes('.r'));
  return [
    w.fallback
      ? `The plan of \`${w.planner}\` did not read, even when asked again (${w.fallback}): the deterministic fallback is one item, the whole task, for the planner.`
      : `\`${w.planner}\` planned ${w.planned.length} item(s): ${w.rationale || '(no rationale given)'}`,
    '',
    '| Item | Assigned to | Goal |',
    '|---|---|---|',
    ...w.planned.map((i) => `| \`${i.id}\` | \`${i.assigned_agent}\` | ${tableCell(i.goal)} |`),
    '',
    replans.length > 0
      ? `Replanned (deterministic: the next council member who had not tried it, no model call): ${replans.map((r) => `\`${r.id}\` → \`${r.assigned_agent}\``).join(', ')}.`
      : 'No item needed a replan.',
  ].join('\n');
}
