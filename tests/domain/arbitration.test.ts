import { describe, expect, it } from 'vitest';
import { actionSupport, arbitrate, supportWords } from '../../src/domain/arbitration.js';
import type { ArbitrationStrategy } from '../../src/domain/command-file.js';
import type { Verdict, VerdictAction } from '../../src/domain/verdict.js';

const v = (persona: string, action: VerdictAction, confidence: number, valid = true): Verdict => ({
  persona,
  action,
  confidence,
  rationale: `${persona} thinks ${action}`,
  valid,
  ...(valid ? {} : { problem: 'malformed verdict' }),
});
const weights = { a: 1, b: 1, c: 1 };

describe('arbitration', () => {
  const unanimous = [v('a', 'proceed', 0.9), v('b', 'proceed', 0.7), v('c', 'proceed', 0.6)];
  const split = [v('a', 'proceed', 0.9), v('b', 'proceed', 0.8), v('c', 'investigate', 0.6)];
  const confidentMinority = [v('a', 'proceed', 0.3), v('b', 'proceed', 0.3), v('c', 'escalate', 0.9)];
  const threeWay = [v('a', 'proceed', 0.5), v('b', 'investigate', 0.5), v('c', 'escalate', 0.5)];

  const table: [ArbitrationStrategy, Verdict[], VerdictAction][] = [
    ['confidence_weighted', unanimous, 'proceed'],
    ['confidence_weighted', split, 'proceed'],
    ['confidence_weighted', confidentMinority, 'escalate'],
    ['confidence_weighted', threeWay, 'escalate'],
    ['majority_vote', split, 'proceed'],
    ['majority_vote', confidentMinority, 'proceed'],
    ['majority_vote', threeWay, 'escalate'],
    ['pessimistic', unanimous, 'proceed'],
    ['pessimistic', split, 'investigate'],
    ['pessimistic', confidentMinority, 'escalate'],
    ['escalate_on_conflict', unanimous, 'proceed'],
    ['escalate_on_conflict', split, 'escalate'],
    ['domain_weighted', unanimous, 'proceed'],
  ];
  it.each(table)('%s over %j → %s', (strategy, verdicts, expected) => {
    expect(arbitrate({ strategy, verdicts, weights }).final_action).toBe(expected);
  });

  it('breaks ties toward the more cautious action', () => {
    const tie = [v('a', 'proceed', 0.5), v('b', 'investigate', 0.5)];
    expect(arbitrate({ strategy: 'majority_vote', verdicts: tie, weights }).final_action).toBe('investigate');
    expect(arbitrate({ strategy: 'confidence_weighted', verdicts: tie, weights }).final_action).toBe('investigate');
  });

  it('escalates when nobody gave a verdict', () => {
    expect(arbitrate({ strategy: 'confidence_weighted', verdicts: [], weights }).final_action).toBe('escalate');
  });

  it('counts a malformed verdict as escalate and says so', () => {
    const r = arbitrate({
      strategy: 'majority_vote',
      verdicts: [v('a', 'proceed', 0.9), v('b', 'escalate', 1, false), v('c', 'escalate', 1, false)],
      weights,
    });
    expect(r.final_action).toBe('escalate');
    expect(r.reasoning).toContain('2 verdict(s) missing or malformed');
    expect(r.conflicts.join('\n')).toContain('a said proceed');
  });

  it('applies persona weights and domain relevance', () => {
    // Between two cautious actions (a proceed of one voter in two would need a majority, whatever its weight).
    const verdicts = [v('a', 'investigate', 0.8), v('b', 'escalate', 0.8)];
    expect(arbitrate({ strategy: 'confidence_weighted', verdicts, weights: { a: 3, b: 1 } }).final_action).toBe('investigate');
    expect(arbitrate({ strategy: 'confidence_weighted', verdicts, weights: { a: 1, b: 3 } }).final_action).toBe('escalate');
    expect(arbitrate({ strategy: 'domain_weighted', verdicts, weights: { a: 1, b: 1 }, relevance: { a: 0.9, b: 0.3 } }).final_action).toBe(
      'investigate',
    );
  });

  it('reports agreement and the dissent', () => {
    const r = arbitrate({ strategy: 'confidence_weighted', verdicts: split, weights });
    expect(r.agreement).toBeCloseTo(2 / 3);
    expect(r.conflicts).toEqual(['c said investigate (0.60): c thinks investigate']);
    expect(r.votes).toEqual({ a: 'proceed', b: 'proceed', c: 'investigate' });
  });
});

describe('arbitration returns the weights used and a consensus level (seed 001)', () => {
  const votes = [v('a', 'proceed', 0.9), v('b', 'proceed', 0.5), v('c', 'investigate', 0.8)];
  it.each([
    ['confidence_weighted', { a: 0.9, b: 0.5, c: 0.8 }],
    ['domain_weighted', { a: 0.9, b: 0.1, c: 0.5 }],
    ['majority_vote', { a: 1, b: 1, c: 1 }],
    ['pessimistic', { a: 1, b: 1, c: 1 }],
    ['escalate_on_conflict', { a: 1, b: 1, c: 1 }],
  ] as const)('%s', (strategy, used) => {
    const r = arbitrate({ strategy, verdicts: votes, weights, relevance: { a: 0.9, b: 0.1, c: 0.5 } });
    expect(r.weights_used).toEqual(used);
    expect(r.consensus_level).toBeCloseTo(2 / 3, 5);
  });

  it('one persona: full consensus, its own action', () => {
    const r = arbitrate({ strategy: 'confidence_weighted', verdicts: [v('solo', 'investigate', 0.7)], weights: { solo: 1 } });
    expect(r).toMatchObject({ final_action: 'investigate', consensus_level: 1, conflicts: [] });
  });
});

describe('the support printed beside the final action', () => {
  it('is the share that voted the final action, not how united the council was', () => {
    // Two proceed and one escalate, pessimistic: the council escalates; two of three agree with each other, not with it.
    const votes = [v('a', 'proceed', 0.9), v('b', 'proceed', 0.9), v('c', 'escalate', 0.9)];
    const r = arbitrate({ strategy: 'pessimistic', verdicts: votes, weights: {} });
    expect(r.final_action).toBe('escalate');
    expect(r.agreement).toBeCloseTo(2 / 3);
    expect(actionSupport(r)).toEqual({ voted: 1, of: 3, share: 1 / 3 });
    expect(supportWords(r)).toBe('1 of 3 voted escalate');
  });
});
