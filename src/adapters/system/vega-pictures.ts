import type { PictureSpec } from '../../domain/modes/mode.js';
import type { PictureRenderer } from '../../domain/ports.js';

/**
 * Draws the artifact's pictures as SVG with Vega, headless (no browser, no canvas). Vega is loaded
 * on the first picture only, so commands that draw none never pay for it.
 */
export class VegaPictureRenderer implements PictureRenderer {
  async render(spec: PictureSpec): Promise<string> {
    const vega = await import('vega');
    const view = new vega.View(vega.parse(heatmapSpec(spec) as never), { renderer: 'none' });
    try {
      return `${await view.toSVG()}\n`;
    } finally {
      view.finalize();
    }
  }
}

/** The fill of a flagged cell (disagreement sent to arbitration) and of a missing one, named in the legend. */
const FLAGGED_FILL = '#f4a261';
const MISSING_FILL = '#dddddd';

/**
 * A persona × vector heat map: one cell per score (0–1), its value written in it; flagged cells
 * (the personas disagreed, so the vector went to arbitration) orange and marked `flag`, missing
 * cells grey — both named in a legend beside the score gradient. One Vega specification, which reads
 * better whole (its scales, marks and legends refer to each other by name) than cut into pieces.
 */
export function heatmapSpec(spec: PictureSpec): Record<string, unknown> {
  const values = spec.rows.flatMap((row, r) =>
    spec.columns.map((column, c) => ({ row, column, value: spec.values[r]?.[c] ?? null, flagged: spec.flagged?.[r]?.[c] === true })),
  );
  const cell = 34;
  return {
    $schema: 'https://vega.github.io/schema/vega/v6.json',
    width: spec.columns.length * cell * 1.6,
    height: spec.rows.length * cell,
    padding: 8,
    title: { text: spec.title, anchor: 'start', fontSize: 14 },
    data: [{ name: 'cells', values }],
    scales: [
      { name: 'x', type: 'band', domain: spec.columns, range: 'width', padding: 0.04 },
      { name: 'y', type: 'band', domain: spec.rows, range: 'height', padding: 0.06 },
      { name: 'color', type: 'linear', domain: [0, 1], range: { scheme: 'blues' }, zero: true },
      {
        name: 'cellKind',
        type: 'ordinal',
        domain: ['flagged: disagreement, sent to arbitration', 'no score'],
        range: [FLAGGED_FILL, MISSING_FILL],
      },
    ],
    axes: [
      { orient: 'top', scale: 'x', labelAngle: -35, labelAlign: 'left', domain: false, ticks: false },
      {
        orient: 'left',
        scale: 'y',
        domain: false,
        ticks: false,
        labelFontWeight: { signal: "datum.value === 'composed' ? 'bold' : 'normal'" },
      },
    ],
    legends: [
      { fill: 'color', type: 'gradient', title: 'score', direction: 'vertical', gradientLength: spec.rows.length * cell - 20 },
      { fill: 'cellKind', type: 'symbol', title: 'cells', symbolType: 'square', orient: 'right' },
    ],
    marks: [
      {
        type: 'rect',
        from: { data: 'cells' },
        encode: {
          enter: {
            x: { scale: 'x', field: 'column' },
            width: { scale: 'x', band: 1 },
            y: { scale: 'y', field: 'row' },
            height: { scale: 'y', band: 1 },
            fill: [
              { test: 'datum.flagged', value: FLAGGED_FILL },
              { test: 'datum.value === null', value: MISSING_FILL },
              { scale: 'color', field: 'value' },
            ],
          },
        },
      },
      {
        type: 'text',
        from: { data: 'cells' },
        encode: {
          enter: {
            x: { scale: 'x', field: 'column', band: 0.5 },
            y: { scale: 'y', field: 'row', band: 0.5 },
            align: { value: 'center' },
            baseline: { value: 'middle' },
            fontSize: { value: 11 },
            text: { signal: "datum.flagged ? 'flag' : datum.value === null ? '—' : format(datum.value, '.2f')" },
            fill: { signal: "datum.value !== null && datum.value > 0.6 ? 'white' : 'black'" },
          },
        },
      },
    ],
  };
}
