import { describe, expect, it } from 'vitest';
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

  it('names the command that moves an interrupted or a paused run on, and none for the others', () => {
    expect(nextStep('R1', 'interrupted')).toBe('maestro run --resume R1');
    expect(nextStep('R1', 'paused')).toBe('maestro hitl decide R1 continue|stop');
    for (const status of ['running', 'completed', 'stopped', 'invalid', 'error', 'unknown']) expect(nextStep('R1', status)).toBeNull();
  });

  it('lists interrupted among the statuses a listing can filter on', () => {
    expect(SHOWN_RUN_STATUSES).toEqual(expect.arrayContaining(['running', 'interrupted', 'paused', 'completed', 'unknown']));
  });
});
