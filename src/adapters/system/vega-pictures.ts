import { Worker } from 'node:worker_threads';
import type { PictureSpec } from '../../domain/modes/mode.js';
import type { PictureRenderer } from '../../domain/ports.js';

/**
 * Draws the artifact's pictures as SVG with Vega, headless (no browser, no canvas), on a worker
 * thread: drawing a heat map is ~8 ms of CPU, which on the main thread would hold up the run's end
 * and the next run's start. Vega is loaded (in the worker) on the first picture only, so commands
 * that draw none never pay for it. Where a worker cannot run (or fails), the picture is drawn here,
 * the same way: the same specification and the same Vega give the same bytes either way.
 */
export class VegaPictureRenderer implements PictureRenderer {
  async render(spec: PictureSpec): Promise<string> {
    const job = pictureJob(heatmapSpec(spec));
    if (!pictureThread.failed) {
      try {
        pictureThread.worker ??= new VegaWorker();
        return `${withStableIds(await pictureThread.worker.render(job))}\n`;
      } catch (error) {
        // A drawing that failed fails here too (below); a worker that could not run is not tried again.
        if (!(error instanceof WorkerUnavailable)) throw error;
        pictureThread.worker = undefined;
        pictureThread.failed = true;
      }
    }
    return `${withStableIds(await renderHere(job))}\n`;
  }
}

/**
 * One picture thread for the whole process, whichever renderer asks: starting a thread and loading
 * Vega in it costs ~150 ms of CPU, which a process that composes several apps (the tests, a console)
 * would otherwise pay for each. The thread holds no state between pictures but its views of their shapes
 * (`pictureDrawer`), and keeps the process alive only while it draws one.
 */
const pictureThread: { worker: VegaWorker | undefined; failed: boolean } = { worker: undefined, failed: false };

/**
 * The SVG with the ids Vega numbers from a counter of its own (`gradient_7`, `clip3`: how many
 * pictures the thread drew before) numbered from 0 in the order they appear, so that one picture is
 * the same bytes whoever draws it, and whenever: an artifact completed after a restart is identical.
 */
export function withStableIds(svg: string): string {
  const renamed = new Map<string, string>();
  const counts = new Map<string, number>();
  for (const [, prefix = '', n = ''] of svg.matchAll(/\bid="([A-Za-z_-]+?)(\d+)"/g)) {
    const id = `${prefix}${n}`;
    if (renamed.has(id)) continue;
    const next = counts.get(prefix) ?? 0;
    counts.set(prefix, next + 1);
    renamed.set(id, `${prefix}${next}`);
  }
  if (renamed.size === 0) return svg;
  return svg.replace(/(?<=id="|#)([A-Za-z_-]+?\d+)(?=[")])/g, (id) => renamed.get(id) ?? id);
}

/**
 * A picture to draw, as text (a string crosses to the worker thread in one copy; a nested object is
 * cloned field by field): its specification without its data, which is the shape (marks, scales,
 * legends: they repeat from run to run for one council) and the key its parse is kept under, and
 * its datasets by name, fed in after.
 */
export interface PictureJob {
  readonly shape: string;
  readonly data: string;
}

/** Splits a Vega specification into its shape and its inline datasets (`data[].values`). */
export function pictureJob(vegaSpec: Record<string, unknown>): PictureJob {
  const datasets = (vegaSpec.data ?? []) as { name: string; values?: unknown[] }[];
  const data: Record<string, unknown[]> = {};
  const shapeData = datasets.map(({ values, ...rest }) => {
    if (values !== undefined) data[rest.name] = values;
    return rest;
  });
  return { shape: JSON.stringify({ ...vegaSpec, data: shapeData }), data: JSON.stringify(data) };
}

/** The shapes whose views are kept (a council's heat map has one or two: its rows and title); the least recently used goes first. */
export const VIEWS_KEPT = 8;

/** Draws pictures one at a time: `draw(job)` resolves to the picture's SVG, as Vega draws it. */
export type PictureDrawer = (job: PictureJob) => Promise<string>;

/**
 * Draws pictures with `vega`, keeping one view per shape and feeding each picture's data into it: a
 * heat map's parse and dataflow were ~85 % of its CPU (~4.5 ms of ~5; a kept view draws in ~0.5 ms),
 * and one shape with the same data gives the same SVG either way, whatever the view drew before
 * (tests/adapters/system/vega-pictures.test.ts). Pictures are drawn in turn (a view draws one at a
 * time); a view that failed is dropped. Self-contained (no imports, no outer names): the worker
 * thread runs its source text too.
 */
export function pictureDrawer(
  vega: { parse(spec: unknown): unknown; View: new (runtime: never, options: { renderer: 'none' }) => DrawingView },
  kept: number,
): PictureDrawer {
  const views = new Map<string, DrawingView>();
  const viewFor = (shape: string): DrawingView => {
    let view = views.get(shape);
    if (view) views.delete(shape); // put back last: the most recently used
    view ??= new vega.View(vega.parse(JSON.parse(shape)) as never, { renderer: 'none' });
    views.set(shape, view);
    for (const [old, oldest] of views) {
      if (views.size <= kept) break;
      views.delete(old);
      oldest.finalize();
    }
    return view;
  };
  const drawOne = async (job: PictureJob): Promise<string> => {
    const view = viewFor(job.shape);
    try {
      for (const [name, values] of Object.entries(JSON.parse(job.data) as Record<string, unknown[]>)) view.data(name, values);
      return await view.toSVG();
    } catch (error) {
      views.delete(job.shape);
      view.finalize();
      throw error;
    }
  };
  let last: Promise<unknown> = Promise.resolve();
  return (job) => {
    const drawn = last.then(() => drawOne(job));
    last = drawn.catch(() => undefined);
    return drawn;
  };
}

/** The part of a Vega view `pictureDrawer` uses. */
interface DrawingView {
  data(name: string, values: unknown[]): unknown;
  toSVG(): Promise<string>;
  finalize(): unknown;
}

/** Draws the pictures of this thread (where the worker could not run), once Vega is loaded. */
let drawingHere: Promise<PictureDrawer> | undefined;

async function renderHere(job: PictureJob): Promise<string> {
  drawingHere ??= import('vega').then((vega) => pictureDrawer(vega as never, VIEWS_KEPT));
  return (await drawingHere)(job);
}

/** The worker could not start or died: the caller draws the picture itself. */
class WorkerUnavailable extends Error {}

/**
 * The worker's code (CommonJS, evaluated): draws each picture it is
 * sent with the Vega module at `workerData`, keeping a view of each shape it drew.
 */
const WORKER_CODE = `
const { parentPort, workerData } = require('node:worker_threads');
const pictureDrawer = ${pictureDrawer.toString()};
let drawing;
parentPort.on('message', async ({ id, job }) => {
  try {
    const draw = await (drawing ??= import(workerData).then((vega) => pictureDrawer(vega, ${VIEWS_KEPT})));
    parentPort.postMessage({ id, svg: await draw(job) });
  } catch (error) {
    parentPort.postMessage({ id, error: String((error && error.message) || error) });
  }
});
`;

/** One worker thread drawing pictures in turn; it keeps the process alive only while a picture is being drawn. */
class VegaWorker {
  readonly #worker: Worker;
  readonly #pending = new Map<number, { resolve: (svg: string) => void; reject: (error: Error) => void }>();
  #next = 0;
  /** Why the thread is gone, once it is: a picture sent to it then would never be answered. */
  #gone: string | undefined;

  constructor() {
    let vegaUrl: string;
    try {
      vegaUrl = import.meta.resolve('vega');
    } catch (error) {
      throw new WorkerUnavailable(`cannot find vega for a worker: ${(error as Error).message}`);
    }
    this.#worker = new Worker(WORKER_CODE, { eval: true, workerData: vegaUrl });
    this.#worker.unref();
    this.#worker.on('message', (m: { id: number; svg?: string; error?: string }) => this.#settle(m));
    const gone = (why: string) => {
      this.#gone ??= why;
      for (const p of this.#pending.values()) p.reject(new WorkerUnavailable(why));
      this.#pending.clear();
    };
    this.#worker.on('error', (error) => gone(`the picture worker failed: ${error.message}`));
    this.#worker.on('exit', (code) => gone(`the picture worker stopped (${code})`));
  }

  render(job: PictureJob): Promise<string> {
    if (this.#gone !== undefined) return Promise.reject(new WorkerUnavailable(this.#gone));
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      if (this.#pending.size === 1) this.#worker.ref();
      this.#worker.postMessage({ id, job });
    });
  }

  #settle(m: { id: number; svg?: string; error?: string }): void {
    const pending = this.#pending.get(m.id);
    if (!pending) return;
    this.#pending.delete(m.id);
    if (this.#pending.size === 0) this.#worker.unref();
    if (m.svg !== undefined) pending.resolve(m.svg);
    else pending.reject(new Error(`the heat map could not be drawn: ${m.error ?? 'no reason given'}`));
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
