import type { ArbitrationResult } from '../arbitration.js';
import { composeBriefing } from '../briefing.js';
import { findContradictions, type Contradiction } from '../contradictions.js';
import type { WorkItem } from '../command-file.js';
import { renderKnowledgeResult, stepInstruction } from '../prompts.js';
import type { Step } from '../run-state.js';
import { parseVerdict } from '../verdict.js';
import { personaMessages, personaOf, verdictStep } from './conversation.js';
import type { ArtifactSection, Conclusion, DeliberationMode, ModeContext, ModeNext, StepSpec } from './mode.js';
import { arbitrateWithReviewer, reviewerSection, reviewerStep, reviewerStepId, reviewerVerdictOf } from './reviewer-gate.js';
import { readModeSettings } from './settings.js';

/**
 * Work items (seed 003): a command's `work_items` each go to their assigned persona — one call, the
 * same call that persona would get run directly on the item as its task (parity) — with the same
 * structured shared context (the task, the facts, the input artifacts) and nothing of any other
 * item. They run in order, or at once with `parallel_items` (the engine bounds concurrency and times
 * each call). The results are merged in item order with explicit boundaries, whatever order they
 * finished in; the merge is the run's proposal. Each assigned persona then gives its verdict on the
 * merge, the reviewer gate (if named) critiques it, and the verdicts are arbitrated.
 */
export const workItemsMode: DeliberationMode = {
  name: 'work_items',
  next(ctx, done): ModeNext {
    const settings = readModeSettings(ctx.plan.settings);
    const items = itemsOf(ctx);
    const ids = new Set(done.map((s) => s.id));
    const pending = items.flatMap((item) => {
      const spec = nextItemSpec(ctx, item, done);
      return spec ? [spec] : [];
    });
    // In order: one item at a time, each to its end (its reads served), unless they run at once.
    if (pending.length > 0)
      return { kind: 'steps', steps: settings.parallelItems ? pending : pending.slice(0, 1), concurrent: settings.parallelItems };
    const merged = mergeWorkItems(items, done);
    const judges = agentsOf(items)
      .filter((p) => !ids.has(`verdict:${p}`))
      .map((p) => judgeSpec(ctx, p, merged));
    const reviewer =
      settings.reviewer && !ids.has(reviewerStepId(settings.reviewer))
        ? [reviewerStep(ctx, settings.reviewer, { title: 'The merged result of the work items', text: merged }, 0)]
        : [];
    // Verdicts and the review only read the merge, never each other: they may run at once too.
    if (judges.length + reviewer.length > 0) return { kind: 'steps', steps: [...judges, ...reviewer], concurrent: settings.parallelItems };
    return { kind: 'conclude' };
  },
  conclude(ctx, done): Conclusion {
    const settings = readModeSettings(ctx.plan.settings);
    const items = itemsOf(ctx);
    const byId = new Map(done.map((s) => [s.id, s]));
    const verdicts = agentsOf(items).flatMap((p) => {
      const step = byId.get(`verdict:${p}`);
      return step ? [parseVerdict(p, step.reply)] : [];
    });
    const review = reviewerVerdictOf(done);
    const merged = mergeWorkItems(items, done);
    const contradictions = itemContradictions(items, done, ctx.command?.facts);
    const sections: ArtifactSection[] = [
      { title: 'Work items', markdown: itemsSection(ctx, items, done, settings.parallelItems) },
      { title: 'Contradiction check', markdown: contradictionSection(contradictions, items.length) },
    ];
    if (review) sections.push({ title: 'Reviewer gate', markdown: reviewerSection(review) });
    return {
      verdicts: review ? [...verdicts, review] : verdicts,
      arbitration: withContradictions(arbitrateWithReviewer(ctx, verdicts, review), contradictions),
      proposal: merged,
      sections,
      attachments: [],
      audit: {
        mode: 'work_items',
        items: items.length,
        parallel_items: settings.parallelItems,
        finished_order: done
          .filter((s) => s.kind === 'item')
          .sort((a, b) => a.index - b.index)
          .map((s) => s.id),
        merged_chars: merged.length,
        contradictions: contradictions.length,
        ...(review ? { reviewer: review.reviewer, reviewer_action: review.action } : {}),
      },
      notes: [`work items: ${items.length} merged in item order${settings.parallelItems ? ' (run at once)' : ''}`],
    };
  },
};

export const itemStepId = (id: string): string => `item:${id}`;
/** The call that brings an item the files it asked for (`n` = 2, 3, …). */
const followUpId = (id: string, n: number): string => `${itemStepId(id)}:read${n}`;
/** How many times an item may be brought files it asked for before its last reply is its result. */
export const MAX_ITEM_READS = 2;

/** An item's calls so far, in order: its first call, then each call that brought it what it read. */
export function itemCalls(itemId: string, done: readonly Step[]): Step[] {
  const calls: Step[] = [];
  const first = done.find((s) => s.id === itemStepId(itemId));
  if (!first) return calls;
  calls.push(first);
  for (let n = 2; n <= MAX_ITEM_READS + 1; n++) {
    const next = done.find((s) => s.id === followUpId(itemId, n));
    if (!next) break;
    calls.push(next);
  }
  return calls;
}

/** An item's result: the reply of its last call (undefined when it has not run). */
export function itemResult(itemId: string, done: readonly Step[]): Step | undefined {
  return itemCalls(itemId, done).at(-1);
}

/**
 * The item's next call, if any: its first, or — when its last reply asked for files and at least
 * one was served — a call that hands them over (seed 003: a knowledge request serves the item that
 * made it). Only results that brought content start one; a refusal or a missing file alone does not.
 */
function nextItemSpec(ctx: ModeContext, item: WorkItem, done: readonly Step[]): StepSpec | undefined {
  const calls = itemCalls(item.id, done);
  if (calls.length === 0) return itemSpec(ctx, item);
  const last = calls.at(-1) as Step;
  if (calls.length > MAX_ITEM_READS || !last.knowledge.some((k) => k.status === 'provided')) return undefined;
  const persona = personaOf(ctx, item.assigned_agent);
  const prompt = [
    `--- What you asked for, for work item "${item.id}" ---`,
    ...last.knowledge.map((k) => renderKnowledgeResult(k, persona.id)),
    `Continue work item "${item.id}" with this. Give your complete result for this item now.`,
  ].join('\n\n');
  return {
    id: followUpId(item.id, calls.length + 1),
    kind: 'item',
    purpose: 'item',
    persona: persona.id,
    round: calls.length + 1,
    prompt,
    // Its own earlier calls on this item only: nothing of the other items, even the same persona's.
    messages: personaMessages(itemContext(ctx), persona, calls, prompt),
    knowledge: true,
  };
}

/** The context an item is run in: without the persona's memory unless the command asks (`item_memory`). */
function itemContext(ctx: ModeContext): ModeContext {
  return readModeSettings(ctx.plan.settings).itemMemory ? ctx : { ...ctx, memories: new Map() };
}

function itemsOf(ctx: ModeContext): readonly WorkItem[] {
  return ctx.command?.work_items ?? [];
}

/** The assigned personas, each once, in the order of their first item. */
function agentsOf(items: readonly WorkItem[]): string[] {
  return [...new Set(items.map((i) => i.assigned_agent))];
}

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
  const expected =
    typeof item.expected_output === 'string'
      ? item.expected_output.trim()
      : Object.keys(item.expected_output).length > 0
        ? canonicalJson(item.expected_output)
        : '';
  if (expected) lines.push(`Expected output: ${expected}`);
  return lines.join('\n');
}

/**
 * One item's call: exactly the first turn its persona would get in a one-round run whose task is
 * `workItemTask(item)` — the briefing (that task and the input artifacts), then the turn's
 * instruction, after its system prompt and memory. Nothing of this run's other steps is in it.
 */
export function itemSpec(ctx: ModeContext, item: WorkItem): StepSpec {
  const persona = personaOf(ctx, item.assigned_agent);
  const screen = ctx.screen ?? ((t: string) => t);
  const task = screen(workItemTask(item, { task: ctx.command?.task_description ?? ctx.task, facts: ctx.command?.facts }));
  const prompt = [composeBriefing({ task, inputs: ctx.inputs ?? [] }), stepInstruction({ kind: 'turn', round: 1, rounds: 1 })].join('\n\n');
  return {
    id: itemStepId(item.id),
    kind: 'item',
    purpose: 'item',
    persona: persona.id,
    round: 1,
    prompt,
    messages: personaMessages(itemContext(ctx), persona, [], prompt),
    knowledge: true,
  };
}

/** An assigned persona's verdict on the merge (not on its own item alone). */
function judgeSpec(ctx: ModeContext, persona: string, merged: string): StepSpec {
  const prompt = [
    ctx.briefing,
    `--- The merged result of the work items ---\n${merged}`,
    stepInstruction({ kind: 'verdict', round: 1, rounds: 1 }),
  ].join('\n\n');
  return verdictStep({
    id: `verdict:${persona}`,
    persona,
    round: 0,
    prompt,
    messages: personaMessages(ctx, personaOf(ctx, persona), [], prompt),
  });
}

/**
 * The deterministic merge: every item in the command's order, each between explicit boundaries,
 * whatever order the calls finished in (a missing result says so).
 */
export function mergeWorkItems(items: readonly WorkItem[], done: readonly Step[]): string {
  const blocks = items.map((item, i) => {
    const step = itemResult(item.id, done);
    const expected =
      typeof item.expected_output === 'string'
        ? item.expected_output.trim()
        : Object.keys(item.expected_output).length > 0
          ? canonicalJson(item.expected_output)
          : '';
    return [
      `### Work item ${i + 1} of ${items.length}: \`${item.id}\` · ${item.assigned_agent}`,
      '',
      `**Goal:** ${oneLine(item.goal)}`,
      ...(expected ? ['', `**Expected output:** ${oneLine(expected)}`] : []),
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
  const byId = new Map(done.map((s) => [s.id, s]));
  const finished = done
    .filter((s) => s.kind === 'item' && !s.id.includes(':read'))
    .sort((a, b) => a.index - b.index)
    .map((s) => s.id);
  const rows = items.map((item, i) => {
    const step = byId.get(itemStepId(item.id));
    const calls = itemCalls(item.id, done);
    const status = step ? `done (${finished.indexOf(step.id) + 1}. to finish)` : 'not finished';
    const time = calls.reduce((n, s) => n + s.duration_ms, 0);
    const reads = calls.flatMap((s) => s.knowledge);
    const served = reads.filter((k) => k.status === 'provided').length;
    return `| ${i + 1} | \`${item.id}\` | \`${item.assigned_agent}\` | ${status} | ${calls.length > 0 ? `${(time / 1000).toFixed(2)} s` : '—'} | ${reads.length} (${served} served to the item) |`;
  });
  const itemSteps = done.filter((s) => s.kind === 'item');
  const start = Math.min(...itemSteps.map((s) => Date.parse(s.started_at)));
  const end = Math.max(...itemSteps.map((s) => Date.parse(s.started_at) + s.duration_ms));
  const facts = ctx.command?.facts;
  return [
    `${items.length} item(s), run ${parallel ? `at once (at most ${settings.concurrency} in flight, each limited to ${settings.callTimeoutMs} ms)` : 'one after another, in order'}; merged in item order with explicit boundaries (the final proposal below). Each item saw the task, ${facts && Object.keys(facts).length > 0 ? `the shared facts (${Object.keys(facts).sort().join(', ')}), ` : ''}the input artifacts and its own inputs — nothing of the other items.`,
    '',
    '| # | Item | Assigned to | Status | Duration | Knowledge requests |',
    '|---|---|---|---|---|---|',
    ...rows,
    '',
    itemSteps.length > 0 && Number.isFinite(start)
      ? `Items: ${itemSteps.length} calls, ${(itemSteps.reduce((n, s) => n + s.duration_ms, 0) / 1000).toFixed(2)} s of model time in ${((end - start) / 1000).toFixed(2)} s of wall time.`
      : 'Items: none finished.',
  ].join('\n');
}

/** The deterministic contradiction check over the items' results (seed 003, stage 8.5). */
export function itemContradictions(
  items: readonly WorkItem[],
  done: readonly Step[],
  facts: Readonly<Record<string, unknown>> = {},
): Contradiction[] {
  const outputs = items.flatMap((item) => {
    const step = itemResult(item.id, done);
    return step ? [{ id: item.id, text: step.reply }] : [];
  });
  return findContradictions(outputs, facts);
}

/** Items that contradict each other are open disagreement: a `proceed` over them fails closed to investigate. */
function withContradictions(arbitration: ArbitrationResult, found: readonly Contradiction[]): ArbitrationResult {
  if (found.length === 0) return arbitration;
  const conflicts = [
    ...arbitration.conflicts,
    ...found.map((c) => `items ${c.first.id} and ${c.second.id} contradict each other on "${c.subject}"`),
  ];
  return arbitration.final_action === 'proceed'
    ? {
        ...arbitration,
        final_action: 'investigate',
        conflicts,
        reasoning: `${arbitration.reasoning}; ${found.length} contradiction(s) between the items' results, so the council investigates first`,
      }
    : { ...arbitration, conflicts };
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

/** JSON with keys sorted at every level, so the same data always reads the same. */
export function canonicalJson(value: unknown): string {
  const sort = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(sort);
    if (v !== null && typeof v === 'object')
      return Object.fromEntries(
        Object.keys(v as Record<string, unknown>)
          .sort()
          .map((k) => [k, sort((v as Record<string, unknown>)[k])]),
      );
    return v;
  };
  return JSON.stringify(sort(value));
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
