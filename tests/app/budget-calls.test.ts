import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { decidePause, resumeDecided } from '../../src/app/hitl.js';
import { processCommand } from '../../src/app/process-command.js';
import { createApp } from '../../src/compose/app.js';
import { runCalls, totalUsage } from '../../src/domain/usage.js';
import { politeCouncil, ScriptedLlmClient, type ScriptedCall } from '../fakes/scripted-llm-client.js';
import { tempWorkspace } from '../fakes/fixtures.js';

// budget.max_calls is the run's model calls, every one of them: a question asked again is a call.

let ws: Awaited<ReturnType<typeof tempWorkspace>>;
beforeEach(async () => {
  ws = await tempWorkspace({});
});
afterEach(() => ws.cleanup());

const STRUCTURED = new Set(['assessment', 'verdict', 'decision', 'plan']);
/** Every structured answer is unreadable, so each one is asked again. */
const unreadable = (r: ScriptedCall): string => (STRUCTURED.has(r.purpose) ? 'no json here' : politeCouncil(r));
const command = (config: Record<string, unknown>) => JSON.stringify({ task_description: 'Choose the queue for the billing jobs', config });
const asksAgain = (r: ScriptedCall): boolean => r.messages.some((m) => m.role === 'assistant' && m.content === 'no json here');

async function usedCalls(a: Awaited<ReturnType<typeof createApp>>, runId: string): Promise<number> {
  const state = await a.deps.ledger.load(runId);
  return state ? totalUsage(runCalls(state), {}).calls : -1;
}

describe('max_calls counts the questions asked again', () => {
  it.each([
    ['parallel', { mode: 'parallel' }, 4],
    ['hierarchical', { mode: 'hierarchical' }, 4],
    ['sequential_refinement', { mode: 'sequential_refinement' }, 2],
    ['round_robin', { max_rounds: 1 }, 4],
    ['plan', { mode: 'plan' }, 1],
    ['supervisor', { mode: 'supervisor' }, 1],
  ])('%s: no call past the limit; the run pauses at it, every call made in its usage', async (_mode, config, max) => {
    const llm = new ScriptedLlmClient(unreadable);
    const a = await createApp({ workspace: ws.dir, llm });
    const out = await processCommand({ text: command({ ...config, budget: { max_calls: max } }), source: 'b.json' }, a.deps);
    expect(out).toMatchObject({ status: 'paused', reason_code: 'BUDGET_EXCEEDED' });
    expect(llm.calls.length).toBe(max);
    expect(out.message).toContain(`model calls: ${max} used of ${max}`);
    expect(await usedCalls(a, out.run_id)).toBe(max);
  });

  it('a question the budget withheld is the one call made when a person lets the run go on', async () => {
    const llm = new ScriptedLlmClient(unreadable);
    const a = await createApp({ workspace: ws.dir, llm });
    const out = await processCommand({ text: command({ mode: 'parallel', budget: { max_calls: 4 } }), source: 'b.json' }, a.deps);
    expect(out).toMatchObject({ status: 'paused', reason_code: 'BUDGET_EXCEEDED' });
    // Three assessments, one asked again; the other two wait for their question.
    expect(llm.calls.filter(asksAgain)).toHaveLength(1);
    await decidePause({ runId: out.run_id, decision: 'continue' }, a.deps);
    await resumeDecided(out.run_id, a.deps);
    const after = llm.calls.slice(4);
    // Only the two questions asked again (no first call repeated), then the synthesis.
    expect(after.filter((c) => c.purpose === 'assessment').map(asksAgain)).toEqual([true, true]);
    expect(after.filter((c) => c.purpose === 'assessment')).toHaveLength(2);
    expect(await usedCalls(a, out.run_id)).toBe(llm.calls.length);
    const state = await a.deps.ledger.load(out.run_id);
    expect(state?.steps.filter((s) => s.kind === 'assessment').map((s) => s.calls)).toEqual([2, 2, 2]);
    expect(state?.steps.some((s) => s.reask_withheld)).toBe(false);
  });
});

describe("the loop policy's plan is one of the run's calls", () => {
  const conflict = (budget: Record<string, unknown>) =>
    JSON.stringify({ task_description: 'Choose the queue', config: { max_rounds: 1, conflict_key: 'queue-choice', budget } });
  /** Three runs of one conflict pause at their budget; the third is where the loop policy wants a plan. */
  async function thirdPause(max: number) {
    const llm = new ScriptedLlmClient(politeCouncil);
    const a = await createApp({ workspace: ws.dir, llm });
    const outs = [];
    for (let n = 0; n < 3; n++) outs.push(await processCommand({ text: conflict({ max_calls: max }), source: `c${n}.json` }, a.deps));
    return { llm, a, third: outs[2]! };
  }

  it('with the budget spent at the third pause, the synthesizer is not asked, and the plan says why', async () => {
    const { llm, a, third } = await thirdPause(3);
    expect(third).toMatchObject({ status: 'paused', reason_code: 'BUDGET_EXCEEDED' });
    expect(llm.calls.filter((c) => c.purpose === 'plan')).toHaveLength(0);
    expect(llm.calls).toHaveLength(9);
    const state = await a.deps.ledger.load(third.run_id);
    expect(state?.loop_plan).toMatch(/no plan: the synthesizer was not asked, the run's budget is spent — model calls: 3 used of 3/);
    expect(await usedCalls(a, third.run_id)).toBe(3);
  });

  it("asked within the budget, it is counted in the run's usage (runs, show, the budget)", async () => {
    const llm = new ScriptedLlmClient((r) =>
      r.purpose === 'verdict' ? '{"action":"investigate","confidence":0.9,"rationale":"facts missing"}' : politeCouncil(r),
    );
    const a = await createApp({ workspace: ws.dir, llm });
    let third;
    for (let n = 0; n < 3; n++) third = await processCommand({ text: conflict({ max_calls: 20 }), source: `c${n}.json` }, a.deps);
    expect(third).toMatchObject({ status: 'paused', reason_code: 'ARBITRATION_INVESTIGATE' });
    const planned = llm.calls.filter((c) => c.purpose === 'plan');
    expect(planned).toHaveLength(1);
    const state = await a.deps.ledger.load(third!.run_id);
    // Three turns, three verdicts, the synthesis: 7; and the plan.
    expect(await usedCalls(a, third!.run_id)).toBe(8);
    expect(state?.plan_call).toMatchObject({ calls: 1 });
  });
});
