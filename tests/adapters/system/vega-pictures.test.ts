import { describe, expect, it } from 'vitest';
import { heatmapSpec, pictureDrawer, pictureJob, VegaPictureRenderer, withStableIds } from '../../../src/adapters/system/vega-pictures.js';
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

/** The same shape (rows, columns, title) with other scores and flags: what the next run of one council draws. */
const other: PictureSpec = {
  ...spec,
  values: [
    [0.9, 0.2, null],
    [0.4, 0.8, 0.1],
    [0.7, 0.5, 0.3],
  ],
  flagged: [
    [false, false, false],
    [true, false, false],
    [false, false, true],
  ],
} as PictureSpec;

describe('drawing with a view kept per shape', () => {
  it('gives, for each picture, the bytes a fresh parse of its whole specification gives, whatever the view drew before', async () => {
    const draw = pictureDrawer((await import('vega')) as never, 8);
    const job = (p: PictureSpec) => pictureJob(heatmapSpec(p));
    const [first, second] = await Promise.all([draw(job(spec)), draw(job(other))]);
    const third = await draw(job(spec));
    expect(withStableIds(first)).toBe(withStableIds(await drawnHere(spec)));
    expect(withStableIds(second)).toBe(withStableIds(await drawnHere(other)));
    expect(withStableIds(third)).toBe(withStableIds(first));
    expect(second).not.toBe(first); // the data of the second picture, not the first's
  });

  it('the picture thread draws a shape it drew before with the new data', async () => {
    const renderer = new VegaPictureRenderer();
    await renderer.render(spec);
    expect(await renderer.render(other)).toBe(`${withStableIds(await drawnHere(other))}\n`);
  });

  /** A Vega stand-in: counts parses, draws the data it was fed, fails a picture whose data says so. */
  function fakeVega() {
    const seen = { parsed: [] as string[], finalized: [] as string[] };
    class View {
      #data = '';
      constructor(private readonly runtime: { title: string }) {}
      data(_: string, values: unknown[]) {
        this.#data = JSON.stringify(values);
      }
      async toSVG() {
        if (this.#data.includes('fail')) throw new Error('cannot draw');
        return `<svg>${this.runtime.title} ${this.#data}</svg>`;
      }
      finalize() {
        seen.finalized.push(this.runtime.title);
      }
    }
    return { seen, vega: { parse: (s: { title: string }) => (seen.parsed.push(s.title), s), View } };
  }
  const shaped = (title: string, values: unknown[] = [1]) => pictureJob({ title, data: [{ name: 'cells', values }] });

  it('keeps a bounded number of views, dropping the least recently used', async () => {
    const { seen, vega } = fakeVega();
    const draw = pictureDrawer(vega as never, 2);
    for (const title of ['a', 'b', 'a', 'c', 'a']) await draw(shaped(title));
    expect(seen.parsed).toEqual(['a', 'b', 'c']);
    expect(seen.finalized).toEqual(['b']);
  });

  it('drops a view that failed to draw: the next picture of its shape gets a fresh one', async () => {
    const { seen, vega } = fakeVega();
    const draw = pictureDrawer(vega as never, 8);
    await expect(draw(shaped('a', ['fail']))).rejects.toThrow('cannot draw');
    expect(await draw(shaped('a', [2]))).toBe('<svg>a [2]</svg>');
    expect(seen.parsed).toEqual(['a', 'a']);
  });
});
