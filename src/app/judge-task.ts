import { auditEvent, type AuditDetails, type AuditEvent } from '../domain/audit.js';
import type { CommandFile } from '../domain/command-file.js';
import { floorRecord } from '../domain/floor/record.js';
import { evaluateGates, type GateFacts, type GateResult } from '../domain/gates.js';
import type { DeliberationMode, ModeContext, ModelItems } from '../domain/modes/mode.js';
import type { StartedRun } from '../domain/ports.js';
import type { RunEvent } from '../domain/run-machine.js';
import { decideRun, type Ending } from '../domain/run/policy.js';
import { approvedReasons, type RunPlan } from '../domain/run-state.js';
import { isSecretCategory } from '../domain/sensitive/categories.js';
import type { SensitivePlace } from '../domain/stop-explanation.js';
import { explainGateStop } from '../domain/stop-explanation.js';
import { checkCommand, type CommandCheck } from './check-command.js';
import type { PreparedModels } from './prepare-models.js';
import type { RunDeps, RunOutcome } from './run-deps.js';
import { askMediator, uniteAdvice } from './run-records.js';

/** Ends the run as the policy decided. */
export type Settle = (ending: Ending, message: string, details?: AuditDetails) => Promise<RunOutcome>;

/** What judging the task reads: the command checked, the models and plan, the task's facts (the mediator's advice joins them). */
export interface Judged {
  readonly run: StartedRun;
  readonly deps: RunDeps;
  readonly command: CommandFile;
  readonly check: CommandCheck;
  readonly models: PreparedModels;
  readonly plan: RunPlan;
  readonly facts: { current: GateFacts };
  readonly settle: Settle;
}

/**
 * The task judged before the council sees it: the mediator's findings join the rules', then the
 * gates decide. Ends the run (returns its outcome) when the classification fails or a gate does not say RUN.
 */
export async function judgeTask(judged: Judged): Promise<RunOutcome | undefined> {
  const { run, deps, check, facts } = judged;
  const asked = await askMediator(judged);
  if ('ending' in asked) return judged.settle(asked.ending, asked.message, asked.details);
  const { advice, record, classification } = asked;
  const classifiedBy = classification?.model ?? run.state.classification?.model;
  if (advice) facts.current = uniteAdvice(facts.current, advice, { model: classifiedBy, accept: deps.config.floor.accept });
  const gates = facts.current === check.gathered.facts ? check.gates : evaluateGates(facts.current);
  // The mediator's advice and its record (when it was asked just now: like a step's reply, the
  // classification counts once it is on disk, and a crash before that asks again), each gate's
  // record, and the plan they let through: one durable write.
  const kept = { ...(record && advice ? { advice } : {}), ...(record && classification ? { classification } : {}) };
  await recordGates({ run, plan: judged.plan, gates, facts: facts.current, kept, records: record ? [record] : [] });
  if (gates.decision.decision === 'RUN') return undefined;
  const detail = explainGateStop(facts.current, gates.decision, check.gathered.places, isSecretCategory);
  return judged.settle(decideRun({ kind: 'gate', decision: gates.decision }), detail);
}

/** The gates' records and decisions, the floor's reading and the plan they let through: one durable write. */
async function recordGates(options: {
  run: StartedRun;
  plan: RunPlan;
  gates: GateResult;
  facts: GateFacts;
  kept?: Pick<Extract<RunEvent, { type: 'planned' }>, 'advice' | 'classification'>;
  records?: readonly AuditEvent[];
  marks?: AuditDetails;
}): Promise<void> {
  const { gates, facts } = options;
  await options.run.commit({
    event: {
      type: 'planned',
      plan: options.plan,
      trail: gates.outcomes.filter((g) => !g.skipped).map((g) => g.decision),
      ...options.kept,
      ...(facts.floor ? { floor: floorRecord(facts.floor.reading, facts.floor.verdict) } : {}),
    },
    records: [
      ...(options.records ?? []),
      ...gates.outcomes.map((g) => auditEvent('GATE', g.decision, { ...g.details, skipped: g.skipped, ...options.marks })),
    ],
  });
}

/**
 * The floor over the work items a model wrote (`plan`'s plan), before any persona works on one: the
 * command with those items as its `work_items` goes through the same check and gates as a command
 * that carries them (the same reading of goals and expected outputs, the same detector, the same
 * acceptances, the mediator's advice on the task), each gate recorded with who wrote the items. A
 * gate that does not say RUN ends the run as the policy decides for a gate: a pause names the
 * planner and what the floor found, and a person's `continue` clears it as it clears a command's;
 * the plan is in the checkpoint, so the run goes on with the plan as judged, with no new model call.
 *
 * Returns what the engine calls before each turn: it judges each set of items once per process.
 */
export function modelItemsFloor(options: ItemsJudged): () => Promise<RunOutcome | undefined> {
  const { run, ctx, mode } = options;
  let judged: string | undefined;
  return async () => {
    // An ending already fixed is completed as it began (as the task's gates, nothing is judged again).
    if (run.state.finishing) return undefined;
    const written = mode.modelItems?.(ctx, run.state.steps);
    if (!written) return undefined;
    const key = JSON.stringify(written.items);
    if (key === judged) return undefined;
    const stopped = await judgeItems(options, written);
    judged = key;
    return stopped;
  };
}

interface ItemsJudged {
  readonly run: StartedRun;
  readonly deps: RunDeps;
  readonly command: CommandFile;
  readonly ctx: ModeContext;
  readonly mode: DeliberationMode;
  readonly settle: Settle;
}

async function judgeItems(options: ItemsJudged, written: ModelItems): Promise<RunOutcome | undefined> {
  const { run, deps, ctx } = options;
  const command: CommandFile = { ...options.command, work_items: written.items.map((i) => ({ ...i })) };
  // Only a person's continue given after the items were written clears a reason for them: one given before saw the task alone.
  const approved = approvedReasons({ hitl: run.state.hitl.filter((h) => h.decided_at >= written.writtenAt) });
  const check = await checkCommand({ command, runId: run.state.run_id, outputPath: ctx.plan.output_path, approved, deps });
  const advice = run.state.advice;
  const model = run.state.classification?.model;
  const facts = advice ? uniteAdvice(check.gathered.facts, advice, { model, accept: deps.config.floor.accept }) : check.gathered.facts;
  const gates = facts === check.gathered.facts ? check.gates : evaluateGates(facts);
  const marks = { work_items_by: 'planner', planner: written.by, items: written.items.length };
  await recordGates({ run, plan: ctx.plan, gates, facts, marks });
  if (gates.decision.decision === 'RUN') return undefined;
  return options.settle(
    decideRun({ kind: 'gate', decision: gates.decision }),
    itemsStop(written, facts, gates, check.gathered.places),
    marks,
  );
}

function itemsStop(written: ModelItems, facts: GateFacts, gates: GateResult, places: readonly SensitivePlace[]): string {
  const detail = explainGateStop(facts, gates.decision, places, isSecretCategory);
  return `the work items the planner (${written.by}) wrote were read by the floor before any persona worked on them, as a command's work_items are: ${detail}`;
}
