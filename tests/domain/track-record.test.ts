import { describe, expect, it } from 'vitest';
import { reliability, verdictWasRight, withOutcome, type OutcomeEntry } from '../../src/domain/track-record.js';

const entry = (run_id: string, right: boolean): OutcomeEntry => ({
  run_id,
  said: 'proceed',
  final: 'proceed',
  outcome: right ? 'right' : 'wrong',
  right,
  at: '2026-01-01T00:00:00.000Z',
});

describe('a persona’s record of verdicts against confirmed outcomes', () => {
  it.each([
    // said, final, confirmed → was the persona right?
    ['proceed', 'proceed', 'right', true],
    ['proceed', 'proceed', 'wrong', false],
    ['investigate', 'proceed', 'wrong', true],
    ['escalate', 'proceed', 'right', false],
    ['investigate', 'escalate', 'right', true],
    ['proceed', 'investigate', 'wrong', true],
    ['escalate', 'investigate', 'wrong', false],
  ] as const)('%s when the council said %s, confirmed %s → right: %s', (said, final, outcome, right) => {
    expect(verdictWasRight(said, final, outcome)).toBe(right);
  });

  it('starts from the declared prior and moves with each confirmed outcome, never to 0 or 1', () => {
    expect(reliability(undefined, [])).toBe(0.5);
    expect(reliability({ reliability: 0.9, strength: 4 }, [])).toBe(0.9);
    // (0.5·2 + 1) / (2 + 1)
    expect(reliability(undefined, [entry('a', true)])).toBe(0.667);
    // (0.9·4 + 0) / (4 + 2): a trusted persona proved wrong twice
    expect(reliability({ reliability: 0.9, strength: 4 }, [entry('a', false), entry('b', false)])).toBe(0.6);
    expect(
      reliability(
        undefined,
        Array.from({ length: 50 }, (_, i) => entry(`r${i}`, false)),
      ),
    ).toBeGreaterThan(0);
  });

  it('keeps one entry per run: a person who confirms a run again corrects the earlier confirmation', () => {
    const corrected = withOutcome([entry('a', true), entry('b', true)], entry('a', false));
    expect(corrected.map((e) => [e.run_id, e.right])).toEqual([
      ['b', true],
      ['a', false],
    ]);
  });
});
