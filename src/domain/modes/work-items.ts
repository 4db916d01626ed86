import { investigateOver } from '../arbitration.js';
import { canonicalJson } from '../audit-chain.js';
import { composeBriefing } from '../briefing.js';
import { findContradictions, type Contradiction } from '../contradictions.js';
import type { WorkItem } from '../command-file.js';
import type { Step } from '../run-state.js';
import { parseVerdict, type Verdict } from '../verdict.js';
import { callTimes, clip } from './conversation.js';
import type { ArtifactSection, Conclusion, DeliberationMode, ModeContext, ModeNext, StepSpec } from './mode.js';
import { arbitrateWithReviewer, reviewerSection, reviewerStep, reviewerStepId, reviewerVerdictOf } from './reviewer-gate.js';
import { roundRobinMode } from './round-robin.js';
import { readModeSettings } from './settings.js';

/**
 * Work items (seed 003): each item is its assigned persona run directly on the item — the very run
 * `config.personas: [agent]`, one round, would make on the item as its task (parity): its turn (a
 * file it asks for reaches it in its next prompt), its own verdict, its own final proposal, which is
 * the item's output, unchanged. Items see the structured shared context (the task, the facts, the
 * input artifacts) and nothing of any other item; they run in order, or at once with
 * `parallel_items`. The orchestrator is code-first (seed 003: no model calls of its own): the
 * outputs are merged in item order with explicit boundaries, whatever order they finished in; the
 * contradiction check is deterministic; each item's own verdict holds its item, and the run goes on
 * only when every item's does (the most cautious stands). Only a reviewer the command names
 * (`config.reviewer`, an agent of its own) is asked anything about the merge.
 */
export const workItemsMode: DeliberationMode = {
  name: 'work_items',
  next(ctx, done): ModeNext {
    const settings = readModeSettings(ctx.plan.settings);
    const items = itemsOf(ctx);
    const pending = items.flatMap((item) => {
      const spec = nextItemStep(ctx, item, done);
      return spec ? [spec] : [];
    });
    // In order: one item at a time, each to its end, unless they run at once.
    if (pending.length > 0)
      return { kind: 'steps', steps: settings.parallelItems ? pending : pending.slice(0, 1), concurrent: settings.parallelItems };
    if (settings.reviewer && !done.some((s) => s.id === reviewerStepId(settings.reviewer ?? ''))) {
      const subject = { title: 'The merged result of the work items', text: mergeWorkItems(items, done) };
      return { kind: 'steps', steps: [reviewerStep(ctx, settings.reviewer, subject, 0)], concurrent: false };
    }
    return { kind: 'conclude' };
  },
  conclude(ctx, done): Conclusion {
    const settings = readModeSettings(ctx.plan.settings);
    const items = itemsOf(ctx);
    const verdicts = items.flatMap((item) => {
      const verdict = itemVerdict(item, done);
      return verdict ? [verdict] : [];
    });
    const review = reviewerVerdictOf(done);
    const contradictions = itemContradictions(items, done, ctx.command?.facts);
    const sections: ArtifactSection[] = [
      { title: 'Work items', markdown: itemsSection(ctx, items, done, settings.parallelItems) },
      { title: 'Contradiction check', markdown: contradictionSection(contradictions, items.length) },
    ];
    if (review) sections.push({ title: 'Reviewer gate', markdown: reviewerSection(review) });
    // Code-first: no call decides here. Each item's own verdict stands for it, the most cautious for the run.
    const codeFirst = { ...ctx, plan: { ...ctx.plan, arbitration: 'pessimistic' as const } };
    return {
      verdicts: review ? [...verdicts, review] : verdicts,
      arbitration: investigateOver(
        arbitrateWithReviewer(codeFirst, verdicts, review),
        contradictions.map((c) => `items ${c.first.id} and ${c.second.id} contradict each other on "${c.subject}"`),
        `${contradictions.length} contradiction(s) between the items' results`,
      ),
      proposal: workItemsProposal(items, done),
      sections,
      attachments: [],
      audit: {
        mode: 'work_items',
        items: items.length,
        parallel_items: settings.parallelItems,
        finished_order: done
          .filter((s) => s.kind === 'synthesis' && s.id.startsWith('item:'))
          .sort((a, b) => a.index - b.index)
          .map((s) => s.id.replace(/:synthesis$/, '')),
        contradictions: contradictions.length,
        ...(review ? { reviewer: review.reviewer, reviewer_action: review.action } : {}),
      },
      notes: [`work items: ${items.length} merged in item order${settings.parallelItems ? ' (run at once)' : ''}`],
    };
  },
};

export const itemStepId = (id: string): string => `item:${id}`;

/** An item's steps under their own ids, and the ids its direct run gives the same steps. */
const STEP_OF = { item: 'turn', verdict: 'verdict', synthesis: 'synthesis' } as const;
function itemIds(item: WorkItem): Record<'turn' | 'verdict' | 'synthesis', string> {
  return { turn: itemStepId(item.id), verdict: `${itemStepId(item.id)}:verdict`, synthesis: `${itemStepId(item.id)}:synthesis` };
}

/**
 * The item's direct run: the context a one-persona, one-round run of its agent has, on the item as
 * its task — the briefing (that task and the input artifacts), its agent alone in the plan, without
 * its memory unless `item_memory`.
 */
function itemRun(ctx: ModeContext, item: WorkItem): ModeContext {
  const screen = ctx.screen ?? ((t: string) => t);
  const task = screen(workItemTask(item, { task: ctx.command?.task_description ?? ctx.task, facts: ctx.command?.facts }));
  const agent = item.assigned_agent;
  return {
    ...ctx,
    task,
    briefing: composeBriefing({ task, inputs: ctx.inputs ?? [] }),
    plan: { ...ctx.plan, mode: 'round_robin', personas: [agent], synthesizer: agent, rounds: 1 },
    memories: readModeSettings(ctx.plan.settings).itemMemory ? ctx.memories : new Map(),
  };
}

/** The item's steps as its direct run knows them (the ids and kinds a one-persona run gives them). */
function directSteps(item: WorkItem, done: readonly Step[]): Step[] {
  const ids = itemIds(item);
  return done.flatMap((s) => {
    if (s.id === ids.turn) return [{ ...s, id: `turn:r1:${item.assigned_agent}`, kind: 'turn' as const }];
    if (s.id === ids.verdict) return [{ ...s, id: `verdict:${item.assigned_agent}` }];
    if (s.id === ids.synthesis) return [{ ...s, id: 'synthesis' }];
    return [];
  });
}

/** The item's next call: the next call of its direct run, under the item's own ids (undefined when it is done). */
function nextItemStep(ctx: ModeContext, item: WorkItem, done: readonly Step[]): StepSpec | undefined {
  const next = roundRobinMode.next(itemRun(ctx, item), directSteps(item, done));
  if (next.kind !== 'steps') return undefined;
  const [spec] = next.steps;
  if (!spec) return undefined;
  const kind = spec.kind === 'turn' ? 'item' : spec.kind;
  const as = STEP_OF[kind as keyof typeof STEP_OF] ?? 'turn';
  return { ...spec, id: itemIds(item)[as], kind, ...(kind === 'item' ? { purpose: 'item' as const } : {}) };
}

function itemsOf(ctx: ModeContext): readonly WorkItem[] {
  return ctx.command?.work_items ?? [];
}

/** An item's output: its agent's own final proposal, as it wrote it (undefined until the item is done). */
export function itemOutput(item: WorkItem, done: readonly Step[]): Step | undefined {
  return done.find((s) => s.id === itemIds(item).synthesis);
}

/** The item's own verdict, under the item's name (its agent may do several items). */
function itemVerdict(item: WorkItem, done: readonly Step[]): Verdict | undefined {
  const step = done.find((s) => s.id === itemIds(item).verdict);
  return step ? { ...parseVerdict(step.persona, step.reply), persona: itemLabel(item) } : undefined;
}

const itemLabel = (item: WorkItem): string => `${item.assigned_agent} (item ${item.id})`;

/**
 * The task one item is, as its persona reads it: the goal first, then the shared context (the larger
 * task and the facts, the same for every item) and the item's own inputs and expected output. It
 * depends on nothing but the command, so no item can see another's state.
 */
export function workItemTask(item: WorkItem, shared: { task: string; facts?: Readonly<Record<string, unknown>> | undefined }): string {
  const lines = [
    item.goal.trim(),
    '',
    `This is work item "${item.id}" of a larger task. Work on this item only.`,
    `The larger task: ${shared.task.trim()}`,
  ];
  if (shared.facts && Object.keys(shared.facts).length > 0)
    lines.push(`Shared facts (the same for every item): ${canonicalJson(shared.facts)}`);
  if (Object.keys(item.inputs).length > 0) lines.push(`Inputs of this item: ${canonicalJson(item.inputs)}`);
  const expected = expectedOf(item);
  if (expected) lines.push(`Expected output: ${expected}`);
  return lines.join('\n');
}

function expectedOf(item: WorkItem): string {
  if (typeof item.expected_output === 'string') return item.expected_output.trim();
  return Object.keys(item.expected_output).length > 0 ? canonicalJson(item.expected_output) : '';
}

/**
 * The run's final proposal (seed 003, stage 8.2): one item's output as its agent wrote it, unchanged;
 * several items' merge.
 */
export function workItemsProposal(items: readonly WorkItem[], done: readonly Step[]): string {
  const [only] = items;
  if (items.length === 1 && only) return itemOutput(only, done)?.reply ?? '';
  return mergeWorkItems(items, done);
}

/**
 * The deterministic merge (stage 8.2.1): every item in the command's order, each output unchanged
 * between explicit boundaries, whatever order the items finished in (a missing output says so).
 */
export function mergeWorkItems(items: readonly WorkItem[], done: readonly Step[]): string {
  const blocks = items.map((item, i) => {
    const step = itemOutput(item, done);
    const expected = expectedOf(item);
    return [
      `### Work item ${i + 1} of ${items.length}: \`${item.id}\` · ${item.assigned_agent}`,
      '',
      `**Goal:** ${clip(item.goal)}`,
      ...(expected ? ['', `**Expected output:** ${clip(expected)}`] : []),
      '',
      step ? step.reply.trim() || '_(the reply was empty)_' : '_(no result: this item did not finish)_',
      '',
      `_— end of work item \`${item.id}\` —_`,
    ].join('\n');
  });
  return blocks.join('\n\n');
}

function itemsSection(ctx: ModeContext, items: readonly WorkItem[], done: readonly Step[], parallel: boolean): string {
  const settings = readModeSettings(ctx.plan.settings);
  const outputs = items.flatMap((item) => itemOutput(item, done) ?? []).sort((a, b) => a.index - b.index);
  const rows = items.map((item, i) => {
    const ids = Object.values(itemIds(item));
    const calls = done.filter((s) => ids.includes(s.id));
    const output = itemOutput(item, done);
    const verdict = itemVerdict(item, done);
    const status = output ? `done (${outputs.indexOf(output) + 1}. to finish)` : calls.length > 0 ? 'not finished' : 'not started';
    const time = calls.reduce((n, s) => n + s.duration_ms, 0);
    const reads = calls.flatMap((s) => s.knowledge);
    const served = reads.filter((k) => k.status === 'provided').length;
    const own = verdict ? `${verdict.action}${verdict.valid ? '' : ' (fail-closed)'}` : '—';
    return `| ${i + 1} | \`${item.id}\` | \`${item.assigned_agent}\` | ${status} | ${own} | ${calls.length > 0 ? `${(time / 1000).toFixed(2)} s` : '—'} | ${reads.length} (${served} served) |`;
  });
  const facts = ctx.command?.facts;
  return [
    `${items.length} item(s), run ${parallel ? `at once (at most ${settings.concurrency} in flight, each limited to ${settings.callTimeoutMs} ms)` : 'one after another, in order'}. Each item is its agent run directly on it (one round: its turn, its own verdict, its own final proposal, which is the item's output, unchanged); ${items.length > 1 ? 'the outputs are merged in item order with explicit boundaries (the final proposal below)' : 'the final proposal below is that output'}. Each item saw the task, ${facts && Object.keys(facts).length > 0 ? `the shared facts (${Object.keys(facts).sort().join(', ')}), ` : ''}the input artifacts and its own inputs — nothing of the other items. The run goes on only when every item's own verdict says proceed; the orchestrator asks no model anything of its own.`,
    '',
    '| # | Item | Assigned to | Status | Its own verdict | Duration | Knowledge requests |',
    '|---|---|---|---|---|---|---|',
    ...rows,
    '',
    callTimes(
      'Items',
      done.filter((s) => s.id.startsWith('item:')),
    ),
  ].join('\n');
}

/** The deterministic contradiction check over the items' results (seed 003, stage 8.5). */
export function itemContradictions(
  items: readonly WorkItem[],
  done: readonly Step[],
  facts: Readonly<Record<string, unknown>> = {},
): Contradiction[] {
  const outputs = items.flatMap((item) => {
    const step = itemOutput(item, done);
    return step ? [{ id: item.id, text: step.reply }] : [];
  });
  return findContradictions(outputs, facts);
}

function contradictionSection(found: readonly Contradiction[], items: number): string {
  const how =
    'Checked without a model, across every pair of item results (and the shared facts): a shared fact given different values (`key: value` lines), and opposite stances on the same action and object (use / do not use / avoid, enable / disable, add / remove, approve / reject). A flag is for a person to read, not proof.';
  if (found.length === 0) return `${how}\n\nNo contradiction found between the ${items} item result(s).`;
  const cell = (t: string): string => t.replace(/\s+/g, ' ').replace(/\|/g, '\\|');
  return [
    how,
    '',
    `**${found.length} contradiction(s) flagged** — the council investigates before acting on the merge.`,
    '',
    '| Subject | Item | Says | Item | Says |',
    '|---|---|---|---|---|',
    ...found.map((c) => `| ${cell(c.subject)} | \`${c.first.id}\` | ${cell(c.first.says)} | \`${c.second.id}\` | ${cell(c.second.says)} |`),
  ].join('\n');
}
