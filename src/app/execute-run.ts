import { renderArtifact } from '../domain/artifact.js';
import { auditEvent } from '../domain/audit.js';
import { composeBriefing } from '../domain/briefing.js';
import { pauseDecision, runDecision, type DecisionRecord } from '../domain/decision.js';
import { runDeliberation, type DeliberationResult } from '../domain/deliberation.js';
import { LlmError } from '../domain/errors.js';
import { evaluateGates } from '../domain/gates.js';
import { selectHistory, type HistoryView } from '../domain/history.js';
import type { Persona } from '../domain/persona.js';
import type { AuditSink } from '../domain/ports.js';
import type { RunPlan, RunState, Step } from '../domain/run-state.js';
import { appendRun, type HistoryMessage } from '../domain/session-state.js';
import { gatherGateFacts } from './gate-facts.js';
import { finishRun, pauseRun } from './finish-run.js';
import type { RunDeps, RunOutcome } from './run-deps.js';

/**
 * Runs a validated command from wherever its checkpoint left off: personas, gates, deliberation,
 * arbitration, then the artifact and session states (completed) or a pause for a person.
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
    const decision = pauseDecision('meaning', 'SPEC_INVALID_INPUT');
    await audit.append(auditEvent('PERSONAS_INVALID', decision, { files: loaded.problems.map((p) => p.file) }));
    const lines = loaded.problems.flatMap((p) => p.issues.map((i) => `  ${p.file}: ${i}`));
    await save({ status: 'invalid', decision, trail: [...state.trail, decision], finished_at: deps.clock.now().toISOString() });
    return {
      run_id: state.run_id,
      status: 'invalid',
      decision: decision.decision,
      reason_code: decision.reason_code,
      artifact: null,
      audit_log: audit.path,
      message: `persona files are broken; fix them and run again:\n${lines.join('\n')}`,
      issues: lines.map((l) => l.trim()),
    };
  }
  const byId = new Map(loaded.personas.map((p) => [p.id, p]));
  const plan: RunPlan = state.plan ?? {
    personas: command.config.personas ?? loaded.personas.map((p) => p.id),
    rounds: command.config.max_rounds ?? deps.config.deliberation.max_rounds,
    synthesizer: command.config.synthesizer ?? command.config.personas?.[0] ?? loaded.personas[0]?.id ?? '',
    arbitration: command.config.arbitration ?? deps.config.deliberation.arbitration,
    output_path: command.output_artifact_path ?? `outputs/${state.run_id}.md`,
    model: deps.llm.label,
  };

  // Gates: every one writes exactly one record; nothing reaches a model unless all say RUN.
  const gathered = await gatherGateFacts({ command, personas: loaded.personas, outputPath: plan.output_path, inputs: deps.inputs, artifacts: deps.artifacts });
  const gates = evaluateGates(gathered.facts);
  for (const g of gates.outcomes) await audit.append(auditEvent('GATE', g.decision, { ...g.details, skipped: g.skipped }));
  const trail: DecisionRecord[] = [...state.trail, ...gates.outcomes.filter((g) => !g.skipped).map((g) => g.decision)];
  await save({ plan, trail });
  if (gates.decision.decision !== 'RUN') {
    const detail = describeGateStop(gathered.facts, gates.decision);
    if (gates.decision.decision === 'PAUSE_FOR_HITL') return pauseRun({ state, audit, deps, decision: gates.decision, message: detail, save });
    return finishRun({ state, audit, deps, decision: gates.decision, message: detail, save });
  }

  deps.onProgress?.({ kind: 'run_started', run_id: state.run_id, personas: plan.personas, rounds: plan.rounds });
  const histories = new Map<string, HistoryView>();
  const sessions = new Map<string, Awaited<ReturnType<typeof deps.sessions.load>>['state']>();
  for (const id of plan.personas) {
    const load = await deps.sessions.load(id);
    if (load.recovered) {
      await audit.append(auditEvent('SESSION_RECOVERED', runDecision('session', 'SESSION_CORRUPT_MOVED_ASIDE'), { persona: id }));
      deps.onProgress?.({ kind: 'notice', run_id: state.run_id, message: `session state of ${id} was corrupt (${load.recovered.problem}); moved to ${load.recovered.movedTo}, starting fresh` });
    }
    sessions.set(id, load.state);
    histories.set(id, selectHistory(load.state.messages, deps.config.history.max_tokens, deps.countTokens));
  }

  let result: DeliberationResult;
  const steps: Step[] = [...state.steps];
  try {
    result = await runDeliberation(
      {
        runId: state.run_id,
        task: command.task_description,
        plan,
        personas: byId as ReadonlyMap<string, Persona>,
        briefing: composeBriefing({ task: command.task_description, inputs: gathered.inputs }),
        histories,
        completed: state.steps,
        maxRequestsPerTurn: deps.config.knowledge.max_requests_per_turn,
      },
      {
        llm: deps.llm,
        knowledge: deps.knowledge,
        now: () => deps.clock.now(),
        sha256: deps.sha256,
        ...(deps.onProgress ? { onProgress: deps.onProgress } : {}),
        ...(deps.signal ? { signal: deps.signal } : {}),
        onStep: async (step) => {
          steps.push(step);
          await save({ steps: [...steps] });
          await auditStep(audit, step, deps);
        },
      },
    );
  } catch (error) {
    if (deps.signal?.aborted) throw error;
    if (!(error instanceof LlmError)) throw error;
    const decision = pauseDecision('model', 'MODEL_CALL_FAILED');
    return pauseRun({ state, audit, deps, decision, message: `a model call failed: ${error.message}`, save, details: { retryable: error.retryable, status: error.status ?? null } });
  }

  const { arbitration } = result;
  const proceed = arbitration.final_action === 'proceed';
  const arbitrationDecision = proceed
    ? runDecision('arbitration', 'ARBITRATION_PROCEED')
    : pauseDecision('arbitration', arbitration.conflicts.length > 0 && arbitration.agreement < 1 ? 'REL_ARBITRATION_CONFLICT' : `ARBITRATION_${arbitration.final_action.toUpperCase()}`);
  await audit.append(
    auditEvent('ARBITRATED', arbitrationDecision, {
      strategy: arbitration.strategy,
      final_action: arbitration.final_action,
      agreement: round(arbitration.agreement),
      votes: arbitration.votes,
      invalid_verdicts: result.verdicts.filter((v) => !v.valid).map((v) => v.persona),
    }),
  );

  const artifactInput = {
    runId: state.run_id,
    task: command.task_description,
    inputArtifacts: command.input_artifacts,
    plan,
    personaNames: new Map(loaded.personas.map((p) => [p.id, p.name])),
    startedAt: state.created_at,
    rehearsal: deps.llm.rehearsal,
    steps: result.steps,
    verdicts: result.verdicts,
    arbitration,
    proposal: result.proposal,
  };
  if (!proceed) {
    const message = `the council's verdict was ${arbitration.final_action}: ${arbitration.reasoning}`;
    return pauseRun({ state, audit, deps, decision: arbitrationDecision, message, save, draft: artifactInput });
  }

  // Successful end: session states are saved (persistent council), then the run is finished.
  await save({ trail: [...state.trail, arbitrationDecision] });
  const finishedAt = deps.clock.now().toISOString();
  for (const id of plan.personas) {
    const own = result.steps.filter((s) => s.persona === id);
    const messages: HistoryMessage[] = own.flatMap((s) => [
      { role: 'user' as const, content: s.prompt, run_id: state.run_id, ts: s.started_at },
      { role: 'assistant' as const, content: s.reply, run_id: state.run_id, ts: s.started_at },
    ]);
    const before = sessions.get(id);
    if (!before) continue;
    await deps.sessions.save(appendRun(before, state.run_id, messages, finishedAt));
  }
  await audit.append(auditEvent('SESSIONS_SAVED', runDecision('session', 'SESSION_SAVED'), { personas: plan.personas }));
  return finishRun({
    state,
    audit,
    deps,
    decision: runDecision('dispatch', 'RUN_COMPLETED'),
    message: `completed: ${arbitration.final_action} (${arbitration.strategy}, agreement ${(arbitration.agreement * 100).toFixed(0)}%)`,
    save,
    artifact: artifactInput,
  });
}

async function auditStep(audit: AuditSink, step: Step, deps: RunDeps): Promise<void> {
  await audit.append(
    auditEvent('MODEL_CALL', runDecision('model', 'MODEL_CALL_OK'), {
      step: step.index,
      kind: step.kind,
      persona: step.persona,
      round: step.round,
      model: step.model,
      prompt_sha256: step.prompt_sha256,
      reply_sha256: deps.sha256(step.reply),
      reply_chars: step.reply.length,
      duration_ms: step.duration_ms,
      ...(step.usage ? { prompt_tokens: step.usage.prompt_tokens, completion_tokens: step.usage.completion_tokens } : {}),
    }),
  );
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

function describeGateStop(facts: Parameters<typeof evaluateGates>[0], decision: DecisionRecord): string {
  switch (decision.reason_code) {
    case 'ACC_PATH_ESCAPE':
      return `refused before any model call: ${facts.pathEscapes.map((e) => `${e.field} "${e.path}" ${e.reason}`).join('; ')}`;
    case 'CONSISTENCY_INPUT_MISSING':
      return `input artifacts are missing or unreadable: ${facts.missingInputs.map((m) => `"${m.path}" (${m.reason})`).join(', ')}`;
    case 'MEANING_UNKNOWN_PERSONA':
      return `the command names personas that do not exist: ${facts.unknownPersonas.join(', ')}`;
    case 'MEANING_EMPTY_TASK':
      return 'the task is empty';
    default:
      return `the ${decision.layer} gate decided ${decision.decision} (${decision.reason_code})`;
  }
}

function round(n: number): number {
  return Math.round(n * 1000) / 1000;
}
