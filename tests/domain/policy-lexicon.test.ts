import { describe, expect, it } from 'vitest';
import { readIntentAmbiguity } from '../../src/domain/intent-ambiguity.js';
import { POLICY_LEXICON } from '../../src/domain/policy-lexicon.js';
import { readPolicySignals } from '../../src/domain/policy-signals.js';
import { EVERYDAY, RISKY, type PolicyCorpusEntry } from '../fixtures/policy-corpus.js';

/** Every category the offline rules find in one task: side effects, high-stakes domains, and `ambiguous`. */
function categoriesOf({ task, inputs }: PolicyCorpusEntry): string[] {
  const signals = readPolicySignals(task);
  const ambiguous = readIntentAmbiguity(task, { hasInputs: inputs === true }).length > 0;
  return [...signals.sideEffects, ...signals.highStakes, ...(ambiguous ? ['ambiguous'] : [])].sort();
}

describe('the offline rules on the corpus (issue 22, point 6)', () => {
  it('holds at least 60 everyday and 60 risky or ambiguous tasks', () => {
    expect(EVERYDAY.length).toBeGreaterThanOrEqual(60);
    expect(RISKY.length).toBeGreaterThanOrEqual(60);
  });

  it('pins every category of the lexicon with a risky task, and names no category the lexicon lacks', () => {
    const labels = new Set(POLICY_LEXICON.map((e) => e.label));
    const pinned = new Set(RISKY.flatMap((e) => e.expect));
    expect([...labels].filter((l) => !pinned.has(l))).toEqual([]);
    expect([...pinned].filter((l) => l !== 'ambiguous' && !labels.has(l))).toEqual([]);
  });

  it.each([...EVERYDAY, ...RISKY].map((e) => [e.task, e] as const))('%s', (_task, entry) => {
    expect(categoriesOf(entry)).toEqual([...entry.expect].sort());
  });
});
