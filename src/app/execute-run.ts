import { auditEvent } from '../domain/audit.js';
import { composeBriefing } from '../domain/briefing.js';
import { checkBudget } from '../domain/budget.js';
import { pauseDecision, runDecision, type DecisionRecord } from '../domain/decision.js';
import { BudgetExceededError, runDeliberation, type DeliberationResult } from '../domain/deliberation.js';
import { LlmError } from '../domain/errors.js';
import { isSecretCategory } from '../domain/sensitive/categories.js';
import { explainGateStop } from '../domain/stop-explanation.js';
import { MEDIATOR_ADVICE_SCHEMA, mediatorAdviceMessages, readMediatorAdvice, type MediatorAdvice } from '../domain/mediator-advice.js';
import type { LlmClient } from '../domain/ports.js';
import type { ResolvedRoute } from '../domain/route.js';
import { describeModelFailure, modelFailureDetails } from '../domain/model-failure.js';
import { evaluateGates } from '../domain/gates.js';
import { selectHistory, type HistoryView } from '../domain/history.js';
import type { AuditSink } from '../domain/ports.js';
import type { RunPlan, RunState, Step } from '../domain/run-state.js';
import type { HistoryMessage } from '../domain/session-state.js';
import { totalUsage } from '../domain/usage.js';
import { isConflictStopped } from '../domain/loop-policy/workspace-loop.js';
import { orchestratorSystemPrompt, planRequestPrompt } from '../domain/prompts.js';
import { redactSensitive } from '../domain/sensitive/detector.js';
import { parseVerdict, verdictAuditDetails } from '../domain/verdict.js';
import { GuardedKnowledgeBase } from './guarded-knowledge.js';
import { conflictFingerprint } from './loop-policy.js';
import { gatherGateFacts } from './gate-facts.js';
import { finishRun, pauseRun } from './finish-run.js';
import { prepareModels } from './prepare-models.js';
import { RerouteRefusedError } from './routed-llm.js';
import type { RunDeps, RunOutcome } from './run-deps.js';

/** Reason codes for model failures that are not rerouted. */
const MODEL_FAILURE_REASONS: Record<string, string> = {
  quota: 'MODEL_QUOTA_EXCEEDED',
  auth: 'MODEL_AUTH_FAILED',
  cassette: 'MODEL_REPLAY_MISMATCH',
  bad_request: 'MODEL_BAD_REQUEST',
};

/**
 * Runs a validated command from wherever its checkpoint left off: personas, routes, gates,
 * deliberation, arbitration, then the artifact and session states (completed) or a pause for a person.
 */
export async function executeRun(initial: RunState, audit: AuditSink, deps: RunDeps): Promise<RunOutcome> {
  let state = initial;
  const save = async (patch: Partial<RunState>): Promise<void> => {
    state = { ...state, ...patch, updated_at: deps.clock.now().toISOString() };
    await deps.runs.save(state);
  };
  const { command } = state;

  const loaded = await deps.personas.loadAll();
  if (loaded.problems.length > 0) {
    return invalidSetup(state, audit, deps, save, 'PERSONAS_INVALID', 'persona files are broken', loaded.problems.flatMap((p) => p.issues.map((i) => `${p.file}: ${i}`)));
  }
  const byId = new Map(loaded.personas.map((p) => [p.id, p]));
  const personaIds = command.config.personas ?? loaded.personas.map((p) => p.id);

  // Gates: every one writes exactly one record; nothing reaches a model unless all say RUN.
  const outputPath = state.plan?.output_path ?? command.output_artifact_path ?? `outputs/${state.run_id}.md`;
  const approved = new Set(state.hitl.filter((h) => h.decision === 'continue').map((h) => h.reason_code));
  const conflictStopped = isConflictStopped(await deps.loopPolicy.read(), conflictFingerprint(state, deps.sha256));
  const gathered = await gatherGateFacts({
    command,
    personas: loaded.personas,
    outputPath,
    inputs: deps.inputs,
    artifacts: deps.artifacts,
    piiPolicy: deps.config.policy.pii,
    conflictStopped,
    approved,
  });
  const policySensitive = gathered.facts.piiCategories.length + gathered.facts.secretCategories.length > 0;
  const models = prepareModels({ state, personaIds, personas: byId, deps, audit, policySensitive, save, current: () => state });
  if (models.problems.length > 0) return invalidSetup(state, audit, deps, save, 'ROUTES_INVALID', 'model routes are not usable', models.problems);

  const plan: RunPlan = state.plan ?? {
    personas: personaIds,
    rounds: command.config.max_rounds ?? deps.config.deliberation.max_rounds,
    synthesizer: command.config.synthesizer ?? personaIds[0] ?? '',
    arbitration: command.config.arbitration ?? deps.config.deliberation.arbitration,
    output_path: outputPath,
    model: models.llm.label,
    routes: models.routes,
  };
  const redact = gathered.facts.piiCategories.length > 0 && deps.config.policy.pii === 'redact';
  const task = redact ? redactSensitive(command.task_description).text : command.task_description;
  const requestPlan = async (): Promise<string> => {
    const synthesizer = models.personas.get(plan.synthesizer);
    if (!synthesizer) return '(no synthesizer persona to ask for a plan)';
    const reply = await models.llm.complete(
      {
        persona: synthesizer.id,
        purpose: 'plan',
        round: plan.rounds,
        messages: [
          { role: 'system', content: orchestratorSystemPrompt(synthesizer, deps.config.knowledge.max_requests_per_turn) },
          { role: 'user', content: planRequestPrompt(task, state.hitl.map((h) => h.reason_code)) },
        ],
      },
      deps.signal,
    );
    // Not a deliberation step, but a model call all the same: it goes on the record with its usage.
    await audit.append(
      auditEvent('MODEL_CALL', runDecision('model', 'MODEL_CALL_OK'), {
        kind: 'plan',
        persona: synthesizer.id,
        model: reply.model,
        reply_sha256: deps.sha256(reply.content),
        reply_chars: reply.content.length,
        ...(reply.usage ? { prompt_tokens: reply.usage.prompt_tokens, completion_tokens: reply.usage.completion_tokens } : {}),
      }),
    );
    return reply.content;
  };
  // A run that was ending when it stopped (its checkpoint says `finishing`) only completes that
  // ending, exactly as it began it: a stop stays a stop (nothing is deliberated), and a completed
  // run replays its finished steps (no model call) to write the same artifact.
  if (state.finishing && state.finishing.decision.decision !== 'RUN') {
    return finishRun({ state, audit, deps, decision: state.finishing.decision, message: state.summary ?? `ended (${state.finishing.decision.reason_code})`, save });
  }
  // mediator_advice: on a real route, a model classifies the (screened) task too; its findings join
  // the rules'. Only asked when the rules alone would let the task through, and once per run.
  let facts = gathered.facts;
  const classifier = classifierRoute(models, plan.synthesizer, deps);
  // A person who continued past a failed classification chose the rules alone.
  if (!state.finishing && classifier && !approved.has('MEDIATOR_CLASSIFICATION_FAILED') && evaluateGates(facts).decision.decision === 'RUN') {
    const advice = state.advice ?? (await classifyTask({ ...classifier, task: command.task_description, audit, deps }));
    if ('error' in advice) {
      // An unreachable route is an outage (it does not count for the loop policy); an unreadable answer is not.
      const decision = pauseDecision(advice.failure ? 'model' : 'mediator_advice', 'MEDIATOR_CLASSIFICATION_FAILED');
      const message = `the mediator's classification of the task failed, so nothing was sent to the council (fail closed): ${advice.error}. Continue (maestro hitl decide) to run on the rules alone, or fix the route`;
      return pauseRun({ state, audit, deps, decision, message, save, details: { route: classifier.route.id, ...(advice.failure ? modelFailureDetails(advice.failure) : {}) } });
    }
    if (!state.advice) await save({ advice });
    facts = uniteAdvice(facts, advice);
  }
  const gates = state.finishing ? undefined : evaluateGates(facts);
  if (gates) {
    for (const g of gates.outcomes) await audit.append(auditEvent('GATE', g.decision, { ...g.details, skipped: g.skipped }));
    await save({ plan, trail: [...state.trail, ...gates.outcomes.filter((g) => !g.skipped).map((g) => g.decision)] });
  }
  if (gates && gates.decision.decision !== 'RUN') {
    const detail = explainGateStop(facts, gates.decision, gathered.places, isSecretCategory);
    if (gates.decision.decision === 'PAUSE_FOR_HITL') return pauseRun({ state, audit, deps, decision: gates.decision, message: detail, save, requestPlan });
    return finishRun({ state, audit, deps, decision: gates.decision, message: detail, save });
  }

  deps.onProgress?.({ kind: 'run_started', run_id: state.run_id, personas: plan.personas, rounds: plan.rounds });
  // A person should know when the council saw only the start of an input.
  for (const input of gathered.inputs.filter((i) => i.result.truncated)) {
    const limit = deps.config.knowledge.max_file_bytes;
    deps.onProgress?.({ kind: 'notice', run_id: state.run_id, message: `input ${input.path} is ${input.result.bytes} bytes; the council sees its first ${limit} (raise knowledge.max_file_bytes in maestro.config.json to give it more)` });
    if (!state.finishing && state.steps.length === 0) {
      await audit.append(auditEvent('INPUT_TRUNCATED', runDecision('knowledge', 'KNOWLEDGE_INPUT_TRUNCATED'), { path: input.path, bytes: input.result.bytes ?? null, shown_bytes: limit }));
    }
  }
  const histories = new Map<string, HistoryView>();
  for (const id of plan.personas) {
    const load = await deps.sessions.load(id);
    if (load.recovered) {
      await audit.append(auditEvent('SESSION_RECOVERED', runDecision('session', 'SESSION_CORRUPT_MOVED_ASIDE'), { persona: id }));
      deps.onProgress?.({ kind: 'notice', run_id: state.run_id, message: `session state of ${id} was corrupt (${load.recovered.problem}); moved to ${load.recovered.movedTo}, starting fresh` });
    }
    histories.set(id, selectHistory(load.state.messages, deps.config.history.max_tokens, deps.countTokens, load.state.archived));
  }

  const budget = { ...deps.config.budget, ...command.config.budget };
  const unpricedRoutes = [...models.resolved.values()].filter((r) => r.provider !== 'offline' && !deps.config.prices[r.model]).map((r) => r.model);
  const steps: Step[] = [...state.steps];
  let result: DeliberationResult;
  try {
    result = await runDeliberation(
      {
        runId: state.run_id,
        task,
        plan,
        personas: models.personas,
        briefing: composeBriefing({
          task,
          inputs: redact ? gathered.inputs.map((i) => ({ ...i, result: { ...i.result, content: redactSensitive(i.result.content ?? '').text } })) : gathered.inputs,
        }),
        histories,
        completed: state.steps,
        maxRequestsPerTurn: deps.config.knowledge.max_requests_per_turn,
      },
      {
        llm: models.llm,
        knowledge: new GuardedKnowledgeBase(deps.knowledge),
        now: () => deps.clock.now(),
        sha256: deps.sha256,
        ...(deps.onProgress ? { onProgress: deps.onProgress } : {}),
        ...(deps.signal ? { signal: deps.signal } : {}),
        checkBudget: (done, phase) => {
          if (approved.has('BUDGET_EXCEEDED')) return null; // a person chose to continue past the budget
          const usage = totalUsage(done, deps.config.prices);
          const elapsedSeconds = (deps.clock.now().getTime() - Date.parse(state.created_at)) / 1000;
          return checkBudget({ budget, usage, elapsedSeconds, phase, unpricedModels: [...new Set([...unpricedRoutes, ...usage.unpriced])].sort() });
        },
        onStep: async (step) => {
          steps.push(step);
          await save({ steps: [...steps] });
          await auditStep(audit, step, deps);
        },
      },
    );
  } catch (error) {
    if (deps.signal?.aborted) throw error;
    if (error instanceof BudgetExceededError) {
      return pauseRun({ state, audit, deps, decision: pauseDecision('model', 'BUDGET_EXCEEDED'), message: `budget exceeded — ${error.message}`, save, details: { limit: error.exceeded.limit }, requestPlan });
    }
    if (error instanceof RerouteRefusedError) {
      const { decision } = error.outcome;
      const failure = error.cause instanceof LlmError ? error.cause : undefined;
      const message = `a model call failed and REROUTE was refused (${error.outcome.condition ?? 'refused'}): ${error.outcome.detail}${failure ? `. The failure: ${describeModelFailure(failure)}` : ''}`;
      if (decision.decision === 'STOPPED') return finishRun({ state, audit, deps, decision, message, save });
      return pauseRun({ state, audit, deps, decision, message, save, details: { condition: error.outcome.condition ?? null, ...(failure ? modelFailureDetails(failure) : {}) }, requestPlan });
    }
    if (!(error instanceof LlmError)) throw error;
    const decision = pauseDecision('model', MODEL_FAILURE_REASONS[error.kind] ?? 'MODEL_CALL_FAILED');
    return pauseRun({ state, audit, deps, decision, message: `a model call failed: ${describeModelFailure(error)}`, save, details: modelFailureDetails(error), requestPlan });
  }

  const { arbitration } = result;
  const councilReason =
    arbitration.final_action === 'proceed'
      ? 'ARBITRATION_PROCEED'
      : arbitration.conflicts.length > 0 && arbitration.agreement < 1
        ? 'REL_ARBITRATION_CONFLICT'
        : `ARBITRATION_${arbitration.final_action.toUpperCase()}`;
  // A person who chose `continue` on this very pause has cleared it; the council's verdict stays on record.
  const cleared = arbitration.final_action !== 'proceed' && approved.has(councilReason);
  const proceed = arbitration.final_action === 'proceed' || cleared;
  const arbitrationDecision = proceed
    ? runDecision('arbitration', cleared ? 'ARBITRATION_CLEARED_BY_PERSON' : councilReason)
    : pauseDecision('arbitration', councilReason);
  await audit.append(
    auditEvent('ARBITRATED', arbitrationDecision, {
      strategy: arbitration.strategy,
      final_action: arbitration.final_action,
      agreement: Math.round(arbitration.agreement * 1000) / 1000,
      votes: arbitration.votes,
      invalid_verdicts: result.verdicts.filter((v) => !v.valid).map((v) => v.persona),
      ...(cleared ? { cleared_by_person: councilReason } : {}),
    }),
  );

  const artifactInput = {
    runId: state.run_id,
    task,
    inputArtifacts: command.input_artifacts,
    plan,
    personaNames: new Map(loaded.personas.map((p) => [p.id, p.name])),
    startedAt: state.created_at,
    rehearsal: models.llm.rehearsal,
    steps: result.steps,
    verdicts: result.verdicts,
    arbitration,
    proposal: result.proposal,
    prices: deps.config.prices,
    reroutes: state.reroutes,
  };
  if (!proceed) {
    const message = `the council's verdict was ${arbitration.final_action}: ${arbitration.reasoning}`;
    return pauseRun({ state, audit, deps, decision: arbitrationDecision, message, save, draft: artifactInput, requestPlan });
  }

  // Successful end: the artifact is written, then the session states are saved (persistent council) —
  // only once the artifact is on disk, so a failed write never leaves memory of a run that produced nothing.
  if (!state.finishing) await save({ trail: [...state.trail, arbitrationDecision] });
  const saveSessions = async (): Promise<void> => {
    for (const id of plan.personas) {
      const messages: HistoryMessage[] = result.steps
        .filter((s) => s.persona === id)
        .flatMap((s) => [
          { role: 'user' as const, content: s.prompt, run_id: state.run_id, ts: s.started_at },
          { role: 'assistant' as const, content: s.reply, run_id: state.run_id, ts: s.started_at },
        ]);
      await deps.sessions.appendRun(id, state.run_id, messages);
    }
    if (!(state.finishing && audit.hasRecorded?.('SESSIONS_SAVED'))) {
      await audit.append(auditEvent('SESSIONS_SAVED', runDecision('session', 'SESSION_SAVED'), { personas: plan.personas }));
    }
  };
  const usage = totalUsage(result.steps, deps.config.prices);
  return finishRun({
    state,
    audit,
    deps,
    decision: runDecision('dispatch', 'RUN_COMPLETED'),
    message: `completed: ${cleared ? `continued by a person over the council's ${arbitration.final_action}` : arbitration.final_action} (${arbitration.strategy}, agreement ${(arbitration.agreement * 100).toFixed(0)}%) · ${usage.calls} model calls, ${usage.prompt_tokens} prompt + ${usage.completion_tokens} completion tokens${usage.cost_usd !== undefined && usage.cost_usd > 0 ? `, $${usage.cost_usd.toFixed(4)}` : ''}`,
    save,
    artifact: artifactInput,
    afterArtifact: saveSessions,
  });
}

async function invalidSetup(
  state: RunState,
  audit: AuditSink,
  deps: RunDeps,
  save: (patch: Partial<RunState>) => Promise<void>,
  event: string,
  what: string,
  problems: string[],
): Promise<RunOutcome> {
  const decision = pauseDecision('meaning', 'SPEC_INVALID_INPUT');
  await audit.append(auditEvent(event, decision, { problems: problems.length }));
  await save({ status: 'invalid', decision, trail: [...state.trail, decision], finished_at: deps.clock.now().toISOString(), summary: what });
  return {
    run_id: state.run_id,
    status: 'invalid',
    decision: decision.decision,
    reason_code: decision.reason_code,
    artifact: null,
    audit_log: audit.path,
    message: `${what}; fix them and run again:\n${problems.map((p) => `  ${p}`).join('\n')}`,
    issues: problems,
  };
}

async function auditStep(audit: AuditSink, step: Step, deps: RunDeps): Promise<void> {
  await audit.append(
    auditEvent('MODEL_CALL', runDecision('model', 'MODEL_CALL_OK'), {
      step: step.index,
      kind: step.kind,
      persona: step.persona,
      round: step.round,
      model: step.model,
      calls: step.calls,
      prompt_sha256: step.prompt_sha256,
      reply_sha256: deps.sha256(step.reply),
      reply_chars: step.reply.length,
      duration_ms: step.duration_ms,
      ...(step.usage ? { prompt_tokens: step.usage.prompt_tokens, completion_tokens: step.usage.completion_tokens } : {}),
      ...(step.kind === 'verdict' ? verdictAuditDetails(parseVerdict(step.persona, step.reply)) : {}),
      ...(step.redacted ? { reply_redacted: step.redacted } : {}),
    }),
  );
  for (const n of step.notices ?? []) {
    await audit.append(auditEvent('JSON_MODE_FALLBACK', runDecision('model', 'JSON_MODE_FALLBACK'), { persona: step.persona, route: n.route, from: n.from, to: n.to, status: n.status }));
  }
  for (const k of step.knowledge) {
    await audit.append(
      auditEvent('KNOWLEDGE_REQUEST', runDecision('knowledge', k.reason_code), {
        persona: step.persona,
        action: k.action,
        status: k.status,
        ...(k.path ? { path: k.path } : { argument_sha256: deps.sha256(k.argument), argument_chars: k.argument.length }),
        ...(k.bytes !== undefined ? { bytes: k.bytes } : {}),
        ...(k.sha256 ? { sha256: k.sha256 } : {}),
        ...(k.truncated ? { truncated: true } : {}),
      }),
    );
  }
}

/** The route the mediator's classification goes through: the synthesizer's, when it is a real model. */
function classifierRoute(models: ReturnType<typeof prepareModels>, synthesizer: string, deps: RunDeps): { route: ResolvedRoute; client: LlmClient } | undefined {
  const id = models.routes[synthesizer];
  const route = id ? models.resolved.get(id) : undefined;
  if (!route || route.provider === 'offline') return undefined;
  return { route, client: deps.models.clientFor(route) };
}

/** One strict-JSON classification (asked again once with the error quoted), or why it failed. */
async function classifyTask(options: { route: ResolvedRoute; client: LlmClient; task: string; audit: AuditSink; deps: RunDeps }): Promise<MediatorAdvice | { error: string; failure?: LlmError }> {
  const { client, audit, deps } = options;
  const first = mediatorAdviceMessages(redactSensitive(options.task).text);
  let messages = first;
  let problem = '';
  for (let attempt = 1; attempt <= 2; attempt++) {
    let reply;
    try {
      reply = await client.complete({ persona: 'mediator', purpose: 'classify', round: 0, messages, json: true, jsonSchema: MEDIATOR_ADVICE_SCHEMA }, deps.signal);
    } catch (error) {
      if (deps.signal?.aborted) throw error;
      return { error: error instanceof LlmError ? describeModelFailure(error) : (error as Error).message, ...(error instanceof LlmError ? { failure: error } : {}) };
    }
    const read = readMediatorAdvice(reply.content);
    await audit.append(
      auditEvent('MEDIATOR_CLASSIFIED', runDecision('mediator_advice', read.ok ? 'MEDIATOR_ADVICE_RECEIVED' : 'MEDIATOR_ADVICE_INVALID'), {
        kind: 'classify',
        model: `${options.route.id}/${reply.model}`,
        reply_sha256: deps.sha256(reply.content),
        reply_chars: reply.content.length,
        valid: read.ok,
        ...(reply.usage ? { prompt_tokens: reply.usage.prompt_tokens, completion_tokens: reply.usage.completion_tokens } : {}),
      }),
    );
    if (read.ok) return read.advice;
    problem = read.error;
    messages = [...first, { role: 'assistant', content: reply.content }, { role: 'user', content: `That was not a valid classification (${problem}). Reply with ONE JSON object and nothing else.` }];
  }
  return { error: `the reply was not a valid classification twice (${problem})` };
}

/** The rules' findings and the mediator's, united: a model can add a reason to pause, never remove one. */
function uniteAdvice(facts: Parameters<typeof evaluateGates>[0], advice: MediatorAdvice): Parameters<typeof evaluateGates>[0] {
  const union = (a: readonly string[] | undefined, b: readonly string[]): string[] => [...new Set([...(a ?? []), ...b])];
  return {
    ...facts,
    sideEffects: union(facts.sideEffects, advice.side_effects.map((s) => `mediator: ${s}`)),
    highStakes: union(facts.highStakes, advice.high_stakes),
    boundary: facts.boundary === true || advice.ambiguous,
  };
}
