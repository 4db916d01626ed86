import { describe, expect, it } from 'vitest';
import { heatmapSpec, VegaPictureRenderer, withStableIds } from '../../../src/adapters/system/vega-pictures.js';
import type { PictureSpec } from '../../../src/domain/modes/mode.js';

const spec: PictureSpec = {
  kind: 'heatmap',
  title: 'Assessments',
  rows: ['auditor', 'strategist', 'composed'],
  columns: ['risk', 'cost', 'value'],
  values: [
    [0.1, 0.5, 0.9],
    [0.3, null, 0.7],
    [0.2, 0.4, 0.6],
  ],
  flagged: [
    [false, true, false],
    [false, false, false],
    [false, false, false],
  ],
} as PictureSpec;

/** The picture drawn on this thread, as the renderer would without a worker. */
async function drawnHere(picture: PictureSpec): Promise<string> {
  const vega = await import('vega');
  const view = new vega.View(vega.parse(heatmapSpec(picture) as never), { renderer: 'none' });
  try {
    return `${await view.toSVG()}`;
  } finally {
    view.finalize();
  }
}

describe('VegaPictureRenderer', () => {
  it('draws off the main thread the same bytes as on it, whatever it drew before (an artifact completed after a restart is byte-identical)', async () => {
    const renderer = new VegaPictureRenderer();
    const [a, b] = await Promise.all([renderer.render(spec), renderer.render(spec)]);
    const c = await renderer.render(spec);
    expect(a).toContain('<svg');
    expect(a).toContain('url(#gradient_0)');
    expect(b).toBe(a);
    expect(c).toBe(a);
    // Drawn on this thread after other pictures (Vega's own counter has moved on), numbered the same.
    await drawnHere(spec);
    expect(`${withStableIds(await drawnHere(spec))}\n`).toBe(a);
  });

  it('numbers the ids of a picture from 0, in order, and every reference with them', () => {
    const svg =
      '<svg><path fill="url(#gradient_7)"/><g clip-path="url(#clip12)"/><defs><linearGradient id="gradient_7"/><clipPath id="clip12"/><linearGradient id="gradient_9"/></defs><path fill="url(#gradient_9)"/></svg>';
    expect(withStableIds(svg)).toBe(
      '<svg><path fill="url(#gradient_0)"/><g clip-path="url(#clip0)"/><defs><linearGradient id="gradient_0"/><clipPath id="clip0"/><linearGradient id="gradient_1"/></defs><path fill="url(#gradient_1)"/></svg>',
    );
  });
});
