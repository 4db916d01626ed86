import { readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp } from '../../src/compose/app.js';
import { openWatcher, type Service } from '../../src/compose/watch.js';
import type { WatchEvent } from '../../src/domain/queue.js';
import { dropCommand, listDir, makeWorkspace, removeWorkspace, task, waitFor } from '../helpers/watch-workspace.js';
import { editKeepingSizeAndMtime } from '../helpers/edit-in-place.js';

// The watcher looks at the workspace before every claim, and reads again only the files that changed:
// an edit that keeps a file's size and modification time is still seen by the next claim and run.

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const VALID = JSON.stringify({ history: { keep_runs: 5 } });
const BROKEN = JSON.stringify({ histroy: { keep_runs: 5 } });
/** Modification times in whole seconds, an hour ago: settled, and settable exactly. */
const AN_HOUR_AGO = new Date(Math.floor(Date.now() / 1000) * 1000 - 3_600_000);

/** A watcher on a fresh workspace whose persona and configuration files have settled (their stamps are trusted at once). */
async function watcher(): Promise<{ ws: string; events: WatchEvent[]; service: Service }> {
  const ws = await makeWorkspace('maestro-preflight-');
  cleanups.push(() => removeWorkspace(ws));
  await writeFile(path.join(ws, 'maestro.config.json'), VALID);
  for (const name of await readdir(path.join(ws, 'personas'))) await utimes(path.join(ws, 'personas', name), AN_HOUR_AGO, AN_HOUR_AGO);
  await utimes(path.join(ws, 'maestro.config.json'), AN_HOUR_AGO, AN_HOUR_AGO);
  await sleep(60); // past the file clock's tick since the last change (file-stamp.ts)
  const app = await createApp({ workspace: ws, env: { MAESTRO_WATCH_RECHECK_MS: '50' } });
  const events: WatchEvent[] = [];
  const service = await openWatcher(app, {
    once: false,
    pid: process.pid,
    version: 'test',
    onEvent: (e) => events.push(e),
    onNotice: () => undefined,
  });
  const running = service.run();
  cleanups.push(async () => {
    await service.stop();
    await running;
    await service.close();
  });
  await waitFor('the watcher to start', () => events.some((e) => e.kind === 'started'));
  return { ws, events, service };
}

/** Rewrites a file in place to text of the same length, its modification time put back, then lets it settle (only its stamp can tell the edit now, not its youth). */
const editInPlace = (file: string, edit: (text: string) => string) => editKeepingSizeAndMtime(file, edit, 60);

const finished = (events: WatchEvent[]) => events.filter((e): e is Extract<WatchEvent, { kind: 'finished' }> => e.kind === 'finished');
const notices = (events: WatchEvent[], text: string) => events.filter((e) => e.kind === 'notice' && String(e.message).includes(text));

async function runOne(ws: string, events: WatchEvent[], name: string): Promise<Extract<WatchEvent, { kind: 'finished' }>> {
  await dropCommand(ws, name, task('Review the rollout plan'));
  return waitFor(`${name} to finish`, () => finished(events).find((e) => e.source === name));
}

describe('the watcher sees every change to the workspace at the next claim', () => {
  it('a persona file edited in place (same size, same modification time): broken, then fixed', async () => {
    const { ws, events } = await watcher();
    expect(await runOne(ws, events, 'first.json')).toMatchObject({ status: 'completed' });

    const strategist = path.join(ws, 'personas', 'strategist.md');
    await editInPlace(strategist, (t) => t.replace(/^order: (\d)$/m, 'order: x'));
    await dropCommand(ws, 'waits.json', task('Review the rollback plan'));
    const notice = await waitFor('the notice', () => notices(events, 'cannot run commands')[0]);
    expect(String(notice.kind === 'notice' && notice.message)).toContain('strategist.md');
    expect(await listDir(path.join(ws, 'commands'))).toEqual(['waits.json']);

    await editInPlace(strategist, (t) => t.replace(/^order: x$/m, 'order: 2'));
    await waitFor('waits.json to finish', () => finished(events).find((e) => e.source === 'waits.json'));
    expect(notices(events, 'taking commands again')).toHaveLength(1);
  }, 60_000);

  it('maestro.config.json edited in place (same size, same modification time): broken, then fixed', async () => {
    const { ws, events } = await watcher();
    expect(await runOne(ws, events, 'first.json')).toMatchObject({ status: 'completed' });

    const config = path.join(ws, 'maestro.config.json');
    await editInPlace(config, () => BROKEN);
    await dropCommand(ws, 'waits.json', task('Review the rollback plan'));
    const notice = await waitFor('the notice', () => notices(events, 'cannot run commands')[0]);
    expect(String(notice.kind === 'notice' && notice.message)).toContain('histroy');
    expect(await listDir(path.join(ws, 'commands'))).toEqual(['waits.json']);

    await editInPlace(config, () => VALID);
    await waitFor('waits.json to finish', () => finished(events).find((e) => e.source === 'waits.json'));
  }, 60_000);

  it('a persona added between two runs sits on the next council; removed, it is gone from the one after', async () => {
    const { ws, events } = await watcher();
    const council = async (name: string) => {
      const run = await runOne(ws, events, name);
      const state = JSON.parse(await readFile(path.join(ws, '.maestro', 'runs', run.run_id, 'state.json'), 'utf8'));
      return state.plan.personas as string[];
    };
    expect(await council('one.json')).not.toContain('skeptic');
    const auditor = await readFile(path.join(ws, 'personas', 'auditor.md'), 'utf8');
    await writeFile(
      path.join(ws, 'personas', 'skeptic.md'),
      auditor.replace('id: auditor', 'id: skeptic').replace('name: Auditor', 'name: Skeptic'),
    );
    expect(await council('two.json')).toContain('skeptic');
    await rm(path.join(ws, 'personas', 'skeptic.md'));
    expect(await council('three.json')).not.toContain('skeptic');
  }, 60_000);
});
