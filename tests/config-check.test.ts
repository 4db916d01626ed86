import { statSync, type BigIntStats } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { realStampSource, StampedCache, type StampSource } from '../src/adapters/fs/file-stamp.js';
import { cachedConfigCheck } from '../src/config.js';

// The watcher asks what is wrong with maestro.config.json before every claim: the file is read and
// validated again only when its stamp changed, and every change is seen by the next check.

let dir: string;
let file: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'maestro-config-check-'));
  file = path.join(dir, 'maestro.config.json');
});
afterEach(() => rm(dir, { recursive: true, force: true }));

const VALID = JSON.stringify({ history: { keep_runs: 5 } });
const BROKEN = JSON.stringify({ histroy: { keep_runs: 5 } });
/** The real file system, on a clock a minute ahead: every file looks settled, so the cache is trusted at once. */
const settled: StampSource = { stat: realStampSource.stat, now: () => Date.now() + 60_000 };
/** A stat that stays as it was for `file` while `frozen` holds one: what a file that did not change looks like. */
function freezable(): { source: StampSource; freeze: (st: BigIntStats | undefined) => void } {
  let frozen: BigIntStats | undefined;
  return {
    source: { stat: async (f) => (f === file && frozen ? frozen : realStampSource.stat(f)), now: settled.now },
    freeze: (st) => (frozen = st),
  };
}

describe('cachedConfigCheck', () => {
  it('answers from what it read while the file keeps its stamp, and reads it again once the stamp changes', async () => {
    await writeFile(file, VALID);
    const { source, freeze } = freezable();
    const check = cachedConfigCheck(file, new StampedCache(source));
    freeze(statSync(file, { bigint: true }));
    expect(await check()).toEqual([]);
    await writeFile(file, BROKEN);
    expect(await check()).toEqual([]);
    freeze(undefined);
    expect(await check()).toEqual([expect.stringMatching(/^maestro\.config\.json: .*histroy/)]);
  });

  it('sees a file edited in place to the same size with its modification time put back, broken and then fixed', async () => {
    const check = cachedConfigCheck(file, new StampedCache(settled));
    const anHourAgo = new Date(Math.floor(Date.now() / 1000) * 1000 - 3_600_000); // whole seconds: set exactly
    await writeFile(file, VALID);
    await utimes(file, anHourAgo, anHourAgo);
    expect(await check()).toEqual([]);
    for (const [text, problems] of [
      [BROKEN, 1],
      [VALID, 0],
    ] as const) {
      await writeFile(file, text);
      await utimes(file, anHourAgo, anHourAgo);
      expect((await stat(file)).mtimeMs).toBe(anHourAgo.getTime());
      expect(await check()).toHaveLength(problems);
    }
  });

  it('no file: nothing wrong; one created broken is seen', async () => {
    const check = cachedConfigCheck(file, new StampedCache(settled));
    expect(await check()).toEqual([]);
    await writeFile(file, '{ "history": ');
    expect(await check()).toEqual([expect.stringContaining('not valid JSON')]);
  });

  it('does not keep a file it could not read: the next check reads again, even with the stamp unchanged', async () => {
    await mkdir(file); // a folder in its place: cannot be read as a file
    const { source, freeze } = freezable();
    const check = cachedConfigCheck(file, new StampedCache(source));
    freeze(statSync(file, { bigint: true }));
    expect(await check()).toEqual([expect.stringContaining('cannot be read')]);
    await rm(file, { recursive: true });
    await writeFile(file, VALID);
    expect(await readFile(file, 'utf8')).toBe(VALID);
    expect(await check()).toEqual([]);
  });
});
