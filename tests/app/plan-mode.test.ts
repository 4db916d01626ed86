import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { askCouncil } from '../../src/app/ask.js';
import { processCommand } from '../../src/app/process-command.js';
import { createApp } from '../../src/compose/app.js';
import { LlmError } from '../../src/domain/errors.js';
import { politeCouncil, ScriptedLlmClient, type ScriptedCall } from '../fakes/scripted-llm-client.js';
import { tempWorkspace } from '../fakes/fixtures.js';

// Issue 40, point 10: a plan step, its items run as work items, and a bounded deterministic replan.
let ws: Awaited<ReturnType<typeof tempWorkspace>>;
beforeEach(async () => {
  ws = await tempWorkspace();
});
afterEach(() => ws.cleanup());

const run = async (llm: ScriptedLlmClient, config: Record<string, unknown> = {}) =>
  processCommand(
    {
      text: JSON.stringify({ task_description: 'Write the cutover notes for the billing reports', config: { mode: 'plan', ...config } }),
      source: 'p.json',
    },
    (await createApp({ workspace: ws.dir, llm })).deps,
  );
const records = async (file: string) =>
  (await readFile(file, 'utf8'))
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { event: string; details?: Record<string, unknown> });
const PLAN = JSON.stringify({
  items: [
    { id: 'steps', assigned_agent: 'coordinator', goal: 'List the cutover steps', expected_output: 'numbered steps' },
    { id: 'risks', assigned_agent: 'strategist', goal: 'List the risks of the cutover', expected_output: 'a list' },
  ],
  rationale: 'steps and risks apart',
});
const taskOf = (r: ScriptedCall) => /TASK: (.+)/.exec(r.messages.find((m) => m.content.includes('TASK: '))?.content ?? '')?.[1] ?? '?';
/** A council that plans with `plan`, answers each item with its goal, and says `verdictOf` (default proceed). */
const council =
  (plan: string | string[], verdictOf: (r: ScriptedCall) => string | undefined = () => undefined) =>
  (r: ScriptedCall, n: number): string => {
    if (r.purpose === 'plan') return Array.isArray(plan) ? (plan[r.messages.length > 2 ? 1 : 0] ?? '') : plan;
    if (r.purpose === 'verdict') return verdictOf(r) ?? politeCouncil(r);
    if (r.purpose === 'synthesis') return `${r.persona} did: ${taskOf(r)}`;
    return r.purpose === 'item' ? `${r.persona} works (${n})` : politeCouncil(r);
  };

describe('plan mode', () => {
  it('the planner writes a strict JSON plan; its items run as work items, each its agent run directly; the merge is the answer', async () => {
    const llm = new ScriptedLlmClient(council(PLAN));
    const outcome = await run(llm);
    expect(outcome.status).toBe('completed');
    expect(llm.calls.map((c) => c.step)).toEqual([
      'plan',
      'item:steps',
      'item:steps:verdict',
      'item:steps:synthesis',
      'item:risks',
      'item:risks:verdict',
      'item:risks:synthesis',
    ]);
    expect(llm.calls[0]!.responseFormat?.name).toBe('work_plan');
    expect(llm.calls[0]!.messages.at(-1)!.content).toContain('- auditor (Auditor): risk, security');
    expect(llm.calls[4]!.messages.at(-1)!.content).toContain('TASK: List the risks of the cutover');
    const artifact = await readFile(outcome.artifact!, 'utf8');
    expect(artifact).toContain('`coordinator` planned 2 item(s): steps and risks apart');
    expect(artifact).toContain('strategist did: List the risks of the cutover');
    expect(artifact).toContain('No item needed a replan.');
  });

  it('asks once more for a plan that does not validate, with the problem quoted', async () => {
    const bad = JSON.stringify({ items: [{ id: 'x', assigned_agent: 'ghost', goal: 'g', expected_output: '' }], rationale: '' });
    const llm = new ScriptedLlmClient(council([bad, PLAN]));
    expect((await run(llm)).status).toBe('completed');
    const asked = llm.calls.filter((c) => c.purpose === 'plan');
    expect(asked).toHaveLength(2);
    expect(asked[1]!.messages.at(-1)!.content).toContain(
      'That was not a valid plan (items.assigned_agent: "ghost" is not a member of this council',
    );
  });

  it('falls back to one item, the whole task for the planner, when the plan never reads', async () => {
    const llm = new ScriptedLlmClient(council('Let us split it in two.'));
    const outcome = await run(llm, { planner: 'strategist' });
    expect(outcome.status).toBe('completed');
    expect(llm.calls.map((c) => c.step)).toEqual(['plan', 'plan', 'item:task', 'item:task:verdict', 'item:task:synthesis']);
    expect(llm.calls[2]!.persona).toBe('strategist');
    expect(await readFile(outcome.artifact!, 'utf8')).toContain('the deterministic fallback is one item, the whole task, for the planner');
  });

  it('replans a failed item to the next council member, deterministically and with no model call of its own; the answer is the new attempt', async () => {
    const doubt = (r: ScriptedCall) =>
      r.step === 'item:risks:verdict' ? '{"action":"investigate","confidence":0.7,"rationale":"no numbers to go on"}' : undefined;
    const llm = new ScriptedLlmClient(council(PLAN, doubt));
    const outcome = await run(llm);
    expect(outcome.status).toBe('completed');
    expect(llm.calls.map((c) => c.step).slice(-3)).toEqual(['item:risks.r2', 'item:risks.r2:verdict', 'item:risks.r2:synthesis']);
    // Strategist failed; the next member in speaking order takes it, told why.
    const retry = llm.calls.find((c) => c.step === 'item:risks.r2')!;
    expect(retry.persona).toBe('auditor');
    expect(retry.messages.at(-1)!.content).toContain(
      'Inputs of this item: {"previous_attempt":{"by":"strategist","rationale":"no numbers to go on","verdict":"investigate"}}',
    );
    const artifact = await readFile(outcome.artifact!, 'utf8');
    expect(artifact).toContain(
      'Replanned (deterministic: the next council member who had not tried it, no model call): `risks.r2` → `auditor`.',
    );
    expect(artifact).toContain('auditor did: List the risks of the cutover');
    const arbitrated = (await records(outcome.audit_log)).find((r) => r.event === 'ARBITRATED')!;
    expect(arbitrated.details).toMatchObject({ mode: 'plan', plan: { planner: 'coordinator', items: 2, replans: 1 } });
    // The answer `ask` gives is the same merge.
    const asked = await askCouncil(
      { question: 'Write the cutover notes for the billing reports', mode: 'plan' },
      (await createApp({ workspace: ws.dir, llm: new ScriptedLlmClient(council(PLAN)) })).deps,
    );
    expect(asked.answer).toContain('### Work item 2 of 2: `risks` · strategist');
  });

  it('a reviewer critiques the merge of the plan’s items, and its doubt holds the run', async () => {
    const review = (r: ScriptedCall) =>
      r.step.startsWith('reviewer:') ? '{"action":"investigate","confidence":0.8,"rationale":"the risks lack numbers"}' : undefined;
    const llm = new ScriptedLlmClient(council(PLAN, review));
    const outcome = await run(llm, { reviewer: 'auditor' });
    const reviewed = llm.calls.at(-1)!;
    expect(reviewed.step).toMatch(/^reviewer:auditor/);
    expect(reviewed.messages.at(-1)!.content).toContain('strategist did: List the risks of the cutover');
    expect(outcome.status).toBe('paused');
  });

  it('does not replan a call that fails (an outage): the run pauses on it, and nobody else is given the item', async () => {
    const polite = council(PLAN);
    const llm = new ScriptedLlmClient((r, n) => {
      if (r.step === 'item:risks') throw new LlmError('upstream 503', false, 503);
      return polite(r, n);
    });
    const outcome = await run(llm);
    expect(outcome.status).toBe('paused');
    expect(llm.calls.map((c) => c.step)).not.toContain('item:risks.r2');
    expect(llm.calls.at(-1)!.step).toBe('item:risks');
  });

  it('pauses when the replans run out: the last attempt’s doubt stands', async () => {
    const doubt = (r: ScriptedCall) =>
      r.step.startsWith('item:risks') ? '{"action":"investigate","confidence":0.7,"rationale":"still no numbers"}' : undefined;
    const llm = new ScriptedLlmClient(council(PLAN, doubt));
    const outcome = await run(llm, { max_replans: 1 });
    expect(outcome.status).toBe('paused');
    expect(outcome.message).toContain('auditor (item risks.r2)');
    expect(llm.calls.filter((c) => c.purpose === 'item').map((c) => c.step)).toEqual(['item:steps', 'item:risks', 'item:risks.r2']);
    expect(path.basename(outcome.audit_log)).toContain(outcome.run_id);
  });
});
