import { describe, expect, it } from 'vitest';
import { reportMarkdown } from '../../../src/domain/eval/markdown.js';
import { armsFor, buildReport, samplesNeeded } from '../../../src/domain/eval/report.js';
import { foldResults, type ResultLine } from '../../../src/domain/eval/results.js';
import type { EvalItem } from '../../../src/domain/eval/task-sets.js';

const items: EvalItem[] = Array.from({ length: 10 }, (_, i) => ({ id: `q${i}`, question: `q${i}?`, answer: String(i) }));
const cost = { calls: 1, prompt_tokens: 10, completion_tokens: 2 };

/** Single call right on items 0–3; the council right on 0–8 (so 5 items only it gets right), in 4 calls, one run paused. */
function lines(): ResultLine[] {
  return items.flatMap((item, i): ResultLine[] => [
    {
      kind: 'council',
      item: item.id,
      mode: 'parallel',
      run_id: `R${i}`,
      status: i === 9 ? 'paused' : 'completed',
      reason_code: 'X',
      ...(i < 9 ? { answer: String(i) } : { problem: 'paused' }),
      ...cost,
      calls: 4,
    },
    ...[0, 1, 2, 3].map(
      (index): ResultLine => ({ kind: 'sample', item: item.id, index, answer: i < 4 || index > 0 ? String(i) : 'x', ...cost }),
    ),
  ]);
}

describe('the eval report', () => {
  const arms = armsFor(['parallel'], []);
  const { items: results } = foldResults(lines().map((l) => JSON.stringify(l)));

  it('needs as many samples as the council made calls, and none before the council has run', () => {
    expect(samplesNeeded(arms, results.get('q0'))).toBe(4);
    expect(samplesNeeded(arms, undefined)).toBeUndefined();
    expect(samplesNeeded(armsFor([], [7]), undefined)).toBe(7);
  });

  it('scores every arm on the same items and compares them pairwise with McNemar', () => {
    const report = buildReport(items, arms, results);
    expect(report.items_scored).toBe(10);
    const [single, council, matched] = report.arms;
    expect(single).toMatchObject({ arm: 'single', correct: 4, calls_per_item: 1 });
    expect(council).toMatchObject({ arm: 'council-parallel', correct: 9, calls_per_item: 4, not_completed: { paused: 1 } });
    expect(matched).toMatchObject({ arm: 'sc=parallel', correct: 10, calls_per_item: 4 }); // 3 of 4 samples right everywhere
    const vsSingle = report.comparisons.find((c) => c.arm === 'council-parallel' && c.baseline === 'single');
    expect(vsSingle).toMatchObject({ arm_only: 5, baseline_only: 0, difference: 0.5 });
    expect(vsSingle?.p_value).toBeCloseTo(2 / 32, 10);
    const vsVote = report.comparisons.find((c) => c.baseline === 'sc=parallel');
    expect(vsVote).toMatchObject({ arm_only: 0, baseline_only: 1 });
  });

  it('leaves out an item some arm has not finished, so every comparison stays paired', () => {
    const partial = foldResults(
      lines()
        .filter((l) => !(l.item === 'q5' && l.kind === 'sample' && l.index === 3))
        .map((l) => JSON.stringify(l)),
    );
    expect(buildReport(items, arms, partial.items).items_scored).toBe(9);
  });

  it('labels a rehearsal as such in the table', () => {
    const report = buildReport(items, arms, results);
    const md = reportMarkdown(report, { set: 'arithmetic', model: 'offline (offline: m)', rehearsal: true });
    expect(md).toContain('**Rehearsal**');
    expect(md).toContain('| council-parallel | 4.0 | 90.0 % (9/10) |');
    expect(md).toContain('council-parallel: 1 paused');
    expect(reportMarkdown(report, { set: 'arithmetic', model: 'local', rehearsal: false })).not.toContain('Rehearsal');
  });
});
