import { auditEvent, type AuditDetails, type AuditEvent } from '../domain/audit.js';
import { advisedRelevance } from '../domain/floor/mediator.js';
import { composeBriefing } from '../domain/briefing.js';
import { checkBudget, type BudgetExceeded } from '../domain/budget.js';
import { runDecision } from '../domain/decision.js';
import { BudgetExceededError } from '../domain/errors.js';
import { taskSensitivity } from '../domain/gates.js';
import { loadMemories } from './persona-memory.js';
import { planRequester } from './loop-policy.js';
import type { DeliberationMode, ModeContext, ModeNext, StepSpec } from '../domain/modes/mode.js';
import { modeFor } from '../domain/modes/registry.js';
import { finishedSteps, nextStep } from '../domain/run-machine.js';
import { decideRun, type Ending } from '../domain/run/policy.js';
import { approvedReasons, type RunPlan, type RunState, type Step } from '../domain/run-state.js';
import type { StartedRun } from '../domain/ports.js';
import type { LoopProgress } from '../domain/progress.js';
import { reliability } from '../domain/track-record.js';
import { composePlan, withPriors } from '../domain/run/plan.js';
import { redactSensitive } from '../domain/sensitive/detector.js';
import { callsSince, runCalls, totalUsage } from '../domain/usage.js';
import type { CommandFile } from '../domain/command-file.js';
import { checkCommand, personasUnusable } from './check-command.js';
import { concludeRun } from './conclude-run.js';
import { settleRun } from './settle-run.js';
import { GuardedKnowledgeBase } from './guarded-knowledge.js';
import { callFailure } from './call-failure.js';
import { prepareModels, type PreparedModels } from './prepare-models.js';
import { stepRecords } from './run-records.js';
import { runStep, type StepRunnerDeps } from './run-step.js';
import { keptStop } from './finish-run.js';
import type { RunDeps, RunOutcome } from './run-deps.js';
import { readModeSettings } from '../domain/modes/settings.js';
import type { GatheredFacts } from './gate-facts.js';
import { judgeTask, modelItemsFloor } from './judge-task.js';

/**
 * Runs a validated command from wherever its checkpoint left off. Set-up (personas, the command
 * check and its gates, routes, memory) happens once; then the run is a loop over the domain's
 * `nextStep`: make the calls the mode asks for (each recorded the moment it finishes), or conclude.
 * `command` is the command as given: the gates judge it and the council works on it, while the
 * checkpoint keeps it screened.
 */
export async function executeRun(run: StartedRun, deps: RunDeps, command: CommandFile): Promise<RunOutcome> {
  // An ending fixed before a crash (or a stop decided by a person) is completed exactly as it began:
  // nothing is checked or asked again.
  const fixed = run.state.finishing;
  if (fixed && fixed.decision.decision !== 'RUN') {
    const ending = { kind: 'stop' as const, decision: fixed.decision, status: fixed.status ?? 'stopped' };
    return settleRun({ run, deps, ending, ...(await keptStop(deps, run)) });
  }
  const engine = await setUp(run, deps, command);
  if ('outcome' in engine) return engine.outcome;
  const { ctx, mode } = engine;
  // Work items a model wrote (a plan) are read by the floor before any persona works on one.
  const floorOnItems = modelItemsFloor({ run, deps, command, ctx, mode, settle: engine.settle });
  for (;;) {
    const held = await floorOnItems();
    if (held) return held;
    const next = nextStep(run.state, mode, ctx);
    if (next.kind === 'conclude')
      return concludeRun({ run, deps, ctx, mode, rehearsal: engine.rehearsal, requestPlan: engine.requestPlan });
    // A mode holds only on a reply it could not read, even when asked again: an outage of that call's route.
    if (next.kind === 'hold')
      return engine.settle(decideRun({ kind: 'reply_unreadable', call: next.call }), next.message, { ...next.details });
    const ended = await runTurn(engine, next);
    if (ended) return ended;
  }
}

/** A run set up to make its calls: what every turn shares. */
interface Engine {
  readonly run: StartedRun;
  readonly deps: RunDeps;
  readonly ctx: ModeContext;
  readonly mode: DeliberationMode;
  readonly rehearsal: boolean;
  readonly requestPlan: () => Promise<string>;
  /** Ends the run as the policy decided (the loop policy may ask the council for a plan). */
  readonly settle: (ending: Ending, message: string, details?: AuditDetails) => Promise<RunOutcome>;
  /** The budget, checked before a turn's calls and after each one is recorded. */
  /** `underWay`: calls sent and not yet recorded, which count as used before the next. */
  readonly budgetCheck: (phase: 'before' | 'after', underWay?: number) => BudgetExceeded | null;
  /** The same for every call of the run; only the per-call limit depends on whether calls run at once. */
  readonly stepDeps: StepRunnerDeps;
}

/** The run's budget check, from the limits and prices it starts with, unless a person chose to continue past the budget. */
function budgetChecker(run: StartedRun, deps: RunDeps, command: CommandFile, models: PreparedModels): Engine['budgetCheck'] {
  const limits = { ...deps.config.budget, ...command.config.budget };
  const approved = approvedReasons(run.state);
  const unpriced = [...models.resolved.values()]
    .filter((r) => r.provider !== 'offline' && !deps.config.prices[r.model])
    .map((r) => r.model);
  return (phase, underWay = 0) => {
    if (approved.has('BUDGET_EXCEEDED')) return null; // a person chose to continue past the budget
    const counted = totalUsage(runCalls(run.state), deps.config.prices);
    const usage = { ...counted, calls: counted.calls + underWay };
    const elapsedSeconds = (deps.clock.now().getTime() - Date.parse(run.state.created_at)) / 1000;
    const unpricedModels = [...new Set([...unpriced, ...usage.unpriced])].sort();
    return checkBudget({ budget: limits, usage, elapsedSeconds, phase, unpricedModels });
  };
}

/**
 * The calls of one turn, between budget checks, at most `concurrency` in flight when the mode runs
 * them at once, each recorded the moment it finishes, even when another fails. A call that fails ends
 * the run as its failure says (an interrupt is thrown on), once the others have finished: a resume
 * repeats only the calls that did not. Otherwise the loop goes on.
 */
async function runTurn(engine: Engine, next: Extract<ModeNext, { kind: 'steps' }>): Promise<RunOutcome | undefined> {
  const { deps, stepDeps } = engine;
  deps.signal?.throwIfAborted();
  const settings = readModeSettings(engine.ctx.plan.settings);
  const callDeps = next.concurrent ? { ...stepDeps, timeoutMs: settings.callTimeoutMs } : stepDeps;
  let failure: { spec?: StepSpec; error: unknown } | undefined;
  const queue = [...next.steps];
  // The budget is checked before each call, counting the calls of this turn still under way: calls sent at once
  // never go past max_calls (the run pauses once those under way are recorded). A question asked again is
  // a call too: it is sent only when the budget has room for it (else the step waits for it, and the run pauses).
  let underWay = 0;
  let budgetReached = false;
  const worker = async (): Promise<void> => {
    for (let spec = queue.shift(); spec && !failure; spec = queue.shift()) {
      if (engine.budgetCheck('before', underWay)) {
        budgetReached = true;
        break;
      }
      let held = 1;
      underWay += 1;
      const mayAskAgain = (): boolean => {
        if (engine.budgetCheck('before', underWay)) return false;
        held += 1;
        underWay += 1;
        return true;
      };
      const withheld = engine.run.state.steps.find((s) => s.id === spec.id && s.reask_withheld);
      try {
        await recordStep(engine, await runStep(spec, { ...callDeps, mayAskAgain }, withheld), withheld);
      } catch (error) {
        failure ??= { spec, error };
      } finally {
        underWay -= held;
      }
    }
  };
  const limit = next.concurrent ? settings.concurrency : 1;
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, next.steps.length)) }, worker));
  // Said once those under way are recorded, as they were used.
  const over = budgetReached && !failure ? engine.budgetCheck('before') : null;
  if (over) failure = { error: new BudgetExceededError(over) };
  if (!failure) return undefined;
  const { spec, error } = failure;
  if (deps.signal?.aborted) throw error;
  const failed = callFailure(error, spec?.purpose ?? next.steps[0]?.purpose ?? 'turn', spec && { id: spec.id, persona: spec.persona });
  if (!failed) throw error;
  return engine.settle(failed.ending, failed.message, failed.details);
}

/**
 * A finished step goes on the record, shown and traced; then the budget is checked again. A step whose
 * question was withheld is recorded as it stands (its call counted) and means nothing to the mode yet;
 * completing it (`withheld`: as it stood) records only the call asked again.
 */
async function recordStep(engine: Engine, step: Step, withheld?: Step): Promise<void> {
  const { run, deps, ctx, mode } = engine;
  // The step and its audit records (the call's, and what the mode makes of it): one commit.
  let kept = step;
  let shown: LoopProgress[] = [];
  const records = (recorded: RunState): AuditEvent[] => {
    kept = recorded.steps.find((s) => s.id === step.id) as Step;
    const done = finishedSteps(recorded.steps);
    const events = kept.reask_withheld ? [] : (mode.onStepRecorded?.(ctx, done, kept) ?? []);
    shown = events.flatMap((e) => (e.live ? [e.live] : []));
    return [...stepRecords(withheld ? callsSince(kept, withheld) : kept, deps), ...events.map((e) => e.audit)];
  };
  await run.commit({ event: { type: 'step_recorded', step }, records });
  deps.telemetry?.recordStepContent({ runId: run.state.run_id, persona: kept.persona, prompt: kept.prompt, reply: kept.reply });
  for (const live of shown) deps.onProgress?.({ kind: 'loop', run_id: run.state.run_id, ...live });
  const after = engine.budgetCheck('after');
  if (after) throw new BudgetExceededError(after);
}

/**
 * Everything before the first call: personas, the command check and its gates (each recorded
 * once), the routes, the mediator's classification on a real route, the plan and each persona's
 * bounded memory. Ends the run here when something stops or pauses it.
 */
async function setUp(run: StartedRun, deps: RunDeps, command: CommandFile): Promise<Engine | { outcome: RunOutcome }> {
  const outputPath = run.state.plan?.output_path ?? command.output_artifact_path ?? `outputs/${run.state.run_id}.md`;
  const approved = approvedReasons(run.state);
  const check = await checkCommand({ command, runId: run.state.run_id, outputPath, approved, deps });
  const invalid = (event: string, message: string, problems: readonly string[]) =>
    settleRun({ run, deps, ending: decideRun({ kind: 'setup_invalid' }), message, details: { event }, problems });
  const broken = personasUnusable(check);
  if (broken) return { outcome: await invalid('PERSONAS_INVALID', broken.message, broken.problems) };
  const { gathered } = check;
  const personaIds = command.config.personas ?? check.personas.map((p) => p.id);
  // What the task is, as the policy sees it: the rules' facts, joined by the mediator's advice once it is in.
  const facts = { current: gathered.facts };
  const sensitivity = (): ReturnType<typeof taskSensitivity> => taskSensitivity(facts.current);
  const byId = new Map(check.personas.map((p) => [p.id, p]));
  const models = prepareModels({ state: run.state, personaIds, personas: byId, deps, sensitivity, run });
  if (models.problems.length > 0) return { outcome: await invalid('ROUTES_INVALID', 'model routes are not usable', models.problems) };
  const redact = gathered.facts.piiCategories.length > 0 && deps.config.policy.pii === 'redact';
  const task = redact ? redactSensitive(command.task_description).text : command.task_description;
  const composed = run.state.plan ?? composePlan({ command, deliberation: deps.config.deliberation, personaIds, outputPath, models });
  const budgetCheck = budgetChecker(run, deps, command, models);
  const budgetSpent = (): string | undefined => budgetCheck('before')?.message;
  const requestPlan = planRequester({ run, deps, models, plan: composed, task, budgetSpent });
  const settle: Engine['settle'] = (ending, message, details) =>
    settleRun({ run, deps, ending, message, ...(details ? { details } : {}), requestPlan });

  // Each persona's bounded memory, read before the mediator is asked: the council's first call then
  // follows the gates at once. (A corrupt session file is moved aside and recorded here.)
  const { memories, outcomes } = await loadMemories({ run, deps, personas: composed.personas, task });
  const plan = run.state.plan ?? withPriors(composed, (id) => reliability(models.personas.get(id)?.priors, outcomes.get(id) ?? []));
  // Only a completed ending is ever completed again here: it concludes again, without a call.
  const ending = run.state.finishing;
  if (!ending) {
    const stopped = await judgeTask({ run, deps, command, check, models, plan, facts, settle });
    if (stopped) return { outcome: stopped };
  }
  await announceStart({ run, deps, plan, inputs: gathered.inputs, ending });
  const inputs = redact
    ? gathered.inputs.map((i) => ({ ...i, result: { ...i.result, content: redactSensitive(i.result.content ?? '').text } }))
    : gathered.inputs;
  const relevance = advisedRelevance(run.state.advice, plan.personas);
  const ctx: ModeContext = {
    runId: run.state.run_id,
    command,
    task,
    plan,
    personas: models.personas,
    briefing: composeBriefing({ task, inputs }),
    memories,
    maxRequestsPerTurn: deps.config.knowledge.max_requests_per_turn,
    inputs,
    screen: (text) => (redact ? redactSensitive(text).text : text),
    approved,
    ...(relevance ? { relevance } : {}),
  };
  const stepDeps: StepRunnerDeps = {
    runId: run.state.run_id,
    rounds: plan.rounds,
    llm: models.llm,
    knowledge: new GuardedKnowledgeBase(deps.knowledge),
    personas: models.personas,
    maxRequestsPerTurn: deps.config.knowledge.max_requests_per_turn,
    briefing: ctx.briefing,
    now: () => deps.clock.now(),
    sha256: deps.sha256,
    ...(deps.onProgress ? { onProgress: deps.onProgress } : {}),
    ...(deps.signal ? { signal: deps.signal } : {}),
  };
  return { run, deps, ctx, mode: modeFor(plan.mode), rehearsal: models.rehearsal, requestPlan, settle, budgetCheck, stepDeps };
}

/** The run starts: progress says so, and a person learns of each input the council sees only the start of. */
async function announceStart(options: {
  run: StartedRun;
  deps: RunDeps;
  plan: RunPlan;
  inputs: GatheredFacts['inputs'];
  ending: RunState['finishing'];
}): Promise<void> {
  const { run, deps, plan } = options;
  deps.onProgress?.({ kind: 'run_started', run_id: run.state.run_id, personas: plan.personas, rounds: plan.rounds, mode: plan.mode });
  // A person should know when the council saw only the start of an input.
  for (const input of options.inputs.filter((i) => i.result.truncated)) {
    const limit = deps.config.knowledge.max_file_bytes;
    deps.onProgress?.({
      kind: 'notice',
      run_id: run.state.run_id,
      message: `input ${input.path} is ${input.result.bytes} bytes; the council sees its first ${limit} (raise knowledge.max_file_bytes in maestro.config.json to give it more)`,
    });
    if (!options.ending && run.state.steps.length === 0) {
      const truncated = auditEvent('INPUT_TRUNCATED', runDecision('knowledge', 'KNOWLEDGE_INPUT_TRUNCATED'), {
        path: input.path,
        bytes: input.result.bytes ?? null,
        shown_bytes: limit,
      });
      await run.commit({ records: [truncated] });
    }
  }
}
