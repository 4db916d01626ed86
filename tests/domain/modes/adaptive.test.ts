import { describe, expect, it } from 'vitest';
import { adaptiveSplit, byRelevance } from '../../../src/domain/modes/adaptive.js';
import type { ModeContext } from '../../../src/domain/modes/mode.js';
import { aModeContext, aPlan } from '../../fixtures/domain-builders.js';

// Issue 40, point 4: adaptive mode's explicit tie rule, and the relevance floor that saves calls.
const COUNCIL = ['alpha', 'beta', 'gamma', 'delta'];
const adaptive = (relevance: Record<string, number>, settings: Record<string, unknown> = {}): ModeContext =>
  aModeContext({ plan: aPlan({ mode: 'adaptive', personas: COUNCIL, rounds: 1, synthesizer: 'alpha', settings }), relevance });

describe('adaptive: who is asked, and when', () => {
  it('holds back the more relevant half as specialists', () => {
    expect(adaptiveSplit(adaptive({ alpha: 0.1, beta: 1, gamma: 0.4, delta: 0.7 }))).toMatchObject({
      broad: ['alpha', 'gamma'],
      specialists: ['beta', 'delta'],
      skipped: [],
    });
  });

  it('breaks ties to the later speaker: with nothing to tell them apart, the first speakers assess first', () => {
    expect(byRelevance(COUNCIL, { alpha: 0.5, beta: 0.5, gamma: 0.5, delta: 0.5 })).toEqual(['delta', 'gamma', 'beta', 'alpha']);
    expect(adaptiveSplit(adaptive({ alpha: 0.5, beta: 0.5, gamma: 0.5, delta: 0.5 }))).toMatchObject({
      broad: ['alpha', 'beta'],
      specialists: ['gamma', 'delta'],
    });
    // A tie between two only: the later of them ranks first.
    expect(byRelevance(COUNCIL, { alpha: 0.9, beta: 0.3, gamma: 0.9, delta: 0.1 })).toEqual(['gamma', 'alpha', 'beta', 'delta']);
  });

  it('skips the personas below the relevance floor, never the most relevant one', () => {
    const split = adaptiveSplit(adaptive({ alpha: 0.1, beta: 1, gamma: 0.1, delta: 0.7 }, { relevance_floor: 0.5 }));
    expect(split).toMatchObject({ skipped: ['alpha', 'gamma'], broad: ['delta'], specialists: ['beta'] });
    // Everyone under the floor: the most relevant is still asked.
    expect(adaptiveSplit(adaptive({ alpha: 0.2, beta: 0.3, gamma: 0.1, delta: 0.1 }, { relevance_floor: 0.9 }))).toMatchObject({
      broad: ['beta'],
      specialists: [],
      skipped: ['alpha', 'gamma', 'delta'],
    });
  });

  it('skips nobody when relevance cannot tell the personas apart', () => {
    expect(adaptiveSplit(adaptive({ alpha: 0.5, beta: 0.5, gamma: 0.5, delta: 0.5 }, { relevance_floor: 0.9 })).skipped).toEqual([]);
  });
});
