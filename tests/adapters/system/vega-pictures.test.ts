import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  drawPicture,
  heatmapSpec,
  lowerThisThreadPriority,
  pictureJob,
  VegaPictureRenderer,
  withStableIds,
} from '../../../src/adapters/system/vega-pictures.js';
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

describe('drawing a shape parsed once', () => {
  it('gives, for each picture, the bytes a fresh parse of its whole specification gives', async () => {
    const vega = await import('vega');
    const parsed = new Map<string, unknown>();
    const first = await drawPicture(vega as never, parsed, pictureJob(heatmapSpec(spec)), 8);
    const second = await drawPicture(vega as never, parsed, pictureJob(heatmapSpec(other)), 8);
    expect(parsed.size).toBe(1); // one shape, parsed once
    expect(withStableIds(first)).toBe(withStableIds(await drawnHere(spec)));
    expect(withStableIds(second)).toBe(withStableIds(await drawnHere(other)));
    expect(second).not.toBe(first); // the data of the second picture, not the first's
  });

  it('keeps a bounded number of shapes, dropping the oldest', async () => {
    const vega = await import('vega');
    const parsed = new Map<string, unknown>();
    for (const title of ['a', 'b', 'c']) await drawPicture(vega as never, parsed, pictureJob(heatmapSpec({ ...spec, title })), 2);
    expect([...parsed.keys()].map((k) => JSON.parse(k).title.text)).toEqual(['b', 'c']);
  });

  it('the picture thread draws a shape it parsed before with the new data', async () => {
    const renderer = new VegaPictureRenderer();
    await renderer.render(spec);
    expect(await renderer.render(other)).toBe(`${withStableIds(await drawnHere(other))}\n`);
  });
});

/** Each thread of this process and its nice value (field 19 of /proc/<pid>/task/<tid>/stat). */
function threadNices(): Map<string, number> {
  const nices = new Map<string, number>();
  for (const tid of readdirSync('/proc/self/task')) {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    nices.set(tid, Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]));
  }
  return nices;
}

describe('the picture thread runs at the lowest priority', () => {
  const linux = existsSync('/proc/thread-self/stat');
  const ownNice = (): number => Number(threadNices().get(readFileSync('/proc/thread-self/stat', 'utf8').split(' ')[0] ?? '') ?? 0);

  it.skipIf(!linux || (linux && ownNice() === 19))('on Linux: the thread drawing is at nice 19, the thread that asked is not', async () => {
    const before = ownNice();
    await new VegaPictureRenderer().render(spec);
    expect([...threadNices().values()]).toContain(19);
    expect(ownNice()).toBe(before);
  });

  it('sets the nice value of the thread /proc/thread-self names, and only that', () => {
    const calls: [number, number][] = [];
    const set = { setPriority: (pid: number, priority: number) => void calls.push([pid, priority]) };
    expect(lowerThisThreadPriority({ readlinkSync: () => '4242/task/4250' }, set)).toBe(true);
    expect(calls).toEqual([[4250, 19]]);
  });

  it('leaves the thread as it is where there is no /proc, no thread id, or no permission', () => {
    const noProc = {
      readlinkSync: () => {
        throw Object.assign(new Error('ENOENT'), { code: 'ENOENT' });
      },
    };
    const refused = {
      setPriority: () => {
        throw Object.assign(new Error('EACCES'), { code: 'EACCES' });
      },
    };
    const never = {
      setPriority: () => {
        throw new Error('must not be called');
      },
    };
    expect(lowerThisThreadPriority(noProc, never)).toBe(false);
    expect(lowerThisThreadPriority({ readlinkSync: () => 'self' }, never)).toBe(false);
    expect(lowerThisThreadPriority({ readlinkSync: () => '4242/task/4250' }, refused)).toBe(false);
  });
});
