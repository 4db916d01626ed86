import MiniSearch from 'minisearch';
import { stemmer } from 'stemmer';
import { DOMAIN_VOCABULARY } from './relevance-vocabulary.js';

/** What a persona declares about its field: the text relevance is ranked over. */
export interface RelevanceProfile {
  readonly id: string;
  readonly focus_domains: readonly string[];
  readonly description?: string;
  readonly name?: string;
}

/** The relevance of a persona that declares nothing (no domains, no description): neither for nor against. */
export const NEUTRAL_RELEVANCE = 0.5;
/**
 * The relevance floor of a persona that declares a field the task does not touch: low, never zero,
 * so a `domain` weighting can still hear it (a zero weight would silence a persona outright).
 */
export const RELEVANCE_FLOOR = 0.1;

// Words that carry no domain: left out of both the index and the query.
const STOP_WORDS = new Set(
  [
    'a an and are as at be by for from has have in into is it its of on or our',
    'should that the their this to was we were will with without your',
  ]
    .join(' ')
    .split(' '),
);

/** Lower case, stop words out, Porter-stemmed: "Caching" and "cache" meet as "cach". Memory recall (memory/recall.ts) reads terms the same way. */
export function processTerm(term: string): string | null {
  const word = term.toLowerCase();
  if (word.length < 2 || STOP_WORDS.has(word)) return null;
  return stemmer(word);
}

/** The common words of the fields a persona declares (relevance-vocabulary.ts), joined for the index. */
function vocabularyOf(focusDomains: readonly string[]): string {
  const declared = new Set(focusDomains.flatMap((d) => d.toLowerCase().split(/[^a-z0-9-]+/)).flatMap((w) => [w, stemmer(w)]));
  return Object.entries(DOMAIN_VOCABULARY)
    .filter(([field]) => declared.has(field) || declared.has(stemmer(field)))
    .flatMap(([, words]) => words)
    .join(' ');
}

/** The task's distinct terms: a word said five times is one word of the topic, not five. */
function queryTerms(task: string): string {
  const terms = (task.match(/[\p{L}\p{N}][\p{L}\p{N}'-]*/gu) ?? []).map(processTerm).filter((t): t is string => t !== null);
  return [...new Set(terms)].join(' ');
}

/**
 * Seed 001's domain relevance, 0–1 per persona: the task is the query — its distinct terms, so a
 * repeated word does not outrank the topic — and each persona a document of its declared focus
 * domains (counted twice), the common words of those fields (relevance-vocabulary.ts: "slow" and
 * "faster" belong to performance, "password guessing" to security), its description and name,
 * ranked by BM25 (minisearch's BM25+) over stemmed terms. Scores are scaled to the best match: the
 * most relevant persona gets 1, one the task does not touch gets RELEVANCE_FLOOR, one that declares
 * nothing NEUTRAL_RELEVANCE. When no persona matches at all there is nothing to rank by, and every
 * persona gets NEUTRAL_RELEVANCE. Pure and deterministic: the same personas and task give the same figures.
 */
export function rankRelevance(profiles: readonly RelevanceProfile[], task: string): Record<string, number> {
  const declared = profiles.filter((p) => p.focus_domains.length > 0 || (p.description ?? '').trim().length > 0);
  const relevance: Record<string, number> = Object.fromEntries(profiles.map((p) => [p.id, NEUTRAL_RELEVANCE]));
  if (declared.length === 0) return relevance;
  const index = new MiniSearch<{ id: string; domains: string; vocabulary: string; description: string; name: string }>({
    fields: ['domains', 'vocabulary', 'description', 'name'],
    processTerm,
  });
  index.addAll(
    declared.map((p) => ({
      id: p.id,
      domains: p.focus_domains.join(' . '),
      vocabulary: vocabularyOf(p.focus_domains),
      description: p.description ?? '',
      name: p.name ?? '',
    })),
  );
  // The query's terms are processed already (stemmed, deduplicated): searched as they are.
  const hits = index.search(queryTerms(task), { boost: { domains: 2 }, combineWith: 'OR', processTerm: (t) => t });
  const best = Math.max(0, ...hits.map((h) => h.score));
  if (best <= 0) return relevance;
  const scores = new Map(hits.map((h) => [String(h.id), h.score]));
  for (const p of declared) {
    const share = (scores.get(p.id) ?? 0) / best;
    relevance[p.id] = Math.round((RELEVANCE_FLOOR + (1 - RELEVANCE_FLOOR) * share) * 1000) / 1000;
  }
  return relevance;
}
