import { actionSupport, supportWords, type ArbitrationResult } from './arbitration.js';
import { ARTIFACT_HEADING } from './artifact-place.js';
import type { Price } from './budget.js';
import { CLASSIFICATION_ENTRY, LOOP_PLAN_ENTRY, runCalls, SPLIT_LABELS, SPLIT_PARTS, totalUsage, usageByPersona } from './usage.js';
import { type DecisionRecord, trailSaidOnce } from './decision.js';
import type { RunPlan, Step } from './run-state.js';
import type { Verdict } from './verdict.js';
import type { ArtifactSection } from './modes/mode.js';
import { explainReason } from './codes.js';
import { screenText } from './screen.js';

export interface ArtifactInput {
  readonly runId: string;
  readonly task: string;
  readonly inputArtifacts: readonly string[];
  readonly plan: RunPlan;
  readonly personaNames: ReadonlyMap<string, string>;
  readonly status: 'completed' | 'paused' | 'stopped' | 'guardrail_stopped';
  readonly startedAt: string;
  readonly finishedAt: string;
  readonly durationMs: number;
  /** True when the replies came from the offline rehearsal model. */
  readonly rehearsal: boolean;
  readonly steps: readonly Step[];
  /** The mediator's classification, when a real route's model was asked: its calls count with the council's. */
  readonly classification?: { readonly model: string; readonly calls: number; readonly usage?: Step['usage'] } | undefined;
  /** The loop policy's plan, when the run asked for it (the orchestrator's call): counted as the others. */
  readonly plan_call?: { readonly model: string; readonly calls: number; readonly usage?: Step['usage'] } | undefined;
  readonly verdicts: readonly Verdict[];
  readonly arbitration?: ArbitrationResult;
  readonly proposal: string;
  readonly trail: readonly DecisionRecord[];
  /** Why the run paused or stopped, for people. */
  readonly outcomeNote?: string;
  /** Prices for the cost column (USD per million tokens). */
  readonly prices?: Readonly<Record<string, Price>>;
  readonly reroutes?: readonly { persona: string; from: string; to: string; reason_code: string; at_step: number }[];
  /** Sections the deliberation mode adds (parallel: the assessments, the composition). */
  readonly sections?: readonly ArtifactSection[];
  /** Pictures written beside the artifact, linked by file name. */
  readonly pictures?: readonly { file: string; alt: string }[];
}

export { ARTIFACT_HEADING };

const REHEARSAL_BANNER = [
  "> **OFFLINE REHEARSAL — not a model's opinion.** Every reply below was produced by maestro's built-in",
  '> offline model, a deterministic script that exercises the pipeline (knowledge requests, verdicts,',
  '> arbitration) without any network. Configure a real model route to get real deliberation.',
].join('\n');

/**
 * Renders the run's Markdown artifact. Deterministic for the same input: each section in order. What
 * it says is screened (screen.ts): a task a person chose to send to the council as it was is still
 * not kept raw.
 */
export function renderArtifact(input: ArtifactInput): string {
  // The task first, whole: its heading is cut short, and a value cut in half would no longer be found.
  // A run that made no model call has no rehearsed reply to warn about (a gate or a person stopped it first).
  const rehearsal = input.rehearsal && totalUsage(runCalls(input), {}).calls > 0;
  const a = { ...input, task: screenText(input.task), rehearsal };
  const sections = [
    header,
    runTable,
    usageSection,
    transcriptSection,
    knowledgeSection,
    verdictsSection,
    modeSections,
    proposalSection,
    trailSection,
  ];
  return screenText(sections.flatMap((section) => section(a)).join('\n'));
}

function header(a: ArtifactInput): string[] {
  const out = [`${ARTIFACT_HEADING}${oneLine(a.task, 90)}`, ''];
  if (a.rehearsal) out.push(REHEARSAL_BANNER, '');
  if (a.status !== 'completed')
    out.push(
      `> **Status: ${a.status === 'guardrail_stopped' ? 'STOPPED BY A GUARDRAIL' : a.status.toUpperCase()}.** ${a.outcomeNote ?? ''}`.trimEnd(),
      '',
    );
  out.push('## Task', '', fence(a.task), '');
  if (a.inputArtifacts.length > 0) out.push(`Input artifacts: ${a.inputArtifacts.map((p) => `\`${p}\``).join(', ')}`, '');
  return out;
}

function runTable(a: ArtifactInput): string[] {
  const models = [...new Set(runCalls(a).map((s) => s.model))];
  return [
    '## Run',
    '',
    '| | |',
    '|---|---|',
    `| Run id | \`${a.runId}\` |`,
    `| Status | ${a.status} |`,
    `| Personas (speaker order) | ${a.plan.personas.map((id) => `${a.personaNames.get(id) ?? id} (\`${id}\`)`).join(', ')} |`,
    ...(a.plan.mode === 'round_robin' ? [`| Rounds | ${a.plan.rounds} |`] : []),
    `| Mode | ${a.plan.mode} |`,
    `| Arbitration | ${a.plan.arbitration} |`,
    `| Synthesizer | \`${a.plan.synthesizer}\` |`,
    `| Model | ${models.length > 0 ? models.join(', ') : a.plan.model}${a.rehearsal ? ' — offline rehearsal' : ''} |`,
    `| Model calls | ${totalUsage(runCalls(a), a.prices ?? {}).calls} |`,
    `| Started | ${a.startedAt} |`,
    `| Finished | ${a.finishedAt} |`,
    `| Duration | ${(a.durationMs / 1000).toFixed(2)} s |`,
    '',
  ];
}

function usageSection(a: ArtifactInput): string[] {
  const prices = a.prices ?? {};
  const calls = runCalls(a);
  const total = totalUsage(calls, prices);
  const parts = SPLIT_PARTS.map((k) => SPLIT_LABELS[k]);
  const head = ['Persona', 'Calls', 'Prompt tokens', ...parts.map((p) => `of which ${p}`), 'Cached', 'Completion tokens', 'Cost (USD)'];
  const out = ['## Usage', '', `| ${head.join(' | ')} |`, `|${head.map(() => '---|').join('')}`];
  const row = (name: string, t: ReturnType<typeof totalUsage>): string =>
    `| ${[name, t.calls, t.prompt_tokens, ...SPLIT_PARTS.map((k) => t.prompt_split[k]), t.cached_tokens, t.completion_tokens, money(t.cost_usd)].join(' | ')} |`;
  const rows = [...(a.classification ? [CLASSIFICATION_ENTRY] : []), ...a.plan.personas, ...(a.plan_call ? [LOOP_PLAN_ENTRY] : [])];
  for (const { persona, totals } of usageByPersona(calls, rows, prices)) out.push(row(`\`${persona}\``, totals));
  out.push(row('**total**', total), '');
  if (a.rehearsal) out.push('_Token counts of the offline rehearsal are estimates (characters ÷ 4)._', '');
  if ((a.reroutes ?? []).length > 0) {
    out.push(
      'Reroutes:',
      '',
      ...(a.reroutes ?? []).map((r) => `- \`${r.persona}\`: ${r.from} → ${r.to} (${r.reason_code}, before step ${r.at_step + 1})`),
      '',
    );
  }
  return out;
}

function transcriptSection(a: ArtifactInput): string[] {
  const out = ['## Transcript', ''];
  // Every round that has turns, in order (a supervisor loop's iterations are its rounds).
  const rounds = [...new Set(a.steps.filter((s) => s.kind === 'turn').map((s) => s.round))].sort((x, y) => x - y);
  if (rounds.length === 0) out.push(`_No turns in ${a.plan.mode} mode: its replies are in the sections below._`, '');
  for (const round of rounds) {
    const turns = a.steps.filter((s) => s.kind === 'turn' && s.round === round);
    out.push(`### ${a.plan.mode === 'supervisor' ? 'Iteration' : 'Round'} ${round}`, '');
    for (const s of turns) {
      out.push(`#### ${a.personaNames.get(s.persona) ?? s.persona} \`${s.persona}\` · ${s.model}`, '', s.reply.trim(), '');
      for (const k of s.knowledge) out.push(`> ${knowledgeLine(k)}`, '');
    }
  }
  return out;
}

function knowledgeSection(a: ArtifactInput): string[] {
  const requests = a.steps.flatMap((s) => s.knowledge.map((k) => ({ persona: s.persona, round: s.round, k })));
  if (requests.length === 0) return ['## Knowledge requests', '', 'None.', ''];
  const out = ['## Knowledge requests', '', '| Round | Persona | Request | Outcome | Size | SHA-256 |', '|---|---|---|---|---|---|'];
  for (const { persona, round, k } of requests) {
    const outcome = k.status === 'provided' ? (k.truncated ? 'provided (truncated)' : 'provided') : `${k.status}: ${cell(k.message)}`;
    out.push(
      `| ${round} | \`${persona}\` | ${cell(`${k.action}(${k.argument})`)} | ${outcome} | ${k.bytes ?? ''} | ${k.sha256 ? `\`${k.sha256.slice(0, 16)}…\`` : ''} |`,
    );
  }
  out.push('');
  return out;
}

function verdictsSection(a: ArtifactInput): string[] {
  const out = ['## Verdicts', ''];
  if (a.verdicts.length === 0) out.push('No verdicts were given.', '');
  else {
    out.push('| Persona | Action | Confidence | Rationale |', '|---|---|---|---|');
    for (const v of a.verdicts) {
      out.push(`| \`${v.persona}\` | ${v.action}${v.valid ? '' : ' (fail-closed)'} | ${v.confidence.toFixed(2)} | ${cell(v.rationale)} |`);
    }
    out.push('');
  }
  if (!a.arbitration) return out;
  const { strategy, final_action, reasoning, agreement, confidence, conflicts } = a.arbitration;
  const support = actionSupport(a.arbitration);
  out.push(
    `**Arbitration (${strategy}):** ${final_action}. ${reasoning}.`,
    '',
    `Support for ${final_action}: ${supportWords(a.arbitration)} (${pct(support.share)}) · weight of the winning action: ${pct(confidence)} · agreement (the most common action's share, whichever won): ${pct(agreement)}`,
    '',
  );
  if (conflicts.length > 0) out.push('Dissent:', '', ...conflicts.map((c) => `- ${oneLine(c, 300)}`), '');
  return out;
}

function modeSections(a: ArtifactInput): string[] {
  const out = (a.sections ?? []).flatMap((section) => [`## ${section.title}`, '', section.markdown.trim(), '']);
  if ((a.pictures ?? []).length > 0) {
    out.push('## Pictures', '');
    for (const p of a.pictures ?? []) out.push(`![${p.alt}](${encodeURI(p.file)})`, '');
  }
  return out;
}

function proposalSection(a: ArtifactInput): string[] {
  return ['## Final proposal', '', a.proposal.trim().length > 0 ? a.proposal.trim() : '_No final proposal was written._', ''];
}

function trailSection(a: ArtifactInput): string[] {
  const out = ['## Decision trail', '', '| Layer | Decision | Reason | Meaning | Sealed | Decider |', '|---|---|---|---|---|---|'];
  for (const d of trailSaidOnce(a.trail))
    out.push(
      `| ${d.layer} | ${d.decision} | ${d.reason_code} | ${cell(explainReason(d.reason_code))} | ${d.sealed ? 'yes' : 'no'} | ${d.final_decider} |`,
    );
  out.push('');
  return out;
}

function knowledgeLine(k: Step['knowledge'][number]): string {
  const call = `\`${k.action}(${k.argument.replace(/`/g, "'")})\``;
  if (k.status === 'provided') return `Orchestrator: ${call} → provided ${k.bytes ?? 0} bytes${k.truncated ? ' (truncated)' : ''}`;
  return `Orchestrator: ${call} → ${k.status}: ${k.message}`;
}

function money(usd: number | undefined): string {
  return usd === undefined ? 'unknown (no price)' : usd.toFixed(4);
}

function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

function cell(text: string): string {
  return oneLine(text, 200).replace(/\|/g, '\\|');
}

function fence(text: string): string {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const ticks = '`'.repeat(longest + 1);
  return `${ticks}text\n${text}\n${ticks}`;
}

const pct = (share: number): string => `${(share * 100).toFixed(0)}%`;
