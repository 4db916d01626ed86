/** A heat map: one cell per row × column, a score from 0 to 1 in each, flagged cells drawn apart. */
export interface Heatmap {
  readonly title: string;
  readonly rows: readonly string[];
  readonly columns: readonly string[];
  /** rows × columns, null where a value is missing. */
  readonly values: readonly (readonly (number | null)[])[];
  /** rows × columns, true where a cell was flagged for arbitration. */
  readonly flagged?: readonly (readonly boolean[])[];
}

/** The scale from 0 to 1, light to dark (ColorBrewer's Blues, from its second step: a 0 stays apart from the white page). */
const SCALE = ['#deebf7', '#c6dbef', '#9ecae1', '#6baed6', '#4292c6', '#2171b5', '#08519c', '#08306b'];
const FLAGGED = { fill: '#f4a261', legend: 'flagged: disagreement, sent to arbitration' };
/** An empty cell, outlined with a dashed line. */
const MISSING = { fill: '#ffffff', outline: ' stroke="#8c8c8c" stroke-dasharray="3 2"', legend: 'no score' };
const INK = { dark: '#000000', light: '#ffffff' };
const FONT = 12;
const TITLE_FONT = 14;
const CELL = { width: 52, height: 26 };
const PAD = 12;
const DIAGONAL = Math.SQRT1_2;
const SCALE_BAR = { width: 160, height: 12 };
const FONT_FAMILY = "system-ui, -apple-system, 'Segoe UI', Roboto, Helvetica, Arial, sans-serif";

/**
 * The heat map as SVG text: the title, the column labels slanted above the grid, the row labels left
 * of it, each cell coloured by its score and written with it (`flag` on an orange cell where it was
 * flagged, `—` on an empty one where the score is missing), and under the grid a legend: the score's
 * scale and the two kinds of cell. Sized by its viewBox, so that it shrinks to a phone's width as one
 * picture; the text in each cell is black or white by the cell's luminance, whichever contrasts more
 * (at least 4.58:1 whatever the colour). Every label is escaped as XML; one heat map is always the
 * same bytes.
 */
export function heatmapSvg(map: Heatmap): string {
  const rows = map.rows.map((r) => label(r, 40));
  const columns = map.columns.map((c) => label(c, 40));
  const title = label(map.title, 90);
  const left = PAD + Math.max(0, ...rows.map((r) => textWidth(r, FONT))) + 8;
  const top = PAD + TITLE_FONT + 12 + Math.max(0, ...columns.map((c) => textWidth(c, FONT))) * DIAGONAL + 8;
  const gridBottom = top + rows.length * CELL.height;
  const centre = (c: number) => left + (c + 0.5) * CELL.width;
  // The right edge of whatever reaches furthest: the grid, a slanted column label, the title, the legend.
  const right = Math.max(
    left + columns.length * CELL.width,
    ...columns.map((c, i) => centre(i) + (textWidth(c, FONT) + 4) * DIAGONAL),
    PAD + textWidth(title, TITLE_FONT),
    PAD + 22 + Math.max(textWidth(FLAGGED.legend, FONT), textWidth(MISSING.legend, FONT)),
    PAD + 44 + SCALE_BAR.width + 8,
  );
  const width = n(right + PAD);
  const legendTop = gridBottom + 22;
  const height = n(legendTop + 86);
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img"`,
    `  aria-labelledby="heatmap-title" font-family="${FONT_FAMILY}" font-size="${FONT}" fill="${INK.dark}">`,
    `<title id="heatmap-title">${title}</title>`,
    `<rect width="100%" height="100%" fill="#ffffff"/>`,
    `<text class="title" x="${PAD}" y="${PAD + TITLE_FONT}" font-size="${TITLE_FONT}" font-weight="bold">${title}</text>`,
    ...columns.map((c, i) => `<text class="column" transform="translate(${n(centre(i))} ${n(top - 6)}) rotate(-45)">${c}</text>`),
    ...rows.map(
      (r, i) => `<text class="row" x="${n(left - 8)}" y="${n(top + (i + 0.5) * CELL.height + FONT * 0.35)}" text-anchor="end">${r}</text>`,
    ),
    ...map.rows.flatMap((_, r) => map.columns.map((_, c) => cell(map, r, c, left + c * CELL.width, top + r * CELL.height))),
    ...legend(legendTop),
    '</svg>',
  ];
  return `${out.join('\n')}\n`;
}

/** One cell: its rectangle (1 unit inside its place on each side, the white page between cells) and its text. */
function cell(map: Heatmap, r: number, c: number, x: number, y: number): string {
  const raw = map.values[r]?.[c];
  const value = typeof raw === 'number' && Number.isFinite(raw) ? Math.min(1, Math.max(0, raw)) : null;
  const flagged = map.flagged?.[r]?.[c] === true;
  const kind = flagged ? 'cell flagged' : value === null ? 'cell missing' : 'cell';
  const fill = flagged ? FLAGGED.fill : value === null ? MISSING.fill : scaleColour(value);
  const text = flagged ? 'flag' : value === null ? '—' : value.toFixed(2);
  const outline = !flagged && value === null ? MISSING.outline : '';
  const rect = `<rect x="${n(x + 1)}" y="${n(y + 1)}" width="${CELL.width - 2}" height="${CELL.height - 2}" fill="${fill}"${outline}/>`;
  const ink = inkOn(fill);
  const at = `x="${n(x + CELL.width / 2)}" y="${n(y + CELL.height / 2 + FONT * 0.35)}"`;
  return `<g class="${kind}">${rect}<text ${at} text-anchor="middle" fill="${ink}">${text}</text></g>`;
}

/** The legend under the grid: the score's scale from 0 to 1, then a swatch of each kind of cell drawn apart. */
function legend(top: number): string[] {
  const bar = { x: PAD + 44, y: top };
  const stops = SCALE.map((colour, i) => `<stop offset="${n((i / (SCALE.length - 1)) * 100)}%" stop-color="${colour}"/>`);
  const ticks = [0, 0.5, 1].map(
    (t) => `<text x="${n(bar.x + t * SCALE_BAR.width)}" y="${n(bar.y + SCALE_BAR.height + 14)}" text-anchor="middle">${t}</text>`,
  );
  const swatch = (y: number, fill: string, outline: string, text: string) =>
    `<rect x="${PAD}" y="${n(y)}" width="14" height="14" fill="${fill}"${outline}/><text x="${PAD + 22}" y="${n(y + 7 + FONT * 0.35)}">${text}</text>`;
  return [
    '<g class="legend">',
    `<defs><linearGradient id="heatmap-scale">${stops.join('')}</linearGradient></defs>`,
    `<text x="${PAD}" y="${n(bar.y + SCALE_BAR.height / 2 + FONT * 0.35)}">score</text>`,
    `<rect x="${bar.x}" y="${n(bar.y)}" width="${SCALE_BAR.width}" height="${SCALE_BAR.height}" fill="url(#heatmap-scale)" stroke="#8c8c8c" stroke-width="0.5"/>`,
    ...ticks,
    swatch(top + 34, FLAGGED.fill, '', FLAGGED.legend),
    swatch(top + 56, MISSING.fill, MISSING.outline, MISSING.legend),
    '</g>',
  ];
}

/** The colour of a score (0–1) on the scale, between its two nearest steps. */
function scaleColour(value: number): string {
  const at = Math.min(1, Math.max(0, value)) * (SCALE.length - 1);
  const i = Math.min(SCALE.length - 2, Math.floor(at));
  const [a, b] = [rgb(SCALE[i] ?? ''), rgb(SCALE[i + 1] ?? '')];
  return `#${a
    .map((channel, k) => Math.round(channel + (at - i) * ((b[k] ?? 0) - channel)))
    .map((channel) => channel.toString(16).padStart(2, '0'))
    .join('')}`;
}

/** The text colour to write on `fill`: dark or light, whichever has the greater contrast with it (WCAG 2). */
function inkOn(fill: string): string {
  return contrast(fill, INK.dark) >= contrast(fill, INK.light) ? INK.dark : INK.light;
}

/** The WCAG 2 contrast ratio of two `#rrggbb` colours, from 1 to 21. */
function contrast(a: string, b: string): number {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return ((hi ?? 0) + 0.05) / ((lo ?? 0) + 0.05);
}

function luminance(colour: string): number {
  const [r = 0, g = 0, b = 0] = rgb(colour).map((channel) => {
    const c = channel / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

function rgb(colour: string): number[] {
  return [1, 3, 5].map((i) => Number.parseInt(colour.slice(i, i + 2), 16));
}

/**
 * A label as XML text: on one line, at most `max` characters (an ellipsis after), without the
 * characters XML cannot hold (controls, lone surrogates), and `&<>"'` escaped.
 */
function label(text: string, max: number): string {
  const chars = [
    ...text
      .replace(/[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, '')
      .replace(/\s+/g, ' ')
      .trim(),
  ];
  const shown = chars.length > max ? `${chars.slice(0, max - 1).join('')}…` : chars.join('');
  return shown.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * The width of escaped text at `size`, estimated (no fonts here): 0.6 em a character (DejaVu Sans
 * Bold's average; most fonts are narrower), 1 em for a wide (East Asian) one.
 */
function textWidth(escaped: string, size: number): number {
  const text = escaped.replace(/&#\d+;/g, '_');
  return [...text].reduce((w, ch) => w + ((ch.codePointAt(0) ?? 0) >= 0x1100 ? 1 : 0.6), 0) * size;
}

/** A coordinate, to a tenth. */
function n(x: number): number {
  return Math.round(x * 10) / 10;
}
