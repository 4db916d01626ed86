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
