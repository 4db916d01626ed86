import { describe, expect, it } from 'vitest';
import { VECTORS } from '../../src/domain/assessment.js';
import { type Heatmap, heatmapSvg } from '../../src/domain/heatmap-svg.js';
import { byClass, descendants, heatmapCells, parseXml } from '../helpers/svg.js';

const COUNCIL = ['composed', 'auditor', 'strategist', 'coordinator'];

/** A council of three's heat map: every vector scored by every persona, the second vector's composed score flagged. */
const council: Heatmap = {
  title: 'Epistemic vectors (weighted_average)',
  rows: [...VECTORS],
  columns: COUNCIL,
  values: VECTORS.map((_, r) => COUNCIL.map((_, c) => ((r * 4 + c) % 11) / 10)),
  flagged: VECTORS.map((_, r) => COUNCIL.map((_, c) => r === 1 && c === 0)),
};

/** The WCAG 2 contrast ratio of two `#rrggbb` colours. */
function contrast(a: string, b: string): number {
  const luminance = (hex: string) => {
    const [r = 0, g = 0, b = 0] = [1, 3, 5].map((i) => {
      const c = Number.parseInt(hex.slice(i, i + 2), 16) / 255;
      return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const [hi = 0, lo = 0] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}

const texts = (svg: string, kind: string) => byClass(parseXml(svg), kind).map((e) => e.text);

describe('the strict XML parser the tests read pictures with', () => {
  it.each([
    ['a bare ampersand', '<svg><text>a & b</text></svg>'],
    ['a bare <', '<svg><text>a < b</text></svg>'],
    ['a quote inside an attribute', '<svg><text class="a"b">t</text></svg>'],
    ['a control character', '<svg><text>\u0001</text></svg>'],
  ])('refuses %s', (_, xml) => {
    expect(() => parseXml(xml)).toThrow();
  });
});

describe('heatmapSvg', () => {
  it('is one well-formed SVG document, sized by its viewBox, titled', () => {
    const svg = parseXml(heatmapSvg(council));
    expect(svg.name).toBe('svg');
    expect(svg.attributes.xmlns).toBe('http://www.w3.org/2000/svg');
    const [x, y, width, height] = (svg.attributes.viewBox ?? '').split(' ').map(Number);
    expect([x, y]).toEqual([0, 0]);
    expect(svg.attributes.width).toBe(String(width));
    expect(svg.attributes.height).toBe(String(height));
    expect(svg.children.find((c) => c.name === 'title')?.text).toBe(council.title);
    expect(texts(heatmapSvg(council), 'title')).toEqual([council.title]);
  });

  it('labels every row and every column, in order, and has a cell for each of their pairs', () => {
    const svg = heatmapSvg(council);
    expect(texts(svg, 'row')).toEqual([...VECTORS]);
    expect(texts(svg, 'column')).toEqual(COUNCIL);
    expect(heatmapCells(svg)).toHaveLength(VECTORS.length * COUNCIL.length);
  });

  it('writes each score in its cell, and draws a flagged cell orange, marked flag', () => {
    const cells = heatmapCells(heatmapSvg(council));
    const at = (r: number, c: number) => cells[r * COUNCIL.length + c];
    expect(at(0, 1)?.text).toBe('0.10');
    expect(at(2, 2)?.text).toBe('1.00');
    expect(at(2, 3)?.text).toBe('0.00');
    expect(at(1, 0)).toMatchObject({ kind: 'cell flagged', fill: '#f4a261', text: 'flag' });
    expect(cells.filter((c) => c.kind === 'cell flagged')).toHaveLength(1);
  });

  it('shows a missing or unreadable score as an empty cell, apart from every score', () => {
    const cells = heatmapCells(
      heatmapSvg({ ...council, rows: ['a'], columns: ['x', 'y', 'z', 'w'], values: [[null, Number.NaN, 0, 1]], flagged: [] }),
    );
    expect(cells.map((c) => [c.kind, c.text, c.dashed])).toEqual([
      ['cell missing', '—', true],
      ['cell missing', '—', true],
      ['cell', '0.00', false],
      ['cell', '1.00', false],
    ]);
  });

  it('colours cells darker as the score grows, the text on each readable (contrast at least 4.5:1), dark on light and light on dark', () => {
    const scores = Array.from({ length: 101 }, (_, i) => i / 100);
    const cells = heatmapCells(heatmapSvg({ title: 't', rows: ['r'], columns: scores.map(String), values: [scores] }));
    const ratios = cells.map((c) => contrast(c.fill, c.ink));
    expect(Math.min(...ratios)).toBeGreaterThanOrEqual(4.5);
    const againstWhite = cells.map((c) => contrast(c.fill, '#ffffff'));
    for (let i = 1; i < againstWhite.length; i++) expect(againstWhite[i]).toBeGreaterThanOrEqual(againstWhite[i - 1] ?? 0);
    expect(contrast(cells[0]?.fill ?? '', '#ffffff')).toBeGreaterThan(1.1); // a 0 is not the white page
    expect(contrast(cells[0]?.ink ?? '', '#000000')).toBeLessThan(2); // dark text on the lightest cell
    expect(contrast(cells[100]?.ink ?? '', '#ffffff')).toBeLessThan(2); // light text on the darkest
    const flagged = heatmapCells(heatmapSvg({ ...council, rows: ['r'], columns: ['c'], values: [[0.5]], flagged: [[true]] }))[0];
    expect(contrast(flagged?.fill ?? '', flagged?.ink ?? '')).toBeGreaterThanOrEqual(4.5);
  });

  it('has a legend: the score scale from 0 to 1, and the flagged and missing cells', () => {
    const svg = parseXml(heatmapSvg(council));
    const [legend] = byClass(svg, 'legend');
    const words = descendants(legend ?? svg)
      .filter((e) => e.name === 'text')
      .map((e) => e.text);
    expect(words).toEqual(['score', '0', '0.5', '1', 'flagged: disagreement, sent to arbitration', 'no score']);
    const bar = descendants(legend ?? svg).find((e) => e.attributes.fill?.startsWith('url(#'));
    const id = /url\(#(.+)\)/.exec(bar?.attributes.fill ?? '')?.[1];
    const gradient = descendants(svg).find((e) => e.attributes.id === id);
    expect(gradient?.name).toBe('linearGradient');
    expect(gradient?.children.length).toBeGreaterThan(1);
    const swatches = descendants(legend ?? svg).filter((e) => e.name === 'rect' && e !== bar);
    expect(swatches[0]?.attributes.fill).toBe('#f4a261');
    expect(swatches[1]?.attributes['stroke-dasharray']).toBeDefined();
  });

  it('escapes every label: what a persona file or a title says is shown as written, never read as markup', () => {
    const hostile = ['a<b & "c" \'d\'', '</text><script>alert(1)</script>', ']]><!-- x -->', '&amp; &#60;'];
    const svg = heatmapSvg({
      title: `<title>&"${hostile[0]}`,
      rows: hostile,
      columns: hostile,
      values: hostile.map(() => hostile.map(() => 0.5)),
    });
    const doc = parseXml(svg);
    expect(texts(svg, 'row')).toEqual(hostile);
    expect(texts(svg, 'column')).toEqual(hostile);
    expect(texts(svg, 'title')).toEqual([`<title>&"${hostile[0]}`]);
    expect(descendants(doc).map((e) => e.name)).not.toContain('script');
  });

  it('leaves out what XML cannot hold (control characters, lone surrogates), keeps other text, and shortens a very long label', () => {
    const svg = heatmapSvg({
      title: 'bell\u0007 \uD800ok',
      rows: ['tab\there', 'Ωmega 名前 🎉'],
      columns: ['x'.repeat(60)],
      values: [[1], [0]],
    });
    expect(texts(svg, 'title')).toEqual(['bell ok']);
    expect(texts(svg, 'row')).toEqual(['tab here', 'Ωmega 名前 🎉']);
    const [column] = texts(svg, 'column');
    expect(column).toBe(`${'x'.repeat(39)}…`);
  });

  it('fits a council of three on a phone: at most 400 units wide, the labels inside the picture', () => {
    const svg = parseXml(heatmapSvg(council));
    const width = Number(svg.attributes.width);
    expect(width).toBeLessThanOrEqual(400);
    const rows = byClass(svg, 'row').map((e) => Number(e.attributes.x));
    expect(Math.min(...rows)).toBeGreaterThan(0);
    const cellRight = Math.max(
      ...byClass(svg, 'cell').map((c) => Number(c.children[0]?.attributes.x) + Number(c.children[0]?.attributes.width)),
    );
    expect(cellRight).toBeLessThanOrEqual(width);
  });
});
