import { describe, expect, it } from 'vitest';
import { planMode, planWork, readPlan } from '../../../src/domain/modes/plan.js';
import type { Step } from '../../../src/domain/run-state.js';
import { aModeContext, aPlan, aStep } from '../../fixtures/domain-builders.js';

// Issue 40, point 10: seed 003's Stage-7 plan — strict JSON, validated — and its deterministic replan.
const COUNCIL = ['coordinator', 'strategist', 'auditor'];
const item = (id: string, agent: string) => ({ id, assigned_agent: agent, goal: `do ${id}`, expected_output: 'a section' });
const planJson = (items: unknown[], extra: Record<string, unknown> = {}) =>
  JSON.stringify({ items, rationale: 'split by field', ...extra });
const planStep = (reply: string): Step => aStep('plan', { kind: 'plan', persona: 'coordinator', reply });
const verdict = (itemId: string, persona: string, action: string): Step =>
  aStep(`item:${itemId}:verdict`, {
    kind: 'verdict',
    persona,
    reply: JSON.stringify({ action, confidence: 0.7, rationale: `${persona} says ${action}` }),
  });
const plan = (settings: Record<string, unknown> = {}) => ({ personas: COUNCIL, settings });

describe('the plan a planner writes', () => {
  it('reads a plan of items for council members', () => {
    const read = readPlan(planJson([item('risks', 'auditor'), item('steps', 'Coordinator')]), COUNCIL);
    expect(read.ok && read.plan.items.map((i) => [i.id, i.assigned_agent])).toEqual([
      ['risks', 'auditor'],
      ['steps', 'coordinator'],
    ]);
  });

  it.each([
    ['an item for someone outside the council', planJson([item('a', 'ghost')]), 'is not a member of this council'],
    ['an id used twice', planJson([item('a', 'auditor'), item('a', 'strategist')]), '"a" is used twice'],
    ['no item', planJson([]), 'at least one item'],
    ['nine items', planJson(Array.from({ length: 9 }, (_, i) => item(`i${i}`, 'auditor'))), 'at most 8'],
    ['an id with a dot (kept for replans)', planJson([item('a.b', 'auditor')]), 'items.0.id'],
    ['a missing goal', JSON.stringify({ items: [{ id: 'a', assigned_agent: 'auditor', expected_output: '' }], rationale: '' }), 'goal'],
    ['prose', 'I would split it in three.', ''],
  ])('refuses %s', (_name, reply, problem) => {
    const read = readPlan(reply, COUNCIL);
    expect(read.ok).toBe(false);
    if (!read.ok) expect(read.problem).toContain(problem);
  });
});

describe('what the plan comes to', () => {
  it('runs the planned items as they are while they succeed', () => {
    const w = planWork(plan(), 'the task', [
      planStep(planJson([item('a', 'auditor'), item('b', 'strategist')])),
      verdict('a', 'auditor', 'proceed'),
    ]);
    expect(w.current.map((i) => [i.id, i.assigned_agent])).toEqual([
      ['a', 'auditor'],
      ['b', 'strategist'],
    ]);
    expect(w.fallback).toBeUndefined();
  });

  it('replans an item whose own verdict did not proceed: the next council member who has not tried it, with the failure as input', () => {
    const done = [planStep(planJson([item('a', 'strategist')])), verdict('a', 'strategist', 'investigate')];
    const w = planWork(plan(), 'the task', done);
    expect(w.current).toEqual([
      {
        id: 'a.r2',
        assigned_agent: 'auditor',
        goal: 'do a',
        expected_output: 'a section',
        inputs: { previous_attempt: { by: 'strategist', verdict: 'investigate', rationale: 'strategist says investigate' } },
      },
    ]);
    // The same steps give the same work.
    expect(planWork(plan(), 'the task', done)).toEqual(w);
  });

  it('stops replanning after max_replans, and never gives an item to someone who tried it', () => {
    const done = [
      planStep(planJson([item('a', 'auditor')])),
      verdict('a', 'auditor', 'escalate'),
      verdict('a.r2', 'coordinator', 'investigate'),
    ];
    expect(planWork(plan(), 'the task', done).current.map((i) => i.id)).toEqual(['a.r2']);
    const two = planWork(plan({ max_replans: 3 }), 'the task', [...done, verdict('a.r3', 'strategist', 'investigate')]);
    // Everyone tried: the last attempt stands (its doubt holds the run).
    expect(two.attempts.map((i) => [i.id, i.assigned_agent])).toEqual([
      ['a', 'auditor'],
      ['a.r2', 'coordinator'],
      ['a.r3', 'strategist'],
    ]);
    expect(planWork(plan({ max_replans: 0 }), 'the task', done).current.map((i) => i.id)).toEqual(['a']);
  });

  it('falls back to one item — the whole task, for the planner — when the plan does not read', () => {
    const w = planWork(plan({ planner: 'strategist' }), 'Write the notes', [planStep('no plan today')]);
    expect(w.fallback).toBeDefined();
    expect(w.current).toEqual([{ id: 'task', assigned_agent: 'strategist', goal: 'Write the notes', inputs: {}, expected_output: {} }]);
  });
});

describe('the items the floor reads before any is worked on', () => {
  const ctx = aModeContext({ plan: { ...aPlan(), mode: 'plan', personas: COUNCIL } });
  it('none before the plan is written; then the items as the planner wrote them, replanned or not', () => {
    expect(planMode.modelItems?.(ctx, [])).toBeUndefined();
    const done = [planStep(planJson([item('a', 'strategist')])), verdict('a', 'strategist', 'investigate')];
    expect(planMode.modelItems?.(ctx, done)).toEqual({
      by: 'coordinator',
      items: [{ id: 'a', assigned_agent: 'strategist', goal: 'do a', expected_output: 'a section', inputs: {} }],
      writtenAt: done[0]?.started_at,
    });
  });

  it('none for the fallback: its one item is the task itself, already read', () => {
    expect(planMode.modelItems?.(ctx, [planStep('no plan today')])).toBeUndefined();
  });
});
