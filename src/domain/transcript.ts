import { trailSaidOnce } from './decision.js';
import { describeFloor } from './floor/describe.js';
import type { RunState, Step } from './run-state.js';
import { parseVerdict } from './verdict.js';
import { screenText } from './screen.js';
import { servedByRun, servedLabel } from './served-by.js';
import type { Price } from './budget.js';
import { promptBreakdown, runCalls, totalUsage } from './usage.js';
import { withoutMoveOn } from './stop-explanation.js';

/**
 * A run's whole story as Markdown, for `maestro show`: what was asked, every reply in order with
 * its knowledge requests, the verdicts, the decision trail and the outcome (with what to do next).
 * `shown` is the status as readers derive it (`interrupted` for a running run nobody holds).
 */
export function renderTranscript(state: RunState, shown: string = state.status, options: TranscriptOptions = {}): string {
  // The state is screened as it is kept; what is printed is screened again (paths, labels, old files).
  return screenText(renderUnscreened(state, shown, options.audience ?? 'terminal', options.prices ?? {}));
}

/** Who reads the transcript: someone at a terminal (`maestro show`), or on the console's page of the run (its buttons move it on). */
export type Audience = 'terminal' | 'console';

export interface TranscriptOptions {
  readonly audience?: Audience;
  /** The workspace's prices (`prices.<model>`), for the run's cost. */
  readonly prices?: Readonly<Record<string, Price>>;
}

function renderUnscreened(state: RunState, shown: string, audience: Audience, prices: Readonly<Record<string, Price>>): string {
  const out: string[] = [];
  out.push(`# Run ${state.run_id} — ${shown}`, '');
  out.push(`- Command: ${state.source}`);
  if (state.plan) {
    out.push(
      `- Council: ${state.plan.personas.join(', ')} · ${state.plan.rounds} round(s) · arbitration ${state.plan.arbitration} · synthesizer ${state.plan.synthesizer}`,
    );
    out.push(`- Model: ${servedLabel(state.plan.model, servedByRun(state))}`);
  }
  out.push(
    `- Started: ${state.created_at}${state.finished_at ? ` · finished: ${state.finished_at}` : ` · last checkpoint: ${state.updated_at}`}`,
  );
  // The mediator's classification is a model call like the council's (as in runs, status and the artifact).
  const used = totalUsage(runCalls(state), prices);
  const cost = used.cost_usd === undefined ? '' : ` · $${used.cost_usd.toFixed(4)}`;
  out.push(`- Model calls: ${used.calls} · ${used.prompt_tokens} prompt + ${used.completion_tokens} completion tokens${cost}`);
  if (used.prompt_tokens > 0) out.push(`- Prompt tokens: ${promptBreakdown(used)}`);
  if (state.artifact) {
    const taken = state.finishing?.artifact?.taken;
    out.push(`- Artifact: ${state.artifact}${taken ? ` (not at ${taken.path}: that holds ${taken.by}, left as it is)` : ''}`);
  }
  out.push('', '## Task', '', state.command.task_description.trim(), '');
  if (state.command.input_artifacts.length > 0) out.push(`Inputs: ${state.command.input_artifacts.map((p) => `\`${p}\``).join(', ')}`, '');
  if (state.floor) out.push('## The floor', '', ...describeFloor(state.floor).map((l) => `- ${l}`), '');

  out.push('## Transcript', '');
  if (state.classification) out.push(...renderClassification(state));
  if (state.steps.length === 0 && !state.classification) out.push('_No model was called._', '');
  for (const step of state.steps) out.push(...renderStep(step));

  const verdicts = state.steps
    .filter((s) => s.kind === 'verdict')
    .map((s) => parseVerdict(s.id.startsWith('reviewer:') ? `${s.persona} (reviewer)` : s.persona, s.reply));
  if (verdicts.length > 0) {
    out.push('## Verdicts', '', '| persona | action | confidence | rationale |', '|---|---|---:|---|');
    for (const v of verdicts)
      out.push(`| ${v.persona} | ${v.action}${v.valid ? '' : ' (fail-closed)'} | ${v.confidence.toFixed(2)} | ${cell(v.rationale)} |`);
    out.push('');
  }

  out.push('## Decision trail', '');
  if (state.trail.length === 0) out.push('_No decision yet._');
  else {
    out.push('| # | layer | decision | reason | decided by |', '|---:|---|---|---|---|');
    for (const [i, d] of trailSaidOnce(state.trail).entries()) {
      out.push(`| ${i + 1} | ${d.layer} | ${d.decision}${d.sealed ? ' (sealed)' : ''} | ${d.reason_code} | ${d.final_decider} |`);
    }
  }
  for (const h of state.hitl)
    out.push(
      '',
      `${h.by ? `${h.by.name} (via the ${h.by.via})` : 'A person'} decided **${h.decision}** on pause ${h.pause_id} (${h.reason_code}) at ${h.decided_at}${h.note ? `: ${h.note}` : ''}.`,
    );
  const summary = state.summary?.trim();
  out.push('', '## Outcome', '', (audience === 'console' && summary ? withoutMoveOn(summary) : summary) || `The run is ${shown}.`);
  const next = (audience === 'console' ? CONSOLE_NEXT : OUTCOME_NEXT)[shown];
  if (next) out.push('', next(state.run_id));
  return `${out.join('\n')}\n`;
}

/** What the outcome section adds, by the status shown: what to do next, or who is at it. */
const OUTCOME_NEXT: Readonly<Partial<Record<string, (runId: string) => string>>> = {
  paused: (id) => `Decide with \`maestro hitl decide ${id} continue|stop\` (see \`maestro hitl show ${id}\`).`,
  running: () => 'Not finished: a live maestro process is running it now (see `maestro status`).',
  interrupted: (id) =>
    `Interrupted: no live process is running it. \`maestro run --resume ${id}\` resumes it from its checkpoint ` +
    '(finished model calls are not repeated).',
  continued: (id) =>
    `Continued by a person: the next \`maestro watch\` resumes it, or \`maestro run --resume ${id}\` now ` +
    '(finished model calls are not repeated).',
};

/** The same, on the console's page of the run, where buttons move it on. */
const CONSOLE_NEXT: typeof OUTCOME_NEXT = {
  paused: () => 'It waits for a person: decide it at the top of this page.',
  running: () => 'Not finished: a live maestro process runs it now; this page follows it.',
  interrupted: () =>
    'Interrupted: nobody runs it now. **Resume** at the top of this page carries it on from its checkpoint (finished model calls are not repeated).',
  continued: () =>
    'Continued by a person, not taken up yet. **Resume** at the top of this page carries it on from its checkpoint (finished model calls are not repeated).',
};

/** The mediator's classification: a model call before the council's, with the route/model that answered and what it found. */
function renderClassification(state: RunState): string[] {
  const c = state.classification;
  if (!c) return [];
  const a = state.advice;
  const list = (xs: readonly string[]) => (xs.length > 0 ? xs.join(', ') : 'none');
  const found = a
    ? `acts: ${list(a.acts.map((x) => (x.object ? `${x.class} (${x.object})` : x.class)))} · particular cases: ${list(a.high_stakes_case)} · intent clear: ${a.intent_clear ? 'yes' : 'no'}`
    : '_(no classification kept)_';
  return ['### mediator · task classification', '', `_${c.model}${c.calls > 1 ? ` · ${c.calls} calls` : ''}_`, '', found, ''];
}

function renderStep(step: Step): string[] {
  const what = STEP_WORDS[step.kind]?.(step) ?? step.kind;
  const lines = [
    `### ${step.persona} · ${what}`,
    '',
    `_${step.model} · ${step.duration_ms} ms${step.calls > 1 ? ` · ${step.calls} calls` : ''}_`,
    '',
    step.reply.trim() || '_(empty reply)_',
    '',
  ];
  for (const k of step.knowledge) {
    const detail =
      k.status === 'provided'
        ? `provided${k.path ? ` \`${k.path}\`` : ''}${k.bytes !== undefined ? `, ${k.bytes} bytes` : ''}${k.truncated ? ', truncated' : ''}`
        : `${k.status}: ${k.message}`;
    lines.push(`> ${k.action}(${k.argument}) → ${detail}`);
  }
  if (step.knowledge.length > 0) lines.push('');
  return lines;
}

const STEP_WORDS: Partial<Record<Step['kind'], (step: Step) => string>> = {
  turn: (s) => (s.id.startsWith('turn:i') ? `iteration ${s.round}` : `round ${s.round}`),
  verdict: (s) => (s.id.startsWith('reviewer:') ? 'reviewer gate' : 'verdict'),
  synthesis: () => 'final proposal',
  assessment: () => 'assessment',
  review: () => 'anonymous review',
  decision: (s) => `supervisor decision, iteration ${s.round}`,
  item: (s) => `work item ${s.id.replace(/^item:/, '')}`,
};

function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}
