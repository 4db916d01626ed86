import { auditEvent } from '../domain/audit.js';
import { screenText } from '../domain/screen.js';
import type { ReasonCode } from '../domain/codes.js';
import { runDecision } from '../domain/decision.js';
import { decideRun, type Ending } from '../domain/run/policy.js';
import { explainArbitrationPause } from '../domain/stop-explanation.js';
import type { DeliberationMode, ModeContext } from '../domain/modes/mode.js';
import type { StartedRun } from '../domain/ports.js';
import type { HistoryMessage } from '../domain/session-state.js';
import { approvedReasons, wasRehearsal } from '../domain/run-state.js';
import { totalUsage } from '../domain/usage.js';
import { settleRun, type DraftInput } from './settle-run.js';
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
  const councilReason: ReasonCode =
    arbitration.final_action === 'proceed'
      ? 'ARBITRATION_PROCEED'
      : arbitration.conflicts.length > 0 && arbitration.agreement < 1
        ? 'REL_ARBITRATION_CONFLICT'
        : arbitration.final_action === 'investigate'
          ? 'ARBITRATION_INVESTIGATE'
          : 'ARBITRATION_ESCALATE';
  // Only a readable verdict is the council's doubt: when no readable verdict doubted, the verdicts that
  // kept the run from proceeding could not be read, which is an outage of their route.
  const readableDoubt = conclusion.verdicts.some((v) => v.valid && v.action !== 'proceed');
  const doubt: Ending = readableDoubt
    ? decideRun({ kind: 'council_doubt', reason: councilReason })
    : decideRun({ kind: 'reply_unreadable', call: ctx.plan.mode === 'parallel' ? 'assessment' : 'verdict' });
  // A person who chose `continue` on this very pause has cleared it; the council's verdict stays on record.
  const cleared = arbitration.final_action !== 'proceed' && approvedReasons(state).has(doubt.decision.reason_code);
  const proceed = arbitration.final_action === 'proceed' || cleared;
  const decision = proceed ? runDecision('arbitration', cleared ? 'ARBITRATION_CLEARED_BY_PERSON' : councilReason) : doubt.decision;
  const arbitrated = auditEvent('ARBITRATED', decision, {
    strategy: arbitration.strategy,
    final_action: arbitration.final_action,
    agreement: Math.round(arbitration.agreement * 1000) / 1000,
    votes: arbitration.votes,
    invalid_verdicts: conclusion.verdicts.filter((v) => !v.valid).map((v) => v.persona),
    ...conclusion.audit,
    ...(cleared ? { cleared_by_person: doubt.decision.reason_code } : {}),
    ...(!proceed && !readableDoubt ? { unreadable_verdicts: conclusion.verdicts.filter((v) => !v.valid).map((v) => v.persona) } : {}),
  });
  // A run concluded again to complete its ending (after a restart) does not record the arbitration
  // twice. When the arbitration lets the run go on, its decision joins the trail with its record.
  const resumedEnding = state.finishing !== undefined;
  const decided = proceed && !resumedEnding ? { event: { type: 'decided' as const, decision } } : {};
  await run.commit({ ...decided, records: [arbitrated], completesEnding: resumedEnding });
  deps.onProgress?.({
    kind: 'arbitrated',
    run_id: state.run_id,
    strategy: arbitration.strategy,
    final_action: arbitration.final_action,
    agreement: arbitration.agreement,
    reasoning: arbitration.reasoning,
    votes: { ...arbitration.votes },
  });

  const plan = state.plan ?? ctx.plan;
  const draft: DraftInput = {
    runId: state.run_id,
    task: ctx.task,
    inputArtifacts: state.command.input_artifacts,
    plan,
    personaNames: new Map([...ctx.personas.values()].map((p) => [p.id, p.name])),
    startedAt: state.created_at,
    rehearsal: wasRehearsal(state) ?? options.rehearsal,
    steps: state.steps,
    verdicts: conclusion.verdicts,
    arbitration,
    proposal: conclusion.proposal,
    prices: deps.config.prices,
    reroutes: state.reroutes,
    sections: conclusion.sections,
  };
  // What the mode wants people to see on the outcome line (e.g. which guardrail ended a loop).
  const notes = (conclusion.notes ?? []).map((n) => ` · ${n}`).join('');
  if (!proceed) {
    const message =
      explainArbitrationPause({
        runId: state.run_id,
        reason: doubt.decision.reason_code as ReasonCode,
        arbitration,
        verdicts: conclusion.verdicts,
        names: draft.personaNames,
      }) + notes;
    return settleRun({ run, deps, ending: doubt, message, draft, requestPlan });
  }
  if (conclusion.guardrail) {
    // Seed 002: a guardrail's stop is explicit and observable — its own status and exit code, the
    // artifact says so, and the council's memory is not saved (the run did not complete).
    const ending = decideRun({ kind: 'guardrail', reason: conclusion.guardrail.reason });
    const message = `${conclusion.guardrail.note}; the council's verdict was ${arbitration.final_action}`;
    return settleRun({ run, deps, ending, message, draft, attachments: conclusion.attachments });
  }

  // Successful end: the artifact is written, then the session states are saved (persistent council) —
  // only once the artifact is on disk, so a failed write never leaves memory of a run that produced nothing.
  const saveSessions = async (): Promise<void> => {
    // Each persona's file has its own lock, so they are saved at once; every save settles before a failure is reported.
    const saved = await Promise.allSettled(
      plan.personas.map((id) => {
        // Memory outlives the run: what it keeps is screened (a task sent as it was given stays out of it).
        const messages: HistoryMessage[] = run.state.steps
          .filter((s) => s.persona === id)
          .flatMap((s) => [
            { role: 'user' as const, content: screenText(s.prompt), run_id: state.run_id, ts: s.started_at },
            { role: 'assistant' as const, content: screenText(s.reply), run_id: state.run_id, ts: s.started_at },
          ]);
        return deps.sessions.appendRun(id, state.run_id, messages);
      }),
    );
    const failed = saved.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
    const record = auditEvent('SESSIONS_SAVED', runDecision('session', 'SESSION_SAVED'), { personas: plan.personas });
    await run.commit({ records: [record], completesEnding: resumedEnding });
  };
  const usage = totalUsage(run.state.steps, deps.config.prices);
  const verdictWord = cleared ? `continued by a person over the council's ${arbitration.final_action}` : arbitration.final_action;
  return settleRun({
    run,
    deps,
    ending: decideRun({ kind: 'completed' }),
    message: `completed: ${verdictWord} (${arbitration.strategy}, agreement ${(arbitration.agreement * 100).toFixed(0)}%) · ${usage.calls} model calls, ${usage.prompt_tokens} prompt + ${usage.completion_tokens} completion tokens${usage.cost_usd !== undefined && usage.cost_usd > 0 ? `, $${usage.cost_usd.toFixed(4)}` : ''}${notes}`,
    draft,
    attachments: conclusion.attachments,
    afterArtifact: saveSessions,
  });
}
