import { describe, expect, it } from 'vitest';
import { arbitrateWithReviewer, readReviewer } from '../../../src/domain/modes/reviewer-gate.js';
import type { ModeContext } from '../../../src/domain/modes/mode.js';
import { canonicalJson } from '../../../src/domain/audit-chain.js';
import { mergeWorkItems, workItemsProposal, workItemTask } from '../../../src/domain/modes/work-items.js';
import type { RunPlan, Step } from '../../../src/domain/run-state.js';
import type { Verdict } from '../../../src/domain/verdict.js';
import { aPersona } from '../../fakes/fixtures.js';

const items = [
  { id: 'a', assigned_agent: 'alpha', goal: 'First goal', inputs: {}, expected_output: 'a list' },
  { id: 'b', assigned_agent: 'beta', goal: 'Second goal', inputs: { z: 1, a: { y: 2, b: 3 } }, expected_output: {} },
];
/** An item's output: its own final proposal (`item:<id>:synthesis`). */
const reply = (id: string, text: string, index: number): Step => ({
  id: `item:${id}:synthesis`,
  index,
  kind: 'synthesis',
  persona: 'alpha',
  round: 1,
  prompt: '',
  prompt_sha256: '',
  reply: text,
  model: 'm',
  started_at: '2026-01-01T00:00:00.000Z',
  duration_ms: 1,
  calls: 1,
  knowledge: [],
});

describe('the work-item merge and task', () => {
  it('merges in item order with explicit boundaries, whatever order the steps finished in', () => {
    const forward = mergeWorkItems(items, [reply('a', 'A done', 0), reply('b', 'B done', 1)]);
    const backward = mergeWorkItems(items, [reply('b', 'B done', 0), reply('a', 'A done', 1)]);
    expect(backward).toBe(forward);
    expect(forward).toBe(
      [
        '### Work item 1 of 2: `a` · alpha',
        '',
        '**Goal:** First goal',
        '',
        '**Expected output:** a list',
        '',
        'A done',
        '',
        '_— end of work item `a` —_',
        '',
        '### Work item 2 of 2: `b` · beta',
        '',
        '**Goal:** Second goal',
        '',
        'B done',
        '',
        '_— end of work item `b` —_',
      ].join('\n'),
    );
    expect(mergeWorkItems(items, [reply('b', 'B done', 0)])).toContain('_(no result: this item did not finish)_');
  });

  it("one item's output is the run's final proposal as its agent wrote it, unwrapped; several are merged", () => {
    expect(workItemsProposal([items[0]!], [reply('a', '  A done, as written\n', 0)])).toBe('  A done, as written\n');
    expect(workItemsProposal(items, [reply('a', 'A done', 0), reply('b', 'B done', 1)])).toBe(
      mergeWorkItems(items, [reply('a', 'A done', 0), reply('b', 'B done', 1)]),
    );
  });

  it('renders an item as a task from the command alone: goal first, shared context, its own inputs with sorted keys', () => {
    const task = workItemTask(items[1]!, { task: 'The big task', facts: { owner: 'x', deadline: 'May' } });
    expect(task).toBe(
      [
        'Second goal',
        '',
        'This is work item "b" of a larger task. Work on this item only.',
        'The larger task: The big task',
        'Shared facts (the same for every item): {"deadline":"May","owner":"x"}',
        'Inputs of this item: {"a":{"b":3,"y":2},"z":1}',
      ].join('\n'),
    );
    expect(canonicalJson([{ b: 1, a: 2 }])).toBe('[{"a":2,"b":1}]');
  });
});

describe('the reviewer gate', () => {
  const plan = {
    mode: 'work_items',
    personas: ['alpha', 'beta'],
    rounds: 1,
    synthesizer: 'alpha',
    arbitration: 'confidence_weighted',
    output_path: 'o.md',
    model: 'm',
    routes: {},
    settings: {},
  } satisfies RunPlan;
  const ctx = {
    runId: 'r',
    task: 't',
    plan,
    personas: new Map([
      ['alpha', aPersona()],
      ['beta', aPersona({ id: 'beta', name: 'Beta' })],
    ]),
    briefing: '',
    memories: new Map(),
    maxRequestsPerTurn: 5,
  } as ModeContext;
  const proceed = (persona: string): Verdict => ({ persona, valid: true, action: 'proceed', confidence: 0.9, rationale: 'fine' });

  it('never lets the council proceed over a reviewer who did not say proceed', () => {
    const review = readReviewer(
      'beta',
      '{"action":"escalate","confidence":0.4,"rationale":"a contradiction","findings":["a says x, b says not x"]}',
    );
    expect(review).toMatchObject({
      persona: 'beta (reviewer)',
      reviewer: 'beta',
      action: 'escalate',
      valid: true,
      findings: ['a says x, b says not x'],
    });
    const result = arbitrateWithReviewer(ctx, [proceed('alpha'), proceed('beta')], review);
    expect(result.final_action).toBe('escalate');
    expect(result.votes).toMatchObject({ alpha: 'proceed', beta: 'proceed', 'beta (reviewer)': 'escalate' });
    expect(result.reasoning).toContain('the reviewer gate (beta) said escalate');
    expect(result.conflicts.at(-1)).toBe('reviewer gate (beta) escalate: a contradiction (findings: a says x, b says not x)');
  });

  it('joins arbitration as one more verdict when it agrees, and fails closed when unreadable', () => {
    const agree = readReviewer('beta', '```json\n{"action":"proceed","confidence":"80%","rationale":"consistent"}\n```');
    expect(agree).toMatchObject({ valid: true, confidence: 0.8, findings: [] });
    expect(arbitrateWithReviewer(ctx, [proceed('alpha')], agree)).toMatchObject({ final_action: 'proceed', agreement: 1 });
    const broken = readReviewer('beta', 'Looks fine to me.');
    expect(broken).toMatchObject({ valid: false, action: 'escalate' });
    expect(arbitrateWithReviewer(ctx, [proceed('alpha')], broken).final_action).toBe('escalate');
  });
});
