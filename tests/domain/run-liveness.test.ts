import { describe, expect, it } from 'vitest';
import type { ReasonCode } from '../../src/domain/codes.js';
import { systemStopDecision } from '../../src/domain/decision.js';
import { nextStep, SHOWN_RUN_STATUSES, shownStatus } from '../../src/domain/run-liveness.js';

describe('the status a run shows', () => {
  it('running only while a live process holds it; interrupted otherwise; every other status as it is', () => {
    expect(shownStatus('running', true)).toBe('running');
    expect(shownStatus('running', false)).toBe('interrupted');
    for (const status of ['paused', 'completed', 'stopped', 'invalid', 'error', 'unknown']) {
      expect(shownStatus(status, false)).toBe(status);
      expect(shownStatus(status, true)).toBe(status);
    }
  });

  it('names the command that moves a live run on (interrupted, paused, ended by a storage failure), and none for the others', () => {
    const run = (status: string, reason?: string) => ({
      run_id: 'R1',
      status,
      ...(reason ? { decision: systemStopDecision('queue', reason as ReasonCode) } : {}),
    });
    expect(nextStep(run('running'), 'interrupted')).toBe('maestro run --resume R1');
    expect(nextStep(run('paused'), 'paused')).toBe('maestro hitl decide R1 continue|stop');
    expect(nextStep(run('error', 'STORAGE_WRITE_FAILED'), 'error')).toBe('maestro run --resume R1');
    expect(nextStep(run('error', 'RUN_FAILED_INTERNAL'), 'error')).toBeNull();
    for (const status of ['running', 'completed', 'stopped', 'invalid', 'unknown']) expect(nextStep(run(status), status)).toBeNull();
  });

  it('lists interrupted among the statuses a listing can filter on', () => {
    expect(SHOWN_RUN_STATUSES).toEqual(expect.arrayContaining(['running', 'interrupted', 'paused', 'completed', 'unknown']));
  });
});
