import type { EvalReport } from './report.js';

const pct = (x: number): string => `${(x * 100).toFixed(1)} %`;
const signed = (x: number): string => `${x >= 0 ? '+' : '−'}${Math.abs(x * 100).toFixed(1)}`;
const pValue = (p: number): string => (p < 0.001 ? '< 0.001' : p.toFixed(3));

/** What the table's heading says about where the figures come from. */
export interface ReportHeading {
  readonly set: string;
  readonly model: string;
  /** Every call went to the offline rehearsal model: the figures test the pipeline, not a model. */
  readonly rehearsal: boolean;
}

/**
 * The report as Markdown: one row per arm (accuracy with its Wilson 95 % interval, the paired
 * difference from the single call with McNemar's exact p, and the cost per item), then each council
 * mode against the self-consistency arm that made as many calls.
 */
export function reportMarkdown(report: EvalReport, heading: ReportHeading): string {
  const versusSingle = new Map(report.comparisons.filter((c) => c.baseline === 'single').map((c) => [c.arm, c]));
  const lines = [
    `## maestro eval: ${heading.set} on ${heading.model}`,
    '',
    ...(heading.rehearsal
      ? [
          '**Rehearsal**: every call went to the offline model, which computes arithmetic exactly; these figures test the pipeline, not a model.',
          '',
        ]
      : []),
    `${report.items_scored} of ${report.items_total} items scored (an item counts once every arm has answered it).`,
    '',
    '| arm | calls/item | accuracy | 95 % CI | Δ vs single (pts) | 95 % CI | McNemar p | tokens/item | cost/item |',
    '|---|---:|---:|---|---:|---|---:|---:|---:|',
    ...report.arms
      .map((a) => {
        const c = versusSingle.get(a.arm);
        const cost = a.cost_per_item_usd === undefined ? 'unpriced' : `$${a.cost_per_item_usd.toFixed(5)}`;
        return [
          a.arm,
          a.calls_per_item.toFixed(1),
          `${pct(a.accuracy)} (${a.correct}/${a.items})`,
          `${pct(a.ci95.low)} – ${pct(a.ci95.high)}`,
          c ? signed(c.difference) : '—',
          c ? `${signed(c.ci95.low)} – ${signed(c.ci95.high)}` : '—',
          c ? pValue(c.p_value) : '—',
          Math.round(a.tokens_per_item).toString(),
          cost,
        ].join(' | ');
      })
      .map((row) => `| ${row} |`),
  ];
  for (const a of report.arms.filter((x) => x.not_completed)) {
    const counts = Object.entries(a.not_completed ?? {}).map(([status, n]) => `${n} ${status}`);
    lines.push('', `${a.arm}: ${counts.join(', ')} — those runs gave no answer and count as wrong (see report.json and the scratch runs).`);
  }
  const matched = report.comparisons.filter((c) => c.baseline !== 'single');
  if (matched.length > 0) {
    lines.push('', 'Each council mode against voting at the same number of calls per item:', '');
    lines.push('| council | vote at equal calls | Δ (pts) | 95 % CI | only council right | only vote right | McNemar p |');
    lines.push('|---|---|---:|---|---:|---:|---:|');
    for (const c of matched)
      lines.push(
        `| ${c.arm} | ${c.baseline} | ${signed(c.difference)} | ${signed(c.ci95.low)} – ${signed(c.ci95.high)} | ${c.arm_only} | ${c.baseline_only} | ${pValue(c.p_value)} |`,
      );
  }
  return `${lines.join('\n')}\n`;
}
