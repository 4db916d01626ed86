import { describe, expect, it } from 'vitest';
import { aggregateReviews, readRanking, REVIEW_SCHEMA, reviewLabels, reviewPrompt, reviewRetry } from '../../../src/domain/modes/review.js';
import { aStep } from '../../fixtures/domain-builders.js';

const council = ['alpha', 'beta', 'gamma'];
const ranking = (...labels: string[]) => JSON.stringify({ ranking: labels, rationale: 'most concrete first' });
const review = (persona: string, reply: string) => aStep(`review:${persona}`, { kind: 'review', persona, reply });

describe('reviewLabels: what each reviewer sees instead of names', () => {
  it('labels the others A, B … and never the reviewer itself', () => {
    expect([...reviewLabels(council, 'alpha')]).toEqual([
      ['beta', 'A'],
      ['gamma', 'B'],
    ]);
    for (const reviewer of council) expect(reviewLabels(council, reviewer).has(reviewer)).toBe(false);
  });

  it("rotates by the reviewer's place, so label A is not always the same persona", () => {
    const firstLabelled = council.map((reviewer) => [...reviewLabels(council, reviewer)].find(([, label]) => label === 'A')?.[0]);
    expect(firstLabelled).toEqual(['beta', 'gamma', 'alpha']);
  });
});

describe("readRanking: a reviewer's ranking", () => {
  it('reads the labels best first, in any case', () => {
    expect(readRanking(ranking('b', 'A'), ['A', 'B'])).toEqual({ ok: true, ranking: ['B', 'A'] });
  });

  it.each([
    ['a label missing', ranking('A'), 'missing: B; unknown: none'],
    ['a label it was not shown', ranking('A', 'B', 'C'), 'missing: none; unknown: C'],
    ['a label twice', ranking('A', 'A', 'B'), 'exactly once'],
    ['no JSON', 'A is better than B.', 'no JSON object'],
  ])('refuses %s, saying what is wrong', (_what, reply, said) => {
    const read = readRanking(reply, ['A', 'B']);
    expect(read.ok).toBe(false);
    expect(read.ok ? '' : read.problem).toContain(said);
  });

  it('asks again once, naming every label', () => {
    const retry = reviewRetry(ranking('A'), ['A', 'B']);
    expect(retry).toMatchObject({ ok: false, problem: expect.stringContaining('missing: B') });
    expect(retry.ok === false && retry.retryPrompt).toContain('{"ranking": ["A", "B" in your order]');
    expect(reviewRetry(ranking('B', 'A'), ['A', 'B'])).toEqual({ ok: true });
  });
});

describe('aggregateReviews: the standing, by Borda count', () => {
  it('gives the persona the others put first the most points and weight, ties in speaker order', () => {
    // alpha sees beta=A, gamma=B; beta sees gamma=A, alpha=B; gamma sees alpha=A, beta=B.
    const standing = aggregateReviews(council, [
      review('alpha', ranking('A', 'B')),
      review('beta', ranking('B', 'A')),
      review('gamma', ranking('A', 'B')),
    ]);
    expect(standing.points).toEqual({ alpha: 2, beta: 1, gamma: 0 });
    expect(standing.weights).toEqual({ alpha: 1.5, beta: 1, gamma: 0.5 });
    expect(standing.order).toEqual(['alpha', 'beta', 'gamma']);
    expect(standing.invalid).toEqual([]);
  });

  it('leaves out a ranking it cannot read, and says whose', () => {
    const standing = aggregateReviews(council, [
      review('alpha', 'beta is best'),
      review('beta', ranking('A', 'B')),
      review('gamma', ranking('A', 'B')),
    ]);
    expect(standing.invalid).toEqual(['alpha']);
    expect(standing.points).toEqual({ alpha: 1, beta: 0, gamma: 1 });
    expect(standing.order).toEqual(['alpha', 'gamma', 'beta']);
  });

  it('keeps everyone at weight 1 when no ranking could be read', () => {
    const standing = aggregateReviews(council, [review('alpha', 'no')]);
    expect(standing.weights).toEqual({ alpha: 1, beta: 1, gamma: 1 });
    expect(standing.order).toEqual(council);
  });
});

describe('reviewPrompt: what a reviewer is asked', () => {
  it('shows the briefing and each assessment under its label, and asks for the labels in order', () => {
    const text = reviewPrompt('BRIEF', [
      { label: 'A', text: 'proceed (confidence 0.80)' },
      { label: 'B', text: 'escalate (confidence 0.90)' },
    ]);
    expect(text).toBe(
      [
        'BRIEF',
        '--- Assessments by other members, anonymised ---',
        'Assessment A:\nproceed (confidence 0.80)',
        'Assessment B:\nescalate (confidence 0.90)',
        'Rank these assessments from the most to the least sound. Reply with ONE JSON object and nothing else: {"ranking": ["A", "B" in your order], "rationale": "<one line>"}',
      ].join('\n\n'),
    );
    expect(REVIEW_SCHEMA.name).toBe('review');
  });
});
