import { describe, expect, it } from 'vitest';
import { auditEvent } from '../../../src/domain/audit.js';
import { runDecision } from '../../../src/domain/decision.js';
import { InternalError } from '../../../src/domain/errors.js';
import { resolveCommit, unrecordedSteps } from '../../../src/domain/run/commit.js';
import { startedRun, turnStep } from '../../fixtures/journal-run.js';

// The rules of a commit, the same for every ledger.

const RUN = 'run-1';
const AT = '2026-01-01T00:00:05.000Z';
const finished = auditEvent('RUN_FINISHED', runDecision('dispatch', 'RUN_COMPLETED'));
const written = auditEvent('ARTIFACT_WRITTEN', runDecision('artifact', 'ARTIFACT_WRITTEN'));
const none = () => false;

describe('resolveCommit', () => {
  it('starts a run once, from its first state', () => {
    const start = startedRun(RUN);
    const resolved = resolveCommit({ runId: RUN, state: undefined, change: { start, records: [written] }, at: AT, hasRecorded: none });
    expect(resolved).toMatchObject({ before: undefined, after: start, changesState: true, records: [written] });
    expect(() => resolveCommit({ runId: RUN, state: start, change: { start }, at: AT, hasRecorded: none })).toThrow(InternalError);
    expect(() => resolveCommit({ runId: 'other', state: undefined, change: { start }, at: AT, hasRecorded: none })).toThrow(
      /a state of run run-1 was committed to run other/,
    );
  });

  it('applies an event with the one apply function, stamped with its time, and makes the records from the state after it', () => {
    const state = startedRun(RUN);
    const resolved = resolveCommit({
      runId: RUN,
      state,
      change: {
        event: { type: 'step_recorded', step: turnStep(0) },
        records: (after) => [
          auditEvent('MODEL_CALL', runDecision('model', 'MODEL_CALL_OK'), { step: after.steps[0]?.index, steps: after.steps.length }),
        ],
      },
      at: AT,
      hasRecorded: none,
    });
    expect(resolved.after).toMatchObject({ updated_at: AT, steps: [{ id: 'turn:r1:p0', index: 0 }] });
    expect(resolved.before).toBe(state);
    expect(resolved.records[0]?.details).toEqual({ step: 0, steps: 1 });
  });

  it('refuses an event for a run without a state, and records made from a state it does not have', () => {
    expect(() =>
      resolveCommit({ runId: RUN, state: undefined, change: { event: { type: 'revived' } }, at: AT, hasRecorded: none }),
    ).toThrow(/has no state/);
    expect(() => resolveCommit({ runId: RUN, state: undefined, change: { records: () => [written] }, at: AT, hasRecorded: none })).toThrow(
      InternalError,
    );
  });

  it('lets records alone through without changing the state', () => {
    const state = startedRun(RUN);
    const resolved = resolveCommit({ runId: RUN, state, change: { records: [finished] }, at: AT, hasRecorded: none });
    expect(resolved).toMatchObject({ changesState: false, records: [finished], files: [], removeFiles: [] });
    expect(resolved.after).toBe(state);
  });

  it('completing an ending after a restart, leaves out records whose event the log already holds — and only then', () => {
    const state = startedRun(RUN);
    const held = (event: string) => event === 'ARTIFACT_WRITTEN';
    expect(
      resolveCommit({ runId: RUN, state, change: { records: [written, finished], completesEnding: true }, at: AT, hasRecorded: held })
        .records,
    ).toEqual([finished]);
    expect(resolveCommit({ runId: RUN, state, change: { records: [written, finished] }, at: AT, hasRecorded: held }).records).toEqual([
      written,
      finished,
    ]);
  });

  it('carries the files written and removed with the change', () => {
    const resolved = resolveCommit({
      runId: RUN,
      state: startedRun(RUN),
      change: { files: [{ name: 'hitl.json', content: '{}' }], removeFiles: ['command.json'] },
      at: AT,
      hasRecorded: none,
    });
    expect(resolved).toMatchObject({ files: [{ name: 'hitl.json', content: '{}' }], removeFiles: ['command.json'] });
  });
});

describe('unrecordedSteps', () => {
  const steps = [0, 1, 2, 3].map(turnStep);
  it('is the steps after the last one the log names', () => {
    expect(unrecordedSteps(steps, new Set(['turn:r1:p0', 'turn:r1:p1']), true).map((s) => s.id)).toEqual(['turn:r1:p2', 'turn:r1:p3']);
    expect(unrecordedSteps(steps, new Set(steps.map((s) => s.id)), true)).toEqual([]);
  });

  it('is every step when the log has no model call yet, and none for a log from before records named their step', () => {
    expect(unrecordedSteps(steps, new Set(), false)).toHaveLength(4);
    expect(unrecordedSteps(steps, new Set(), true)).toEqual([]);
  });
});
