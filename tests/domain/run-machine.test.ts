import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { pauseDecision, runDecision, systemStopDecision, userDecision } from '../../src/domain/decision.js';
import { roundRobinMode } from '../../src/domain/modes/round-robin.js';
import type { ModeContext } from '../../src/domain/modes/mode.js';
import { applyRunEvent, buildOutcome, nextStep, type RunEvent } from '../../src/domain/run-machine.js';
import { parseRunState } from '../../src/domain/checkpoint.js';
import { RUN_STATE_VERSION, type RunPlan, type RunState, type Step } from '../../src/domain/run-state.js';

const T = '2026-11-23T10:00:00.000Z';
const plan: RunPlan = {
  mode: 'round_robin',
  personas: ['a', 'b'],
  rounds: 1,
  synthesizer: 'a',
  arbitration: 'confidence_weighted',
  output_path: 'outputs/x.md',
  model: 'm',
  routes: {},
  settings: {},
};
function aState(overrides: Partial<RunState> = {}): RunState {
  return {
    schemaVersion: RUN_STATE_VERSION,
    run_id: 'r1',
    status: 'running',
    created_at: T,
    updated_at: T,
    source: 'task.json',
    task_sha256: 'x',
    command: { task_description: 'Choose', input_artifacts: [], config: {} },
    steps: [],
    trail: [],
    hitl: [],
    reroutes: [],
    ...overrides,
  };
}
function aStep(id: string, kind: Step['kind'], persona: string, reply = 'said'): Step {
  return {
    id,
    index: 99,
    kind,
    persona,
    round: 1,
    prompt: 'p',
    prompt_sha256: 's',
    reply,
    model: 'm',
    started_at: T,
    duration_ms: 1,
    calls: 1,
    knowledge: [],
  };
}
const persona = (id: string) => ({
  id,
  name: id.toUpperCase(),
  order: 1,
  focus_domains: [],
  privileges: [],
  weight: 1,
  prompt: 'x',
  file: `${id}.md`,
});
const ctx: ModeContext = {
  runId: 'r1',
  task: 'Choose',
  plan,
  personas: new Map([
    ['a', persona('a')],
    ['b', persona('b')],
  ]) as never,
  briefing: 'BRIEF',
  memories: new Map(),
  maxRequestsPerTurn: 5,
};

describe('applyRunEvent: the one function that changes a run', () => {
  const paused = pauseDecision('arbitration', 'ARBITRATION_ESCALATE');
  const pause = { pause_id: 'r1-p1', layer: 'arbitration', reason_code: 'ARBITRATION_ESCALATE', message: 'm', requested_at: T };
  const cases: { name: string; from: RunState; event: RunEvent; expect: Partial<RunState> }[] = [
    {
      name: 'planned fixes the plan once and adds the gates to the trail',
      from: aState(),
      event: { type: 'planned', plan, trail: [runDecision('meaning', 'MEANING_OK')] },
      expect: { plan, trail: [runDecision('meaning', 'MEANING_OK')] },
    },
    {
      name: 'a step is recorded at the next index',
      from: aState({ steps: [aStep('turn:r1:a', 'turn', 'a')] }),
      event: { type: 'step_recorded', step: aStep('turn:r1:b', 'turn', 'b') },
      expect: { steps: [{ ...aStep('turn:r1:a', 'turn', 'a') }, { ...aStep('turn:r1:b', 'turn', 'b'), index: 1 }] },
    },
    {
      name: 'paused: status, decision, pause, trail and summary',
      from: aState(),
      event: { type: 'paused', decision: paused, pause, summary: 'why' },
      expect: { status: 'paused', decision: paused, pause, trail: [paused], summary: 'why' },
    },
    {
      name: 'finished: status, decision, end time, artifact',
      from: aState(),
      event: {
        type: 'finished',
        status: 'completed',
        decision: runDecision('dispatch', 'RUN_COMPLETED'),
        finishedAt: T,
        summary: 'done',
        artifact: '/x.md',
      },
      expect: { status: 'completed', finished_at: T, artifact: '/x.md', summary: 'done' },
    },
    {
      name: 'failed ends the run as error',
      from: aState(),
      event: { type: 'failed', decision: systemStopDecision('queue', 'STORAGE_WRITE_FAILED'), at: T, summary: 'disk' },
      expect: { status: 'error', finished_at: T },
    },
  ];
  it.each(cases)('$name', ({ from, event, expect: want }) => {
    const next = applyRunEvent(from, event, '2026-11-23T11:00:00.000Z');
    expect(next).toMatchObject(want);
    expect(next.updated_at).toBe('2026-11-23T11:00:00.000Z');
    expect(from.updated_at).toBe(T); // pure: the old state is untouched
  });

  it('a step is recorded once, whatever happens (a retried save, a resumed run)', () => {
    const once = applyRunEvent(aState(), { type: 'step_recorded', step: aStep('verdict:a', 'verdict', 'a') }, T);
    expect(applyRunEvent(once, { type: 'step_recorded', step: aStep('verdict:a', 'verdict', 'a', 'other') }, T).steps).toHaveLength(1);
  });

  it('a person continuing clears the pause and runs again; stopping keeps it for the record', () => {
    const pausedState = applyRunEvent(aState(), { type: 'paused', decision: paused, pause, summary: 'why' }, T);
    const entry = {
      pause_id: 'r1-p1',
      layer: 'arbitration',
      reason_code: 'ARBITRATION_ESCALATE',
      decision: 'continue' as const,
      decided_at: T,
    };
    const continued = applyRunEvent(pausedState, { type: 'person_decided', entry, decision: userDecision('RUN', 'HITL_CONTINUE') }, T);
    expect(continued.status).toBe('running');
    expect(continued.pause).toBeUndefined();
    expect(continued.hitl).toEqual([entry]);
    const stopped = applyRunEvent(
      pausedState,
      { type: 'person_decided', entry: { ...entry, decision: 'stop' }, decision: userDecision('STOPPED', 'HITL_STOP') },
      T,
    );
    expect(stopped.status).toBe('paused');
    expect(stopped.pause).toEqual(pause);
  });

  it('the ending is fixed once: a second finishing keeps the first time and decision', () => {
    const first = applyRunEvent(aState(), { type: 'finishing', finishedAt: T, decision: runDecision('dispatch', 'RUN_COMPLETED') }, T);
    const again = applyRunEvent(
      first,
      { type: 'finishing', finishedAt: '2030-01-01T00:00:00.000Z', decision: systemStopDecision('queue', 'RUN_FAILED_INTERNAL') },
      T,
    );
    expect(again.finishing).toEqual(first.finishing);
  });
});

describe('nextStep', () => {
  it('asks the mode for the first call not yet made, by id', () => {
    const done = [aStep('turn:r1:a', 'turn', 'a')];
    const next = nextStep(aState({ plan, steps: done }), roundRobinMode, ctx);
    expect(next.kind === 'steps' && next.steps.map((s) => s.id)).toEqual(['turn:r1:b']);
  });

  it('a schedule may grow: the steps are found by id, in whatever order they finished', () => {
    const done = [aStep('turn:r1:b', 'turn', 'b'), aStep('turn:r1:a', 'turn', 'a')];
    const next = nextStep(aState({ plan, steps: done }), roundRobinMode, ctx);
    expect(next.kind === 'steps' && next.steps.map((s) => s.id)).toEqual(['verdict:a']);
  });

  it('concludes when every call is made', () => {
    const all = ['turn:r1:a', 'turn:r1:b', 'verdict:a', 'verdict:b', 'synthesis'].map((id) =>
      aStep(
        id,
        id.startsWith('turn') ? 'turn' : id === 'synthesis' ? 'synthesis' : 'verdict',
        id.endsWith('b') ? 'b' : 'a',
        id.startsWith('verdict') ? '{"action":"proceed","confidence":0.9,"rationale":"ok"}' : 'x',
      ),
    );
    expect(nextStep(aState({ plan, steps: all }), roundRobinMode, ctx)).toEqual({ kind: 'conclude' });
  });

  it('a completion already fixed replays without calls', () => {
    expect(
      nextStep(aState({ plan, finishing: { finished_at: T, decision: runDecision('dispatch', 'RUN_COMPLETED') } }), roundRobinMode, ctx),
    ).toEqual({ kind: 'conclude' });
  });
});

describe('buildOutcome', () => {
  it('is what run --json prints: run id, status, decision, reason, artifact, audit log, message', () => {
    expect(
      buildOutcome({
        runId: 'r1',
        status: 'paused',
        decision: pauseDecision('model', 'BUDGET_EXCEEDED'),
        auditLog: '/a.jsonl',
        message: 'm',
      }),
    ).toEqual({
      run_id: 'r1',
      status: 'paused',
      decision: 'PAUSE_FOR_HITL',
      reason_code: 'BUDGET_EXCEEDED',
      artifact: null,
      audit_log: '/a.jsonl',
      message: 'm',
    });
  });
});

describe('checkpoint versions', () => {
  it('a version 1 checkpoint (steps by position) migrates: each step gets its round-robin id', async () => {
    const parsed = parseRunState(JSON.parse(await readFile(new URL('../fixtures/run-state/v1-paused.json', import.meta.url), 'utf8')));
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(parsed.value.schemaVersion).toBe(RUN_STATE_VERSION);
    expect(parsed.value.plan?.mode).toBe('round_robin');
    expect(parsed.value.steps.map((s) => s.id)).toEqual([
      'turn:r1:coordinator',
      'turn:r1:auditor',
      'verdict:coordinator',
      'verdict:auditor',
      'synthesis',
    ]);
  });

  it('an unknown version is refused with a message that says which versions are read', () => {
    const parsed = parseRunState({ schemaVersion: 9, run_id: 'x' });
    expect(parsed).toEqual({ ok: false, issues: ['schemaVersion: this checkpoint is version 9; this maestro reads versions 1 to 3'] });
  });
});
