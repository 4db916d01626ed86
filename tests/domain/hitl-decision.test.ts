import { describe, expect, it } from 'vitest';
import { pauseToDecide, type RunningFacts } from '../../src/domain/hitl-decision.js';
import { RUN_STATE_VERSION, type RunState } from '../../src/domain/run-state.js';

const NOW = '2026-01-01T00:05:00.000Z';
const pause = {
  pause_id: 'r1-p1',
  layer: 'arbitration',
  reason_code: 'ARBITRATION_INVESTIGATE',
  message: 'facts missing',
  requested_at: '2026-01-01T00:01:00.000Z',
};
const continued = {
  pause_id: 'r1-p1',
  layer: 'arbitration',
  reason_code: 'ARBITRATION_INVESTIGATE',
  decision: 'continue' as const,
  decided_at: '2026-01-01T00:02:00.000Z',
};

function aRun(overrides: Partial<RunState> = {}): RunState {
  return {
    schemaVersion: RUN_STATE_VERSION,
    run_id: 'r1',
    status: 'paused',
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:01:00.000Z',
    source: 'r1.json',
    task_sha256: 'a'.repeat(64),
    command: { task_description: 'x', input_artifacts: [], config: {} } as unknown as RunState['command'],
    steps: [],
    trail: [],
    reroutes: [],
    hitl: [],
    pause,
    ...overrides,
  };
}
const nobody: RunningFacts = { continuePending: false, owned: false };

describe('pauseToDecide: a decision applies only to an open pause', () => {
  it('decides the open pause, with or without its id', () => {
    expect(pauseToDecide(aRun(), { decision: 'stop' }, nobody, NOW)).toEqual({ ok: true, pause });
    expect(pauseToDecide(aRun(), { decision: 'continue', pauseId: 'r1-p1' }, nobody, NOW)).toEqual({ ok: true, pause });
  });

  it('refuses another pause id, saying when that one was already decided', () => {
    const later = aRun({ pause: { ...pause, pause_id: 'r1-p2' }, hitl: [continued] });
    const refused = pauseToDecide(later, { decision: 'stop', pauseId: 'r1-p1' }, nobody, NOW);
    expect(refused).toMatchObject({
      ok: false,
      refusal: expect.stringMatching(/current pause of run r1 is r1-p2 \(pause r1-p1 was already decided: "continue"/),
    });
  });

  it('refuses a stop after a continue that waits for its resumer: that pause was already decided', () => {
    const running = aRun({ status: 'running', pause: undefined, hitl: [continued] });
    const refused = pauseToDecide(running, { decision: 'stop' }, { continuePending: true, owned: false }, NOW);
    expect(refused.ok).toBe(false);
    if (refused.ok) return;
    expect(refused.refusal).toContain('its pause r1-p1 was already decided ("continue" at 2026-01-01T00:02:00.000Z)');
    expect(refused.refusal).toContain('maestro run --resume r1');
    expect(pauseToDecide(running, { decision: 'stop', pauseId: 'r1-p1' }, nobody, NOW)).toMatchObject({
      ok: false,
      refusal: expect.stringContaining('already decided'),
    });
  });

  it('refuses a decision on a run a live process runs, and on an ended run', () => {
    const running = aRun({ status: 'running', pause: undefined });
    const owned = pauseToDecide(running, { decision: 'stop' }, { continuePending: false, owned: true }, NOW);
    expect(owned).toMatchObject({ ok: false, refusal: expect.stringContaining('not paused: it is running') });
    const stopped = aRun({ status: 'stopped', pause: undefined, hitl: [{ ...continued, decision: 'stop' }] });
    const again = pauseToDecide(stopped, { decision: 'continue' }, nobody, NOW);
    expect(again).toMatchObject({
      ok: false,
      refusal: expect.stringMatching(/not paused: it is stopped; its pause r1-p1 was already decided \("stop"/),
    });
  });

  it('lets a stop end a run left running that nobody runs or is about to resume, with a pause of its own', () => {
    const abandoned = aRun({ status: 'running', pause: undefined, hitl: [continued] });
    expect(pauseToDecide(abandoned, { decision: 'stop' }, nobody, NOW)).toEqual({
      ok: true,
      pause: {
        pause_id: 'r1-p2',
        layer: 'queue',
        reason_code: 'RUN_NOT_OWNED',
        message: 'the run was left running with nobody running it',
        requested_at: NOW,
      },
    });
    expect(pauseToDecide(abandoned, { decision: 'continue' }, nobody, NOW).ok).toBe(false);
  });

  it('refuses any decision on a sealed run', () => {
    const seal = {
      decision: 'STOPPED',
      reason_code: 'ETHICS_PII_DETECTED',
      sealed: true,
      overrideable: false,
      final_decider: 'SYSTEM',
      layer: 'ethics',
    };
    const refused = pauseToDecide(aRun({ decision: seal as RunState['decision'] }), { decision: 'continue' }, nobody, NOW);
    expect(refused).toMatchObject({ ok: false, refusal: expect.stringContaining('sealed decision (ethics: ETHICS_PII_DETECTED)') });
  });
});
