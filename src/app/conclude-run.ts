import { ASSESSMENT_MODES } from '../domain/modes/settings.js';
import { auditEvent } from '../domain/audit.js';
import { orchestrationResult } from '../domain/orchestration-result.js';
import { screenText } from '../domain/screen.js';
import { corruptSessionNotice } from '../domain/session-state.js';
import type { ReasonCode } from '../domain/codes.js';
import { runDecision, type DecisionRecord } from '../domain/decision.js';
import { decideRun, type Ending } from '../domain/run/policy.js';
import { explainArbitrationPause } from '../domain/stop-explanation.js';
import { actionSupport, supportWords, type ArbitrationResult } from '../domain/arbitration.js';
import type { Conclusion, DeliberationMode, ModeContext } from '../domain/modes/mode.js';
import type { SessionLoad, StartedRun } from '../domain/ports.js';
import { runPassages } from '../domain/memory/passages.js';
import { summarizeTask } from '../domain/memory/summary.js';
import { approvedReasons, wasRehearsal, type RunPlan, type RunState } from '../domain/run-state.js';
import { promptBreakdown, runCalls, totalUsage } from '../domain/usage.js';
import { settleRun, type AfterArtifact, type DraftInput, type LeadCommit } from './settle-run.js';
import type { RunDeps, RunOutcome } from './run-deps.js';

/**
 * The deliberation is over: the mode concludes (verdicts, arbitration, its own artifact sections),
 * the arbitration is recorded, and the run completes — artifact, then the council's memory — or
 * pauses for a person when the council did not say `proceed`.
 */
export async function concludeRun(options: {
  run: StartedRun;
  deps: RunDeps;
  ctx: ModeContext;
  mode: DeliberationMode;
  rehearsal: boolean;
  requestPlan: () => Promise<string>;
}): Promise<RunOutcome> {
  const { run, deps, ctx, mode, requestPlan } = options;
  const state = run.state;
  const conclusion = mode.conclude(ctx, state.steps);
  const { arbitration } = conclusion;
  const judgement = judge(conclusion, { state, ctx });
  // A run concluded again to complete its ending (after a restart) does not record the arbitration twice.
  const resumedEnding = state.finishing !== undefined;
  const lead = arbitrationCommit({ deps, state, conclusion, judgement, resumedEnding, ctx });

  const plan = state.plan ?? ctx.plan;
  const draft = draftOf({ state, ctx, plan, conclusion, deps, rehearsal: options.rehearsal });
  // What the mode wants people to see on the outcome line (e.g. which guardrail ended a loop).
  const notes = (conclusion.notes ?? []).map((n) => ` · ${n}`).join('');
  const { doubt } = judgement;
  if (!judgement.proceed) {
    const message =
      explainArbitrationPause({
        runId: state.run_id,
        reason: doubt.decision.reason_code as ReasonCode,
        arbitration,
        verdicts: conclusion.verdicts,
        names: draft.personaNames,
      }) + notes;
    return settleRun({ run, deps, ending: doubt, message, draft, requestPlan, attachments: conclusion.attachments, lead });
  }
  if (conclusion.guardrail) {
    // Seed 002: a guardrail's stop is explicit and observable — its own status and exit code, the
    // artifact says so, and the council's memory is not saved (the run did not complete).
    const ending = decideRun({ kind: 'guardrail', reason: conclusion.guardrail.reason });
    const message = `${conclusion.guardrail.note}; the council's verdict was ${arbitration.final_action}`;
    return settleRun({ run, deps, ending, message, draft, attachments: conclusion.attachments, lead });
  }

  // Successful end: the artifact is written, then the session states are saved (persistent council) —
  // only once the artifact is on disk, so a failed write never leaves memory of a run that produced nothing.
  const decision = judgement.cleared ? `${arbitration.final_action}, continued by a person` : arbitration.final_action;
  const saveSessions = sessionSaver({ run, deps, state, personas: plan.personas, resumedEnding, conclusion, decision, task: ctx.task });
  return settleRun({
    run,
    deps,
    ending: decideRun({ kind: 'completed' }),
    message: completedMessage({
      arbitration,
      cleared: judgement.cleared,
      usage: totalUsage(runCalls(run.state), deps.config.prices),
      notes,
      rehearsal: wasRehearsal(state) ?? options.rehearsal,
    }),
    draft,
    attachments: conclusion.attachments,
    afterArtifact: saveSessions,
    lead,
  });
}

/** What the arbitration means for the run. */
interface Judgement {
  /** The ending when the run does not go on: the council's doubt, or an outage of the unreadable verdicts' route. */
  readonly doubt: Ending;
  /** Whether a readable verdict doubted. */
  readonly readableDoubt: boolean;
  /** A person chose `continue` on this very pause. */
  readonly cleared: boolean;
  readonly proceed: boolean;
  /** The decision the arbitration is recorded with. */
  readonly decision: DecisionRecord;
}

function judge(conclusion: Conclusion, at: { state: RunState; ctx: ModeContext }): Judgement {
  const { arbitration } = conclusion;
  const councilReason = councilReasonOf(arbitration);
  // An outage only when verdicts could not be read and no readable one doubted: then the unreadable
  // ones kept the run from proceeding. Every other doubt is the council's, read: a verdict that said
  // so, or vectors the composition flagged while every verdict read as proceed.
  const unreadable = conclusion.verdicts.some((v) => !v.valid);
  const readableDoubt = !unreadable || conclusion.verdicts.some((v) => v.valid && v.action !== 'proceed');
  const doubt: Ending = readableDoubt
    ? decideRun({ kind: 'council_doubt', reason: councilReason })
    : decideRun({ kind: 'reply_unreadable', call: ASSESSMENT_MODES.has(at.ctx.plan.mode) ? 'assessment' : 'verdict' });
  // A person who chose `continue` on this very pause has cleared it; the council's verdict stays on record.
  const cleared = arbitration.final_action !== 'proceed' && approvedReasons(at.state).has(doubt.decision.reason_code);
  const proceed = arbitration.final_action === 'proceed' || cleared;
  const decision = proceed ? runDecision('arbitration', cleared ? 'ARBITRATION_CLEARED_BY_PERSON' : councilReason) : doubt.decision;
  return { doubt, readableDoubt, cleared, proceed, decision };
}

/** The council's own reason for its final action. */
function councilReasonOf(arbitration: ArbitrationResult): ReasonCode {
  return arbitration.final_action === 'proceed'
    ? 'ARBITRATION_PROCEED'
    : arbitration.conflicts.length > 0 && arbitration.agreement < 1
      ? 'REL_ARBITRATION_CONFLICT'
      : arbitration.final_action === 'investigate'
        ? 'ARBITRATION_INVESTIGATE'
        : 'ARBITRATION_ESCALATE';
}

/**
 * The arbitration's record (once) and the orchestration result, committed with the ending's first
 * commit (settle-run.ts); the arbitration is shown at once to whoever follows the run.
 */
function arbitrationCommit(options: {
  deps: RunDeps;
  state: RunState;
  conclusion: Conclusion;
  judgement: Judgement;
  resumedEnding: boolean;
  ctx: ModeContext;
}): LeadCommit {
  const { deps, conclusion, judgement, resumedEnding } = options;
  const { arbitration } = conclusion;
  const { proceed, decision } = judgement;
  const arbitrated = auditEvent('ARBITRATED', decision, {
    strategy: arbitration.strategy,
    final_action: arbitration.final_action,
    agreement: Math.round(arbitration.agreement * 1000) / 1000,
    support: Math.round(actionSupport(arbitration).share * 1000) / 1000,
    votes: arbitration.votes,
    invalid_verdicts: conclusion.verdicts.filter((v) => !v.valid).map((v) => v.persona),
    ...conclusion.audit,
    ...(judgement.cleared ? { cleared_by_person: judgement.doubt.decision.reason_code } : {}),
    ...(!proceed && !judgement.readableDoubt
      ? { unreadable_verdicts: conclusion.verdicts.filter((v) => !v.valid).map((v) => v.persona) }
      : {}),
  });
  // The orchestration result is kept with the run (screened, like everything kept), for `--json`.
  const result = orchestrationResult(options.ctx, options.state.steps, conclusion);
  const files = [{ name: 'orchestration.json' as const, content: `${screenText(JSON.stringify(result, null, 2))}\n` }];
  deps.onProgress?.({
    kind: 'arbitrated',
    run_id: options.state.run_id,
    strategy: arbitration.strategy,
    final_action: arbitration.final_action,
    agreement: arbitration.agreement,
    support: actionSupport(arbitration).share,
    reasoning: arbitration.reasoning,
    votes: { ...arbitration.votes },
  });
  // When the arbitration lets the run go on, its decision joins the trail with its record.
  return { records: [arbitrated], files, completesEnding: resumedEnding, ...(proceed && !resumedEnding ? { decided: decision } : {}) };
}

/** The artifact's content as the run concluded it (written now, or kept as a draft beside a pause). */
function draftOf(options: {
  state: RunState;
  ctx: ModeContext;
  plan: RunPlan;
  conclusion: Conclusion;
  deps: RunDeps;
  rehearsal: boolean;
}): DraftInput {
  const { state, ctx, conclusion } = options;
  return {
    runId: state.run_id,
    task: ctx.task,
    inputArtifacts: state.command.input_artifacts,
    plan: options.plan,
    personaNames: new Map([...ctx.personas.values()].map((p) => [p.id, p.name])),
    startedAt: state.created_at,
    rehearsal: wasRehearsal(state) ?? options.rehearsal,
    steps: state.steps,
    classification: state.classification,
    plan_call: state.plan_call,
    verdicts: conclusion.verdicts,
    arbitration: conclusion.arbitration,
    proposal: conclusion.proposal,
    prices: options.deps.config.prices,
    reroutes: state.reroutes,
    sections: conclusion.sections,
  };
}

/**
 * Saves each persona's part of the run to its memory — the task's summary (what was asked, decided,
 * settled) and its passages — and returns the record that it did.
 */
function sessionSaver(options: {
  run: StartedRun;
  deps: RunDeps;
  state: RunState;
  personas: readonly string[];
  resumedEnding: boolean;
  conclusion: Conclusion;
  decision: string;
  task: string;
}): AfterArtifact {
  const { run, deps, state, personas } = options;
  const { proposal } = options.conclusion;
  // Memory outlives the run: what it keeps is screened (a task sent as it was given stays out of it).
  const task = screenText(options.task);
  const summary = summarizeTask({
    runId: state.run_id,
    at: state.created_at,
    key: state.task_sha256.slice(0, 16),
    task,
    decision: options.decision,
    proposal: screenText(proposal),
  });
  return async () => {
    // Each persona's file has its own lock, so they are saved at once; every save settles before a failure is reported.
    const saved = await Promise.allSettled(
      personas.map((id) => {
        const passages = runPassages({
          runId: state.run_id,
          at: state.created_at,
          persona: id,
          task,
          steps: run.state.steps,
          screen: screenText,
        });
        return deps.sessions.appendRun(id, state.run_id, { summary, passages }, { retry: options.resumedEnding === true });
      }),
    );
    const failed = saved.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
    // A memory file corrupted while the run worked was moved aside by its save: said as a load says it.
    const recovered = personas.flatMap((id, i) => {
      const found = (saved[i] as PromiseFulfilledResult<SessionLoad['recovered']>).value;
      if (!found) return [];
      deps.onProgress?.({ kind: 'notice', run_id: state.run_id, message: corruptSessionNotice(id, found) });
      return [auditEvent('SESSION_RECOVERED', runDecision('session', 'SESSION_CORRUPT_MOVED_ASIDE'), { persona: id })];
    });
    // Recorded with the run's end (a crash before it completes the ending again: the saves are idempotent by run id).
    return [...recovered, auditEvent('SESSIONS_SAVED', runDecision('session', 'SESSION_SAVED'), { personas })];
  };
}

/** The outcome line of a completed run: the verdict, how the council agreed, and what the calls cost. */
function completedMessage(options: {
  arbitration: ArbitrationResult;
  cleared: boolean;
  usage: ReturnType<typeof totalUsage>;
  notes: string;
  rehearsal: boolean;
}): string {
  const { arbitration, usage } = options;
  const verdictWord = options.cleared ? `continued by a person over the council's ${arbitration.final_action}` : arbitration.final_action;
  const cost = usage.cost_usd !== undefined && usage.cost_usd > 0 ? `, $${usage.cost_usd.toFixed(4)}` : '';
  const calls = `${usage.calls} model calls, ${usage.prompt_tokens} prompt (${promptBreakdown(usage)}) + ${usage.completion_tokens} completion tokens${cost}`;
  const agreement = `${arbitration.strategy}, ${supportWords(arbitration)}`;
  // The offline model's council is canned: the outcome line says so, as its artifact does.
  const rehearsal = options.rehearsal ? ' · an offline rehearsal: canned replies, not advice (name a model route for real answers)' : '';
  return `completed: ${verdictWord} (${agreement}) · ${calls}${options.notes}${rehearsal}`;
}
