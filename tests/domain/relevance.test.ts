import { describe, expect, it } from 'vitest';
import { NEUTRAL_RELEVANCE, RELEVANCE_FLOOR, rankRelevance } from '../../src/domain/relevance.js';

// The seed's own council: what each persona declares about its field.
const council = [
  {
    id: 'performance',
    focus_domains: ['performance', 'latency', 'caching', 'throughput', 'memory usage'],
    description: 'Watches response times, cache hit rates and resource use.',
  },
  {
    id: 'security',
    focus_domains: ['security', 'authentication', 'secrets', 'injection'],
    description: 'Looks for attacks, leaked credentials and unsafe input handling.',
  },
  {
    id: 'ux',
    focus_domains: ['usability', 'accessibility', 'user interface'],
    description: 'Speaks for the people who use the product: clarity, forms, error messages.',
  },
];

describe('domain relevance ranks personas by BM25 over what they declare (seed 001)', () => {
  it('ranks the performance persona first for "Implement caching", and no two personas tie', () => {
    const r = rankRelevance(council, 'Implement caching');
    expect(r.performance).toBe(1);
    expect(r.performance).toBeGreaterThan(r.security ?? 1);
    expect(r.security).toBe(RELEVANCE_FLOOR);
    expect(r.ux).toBe(RELEVANCE_FLOOR);
  });

  it('matches word forms through stemming ("cached" and "caches" meet "caching")', () => {
    expect(rankRelevance(council, 'Add a layer that caches the cached pages').performance).toBe(1);
  });

  it('ranks security first for a login review, and usability for a form redesign', () => {
    const login = rankRelevance(council, 'Review the authentication of the login and how secrets are stored');
    expect(login.security).toBe(1);
    expect(login.security).toBeGreaterThan(login.performance ?? 1);
    const form = rankRelevance(council, 'Redesign the sign-up form so its error messages are clearer for users');
    expect(form.ux).toBe(1);
    expect(form.ux).toBeGreaterThan(form.security ?? 1);
  });

  it('gives a persona partly touched by the task a relevance between the floor and 1', () => {
    const r = rankRelevance(council, 'Reduce the latency of authentication');
    const both = [r.performance ?? 0, r.security ?? 0].sort();
    expect(both[1]).toBe(1);
    expect(both[0]).toBeGreaterThan(RELEVANCE_FLOOR);
    expect(r.ux).toBe(RELEVANCE_FLOOR);
  });

  it('is neutral when nothing can rank: no declarations, or a task none of them touches', () => {
    expect(rankRelevance([{ id: 'a', focus_domains: [] }], 'Implement caching')).toEqual({ a: NEUTRAL_RELEVANCE });
    const none = rankRelevance(council, 'Plan the office party');
    expect(Object.values(none)).toEqual([NEUTRAL_RELEVANCE, NEUTRAL_RELEVANCE, NEUTRAL_RELEVANCE]);
  });

  it('keeps a persona that declares nothing neutral beside ranked ones', () => {
    const r = rankRelevance([...council, { id: 'plain', focus_domains: [] }], 'Implement caching');
    expect(r.plain).toBe(NEUTRAL_RELEVANCE);
    expect(r.performance).toBe(1);
  });

  // Issue 40, point 4: a task that names its topic in other words, and one that repeats a word.
  it('meets the field a task names in other words, through the common words of each declared domain', () => {
    const slow = rankRelevance(council, 'Make the slow report faster');
    expect(slow.performance).toBe(1);
    expect(slow.security).toBe(RELEVANCE_FLOOR);
    const guessing = rankRelevance(council, 'Stop password guessing');
    expect(guessing.security).toBe(1);
    expect(guessing.performance).toBe(RELEVANCE_FLOOR);
    const confusing = rankRelevance(council, 'People find the checkout confusing');
    expect(confusing.ux).toBe(1);
  });

  it('counts a word once, however often the task repeats it: a repeated word does not outrank the topic', () => {
    const once = rankRelevance(council, 'The checkout form is slow');
    expect(rankRelevance(council, 'The checkout form is slow: form, form, form, the form, forms everywhere')).toEqual(once);
    expect(once.performance).toBeGreaterThan(RELEVANCE_FLOOR);
  });
});
