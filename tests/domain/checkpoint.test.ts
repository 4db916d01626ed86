import { describe, expect, it } from 'vitest';
import { parseRunState } from '../../src/domain/checkpoint.js';
import { RUN_STATE_VERSION, type RunState, wasRehearsal } from '../../src/domain/run-state.js';
import { aRunState, aStep, verdictJson } from '../fixtures/domain-builders.js';
import v1Paused from '../fixtures/run-state/v1-paused.json' with { type: 'json' };
import v2PausedPii from '../fixtures/run-state/v2-paused-pii.json' with { type: 'json' };

const EMAIL = 'jane.doe@example.com';

/** The checkpoint as read, or the test fails with the issues. */
function read(json: unknown): RunState {
  const parsed = parseRunState(json);
  if (!parsed.ok) throw new Error(parsed.issues.join('\n'));
  return parsed.value;
}
const issuesOf = (json: unknown): string[] => {
  const parsed = parseRunState(json);
  return parsed.ok ? [] : parsed.issues;
};
/** A deep copy, as a checkpoint read from disk would be. */
const copy = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

describe('a version 1 checkpoint (steps matched by position)', () => {
  it('is read as the current version, each step given the id round robin gives it', () => {
    const state = read(copy(v1Paused));
    expect(state.schemaVersion).toBe(RUN_STATE_VERSION);
    expect(state.steps.map((s) => s.id)).toEqual([
      'turn:r1:coordinator',
      'turn:r1:auditor',
      'verdict:coordinator',
      'verdict:auditor',
      'synthesis',
    ]);
  });

  it('keeps what the run needs to go on: its plan (round robin, the only mode it knew), its pause, its replies', () => {
    const state = read(copy(v1Paused));
    expect(state.plan).toMatchObject({ mode: 'round_robin', personas: ['coordinator', 'auditor'], routes: {}, settings: {} });
    expect(state.status).toBe('paused');
    expect(state.pause).toEqual(v1Paused.pause);
    expect(state.steps.map((s) => s.reply)).toEqual(v1Paused.steps.map((s) => s.reply));
    expect(wasRehearsal(state)).toBe(true);
  });

  it('is screened as it is read: an older file shows no more than a new checkpoint would', () => {
    const old = copy(v1Paused);
    old.command.task_description = `Choose the queue; questions to ${EMAIL}`;
    old.steps = old.steps.map((s, i) => (i === 0 ? { ...s, reply: `I asked ${EMAIL} already` } : s));
    const state = read(old);
    expect(JSON.stringify(state)).not.toContain(EMAIL);
    expect(state.command.task_description).toBe('Choose the queue; questions to [REDACTED:EMAIL]');
    expect(state.command_redacted).toEqual(['EMAIL']);
    expect(state.steps[0]?.reply).toBe('I asked [REDACTED:EMAIL] already');
  });

  it('refuses a step that is missing what every step has, naming where', () => {
    const broken = copy(v1Paused);
    const { persona: _dropped, ...withoutPersona } = v1Paused.steps[1] ?? {};
    broken.steps = [broken.steps[0], withoutPersona] as typeof broken.steps;
    expect(issuesOf(broken)).toContainEqual(expect.stringMatching(/^steps\.1\.persona: /));
  });
  it.each([
    ['an object', { 0: v1Paused.steps[0] }],
    ['a string', 'garbage'],
    ['null', null],
  ])('refuses steps that are %s, never reading the run as one with no step (a resume would make every call again)', (_what, steps) => {
    expect(issuesOf({ ...copy(v1Paused), steps })).toContainEqual(expect.stringMatching(/^steps: /));
  });
  it('refuses a step that is not an object, never a crash', () => {
    expect(issuesOf({ ...copy(v1Paused), steps: [null, 'turn'] })).toEqual([
      expect.stringMatching(/^steps\.0: /),
      expect.stringMatching(/^steps\.1: /),
    ]);
  });
});

describe('a version 2 checkpoint (kept raw, before checkpoints were screened)', () => {
  it('is read as the current version, screened, its steps and plan as they were', () => {
    const state = read(copy(v2PausedPii));
    expect(state.schemaVersion).toBe(RUN_STATE_VERSION);
    expect(JSON.stringify(v2PausedPii)).toContain(EMAIL);
    expect(JSON.stringify(state)).not.toContain(EMAIL);
    expect(state.steps.map((s) => s.id)).toEqual(v2PausedPii.steps.map((s) => s.id));
    expect(state.plan).toEqual(v2PausedPii.plan);
    expect(state.pause?.reason_code).toBe(v2PausedPii.pause.reason_code);
    expect(state.trail).toEqual(v2PausedPii.trail);
  });
});

describe('a current checkpoint', () => {
  it('reads back exactly as it was written', () => {
    const written = aRunState({
      status: 'paused',
      steps: [aStep('turn:r1:alpha'), aStep('verdict:alpha', { reply: verdictJson('investigate', 0.7) })],
      command_redacted: ['EMAIL'],
    });
    expect(read(copy(written))).toEqual(written);
  });

  it('refuses a current checkpoint whose fields are wrong, with the path of each problem', () => {
    expect(issuesOf({ ...copy(aRunState()), status: 'done' })).toContainEqual(expect.stringMatching(/^status: /));
    expect(issuesOf({ ...copy(aRunState()), extra: true })).toContainEqual('(root): unknown key "extra" (not part of the schema)');
  });
});

describe('a checkpoint of a version this maestro does not read', () => {
  it.each([
    [4, 'version 4'],
    [0, 'version 0'],
    ['3', 'version "3"'],
    [null, 'version null'],
  ])('schemaVersion %j is refused, saying which version it is and which are read', (schemaVersion, said) => {
    expect(issuesOf({ ...copy(aRunState()), schemaVersion })).toEqual([
      `schemaVersion: this checkpoint is ${said}; this maestro reads versions 1 to ${RUN_STATE_VERSION}`,
    ]);
  });

  it.each([
    ['no schemaVersion', { run_id: 'x' }],
    ['null', null],
    ['an array', [1, 2, 3]],
    ['a string', 'state'],
  ])('%s is refused, never a crash', (_what, json) => {
    expect(issuesOf(json)).toEqual([expect.stringMatching(/^schemaVersion: this checkpoint is version undefined; /)]);
  });
});
