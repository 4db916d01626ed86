import { renameSync } from 'node:fs';
import { mkdir, open, rename, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FsCommandInbox } from '../../../src/adapters/fs/command-inbox.js';
import { isCommandFileName } from '../../../src/domain/queue.js';
import type { ReadyFile } from '../../../src/domain/queue.js';
import { makeWorkspace, removeWorkspace, waitFor } from '../../helpers/watch-workspace.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function inboxIn(
  options: { stabilityMs?: number } = {},
): Promise<{ dir: string; inbox: FsCommandInbox; changes: () => number; start: () => Promise<void> }> {
  const ws = await makeWorkspace('maestro-inbox-');
  cleanups.push(() => removeWorkspace(ws));
  const dir = path.join(ws, 'commands');
  const inbox = new FsCommandInbox({ dir, ...options });
  cleanups.push(() => inbox.close());
  let count = 0;
  return { dir, inbox, changes: () => count, start: () => inbox.start(() => (count += 1)) };
}

function takeAll(inbox: FsCommandInbox): ReadyFile[] {
  const out: ReadyFile[] = [];
  for (let f = inbox.take(); f; f = inbox.take()) out.push(f);
  return out;
}

describe('isCommandFileName', () => {
  it.each([
    ['command.json', true],
    ['review-2026.json', true],
    ['.hidden.json', false],
    ['notes.json~', false],
    ['.notes.json.swp', false],
    ['notes.json.swp', false],
    ['4913', false],
    ['draft.json.tmp', false],
    ['.#lock.json', false],
    ['#autosave.json#', false],
    ['data.json.3f2a91', false],
    ['.json', false],
    ['README.md', false],
  ])('%s → %s', (name, expected) => {
    expect(isCommandFileName(name)).toBe(expected);
  });
});

describe('FsCommandInbox (real chokidar)', () => {
  it('scans files already there at start-up and hands them over oldest first (mtime, then name)', async () => {
    const { dir, inbox, start } = await inboxIn();
    const at = (s: number): Date => new Date(Date.UTC(2026, 0, 1, 0, 0, s));
    for (const [name, time] of [
      ['b.json', 2],
      ['a.json', 2],
      ['c.json', 1],
      ['d.json', 3],
    ] as const) {
      await writeFile(path.join(dir, name), '{"task_description":"x"}');
      await utimes(path.join(dir, name), at(time), at(time));
    }
    await start();
    expect(takeAll(inbox).map((f) => f.name)).toEqual(['c.json', 'a.json', 'b.json', 'd.json']);
  });

  it('ignores dotfiles, editor temp files, other names and subfolders', async () => {
    const { dir, inbox, changes, start } = await inboxIn();
    await start();
    await mkdir(path.join(dir, 'sub'));
    await mkdir(path.join(dir, 'folder.json'));
    for (const name of ['.hidden.json', 'x.json~', '.x.json.swp', '4913', 'x.json.tmp', 'sub/nested.json', 'folder.json/inner.json']) {
      await writeFile(path.join(dir, name), '{"task_description":"x"}');
    }
    // A real command afterwards: once it is ready, the others have had their chance to show up.
    await writeFile(path.join(dir, 'real.json'), '{"task_description":"x"}');
    await waitFor('the real command', () => inbox.ready === 1 && inbox.pending === 0);
    expect(takeAll(inbox).map((f) => f.name)).toEqual(['real.json']);
    expect(changes()).toBeGreaterThan(0);
  });

  it('hands over a file renamed in from a temporary name as soon as it appears', async () => {
    const { dir, inbox, start } = await inboxIn({ stabilityMs: 60_000 });
    await start();
    await writeFile(path.join(dir, 'cmd.json.tmp'), '{"task_description":"x"}');
    await rename(path.join(dir, 'cmd.json.tmp'), path.join(dir, 'cmd.json'));
    // With a 60 s stability window, being ready at all proves no stability wait was involved.
    await waitFor('the renamed file', () => inbox.ready === 1);
    expect(takeAll(inbox).map((f) => f.name)).toEqual(['cmd.json']);
  });

  it('waits for a half-written file while it is incomplete, and hands it over once it parses', async () => {
    const { dir, inbox, start } = await inboxIn({ stabilityMs: 60_000 });
    await start();
    const handle = await open(path.join(dir, 'slow.json'), 'w');
    await handle.write('{"task_description": "half');
    await handle.sync();
    await waitFor('the inbox to notice the partial file', () => inbox.pending === 1);
    expect(inbox.ready).toBe(0);
    await handle.write(' and the rest"}');
    await handle.close();
    await waitFor('the whole file', () => inbox.ready === 1);
    expect(takeAll(inbox).map((f) => f.name)).toEqual(['slow.json']);
  });

  it('hands over a file that never parses once it has stopped changing (to be rejected)', async () => {
    const { dir, inbox, start } = await inboxIn({ stabilityMs: 300 });
    await start();
    await writeFile(path.join(dir, 'broken.json'), '{ not json');
    await waitFor('the stable broken file', () => inbox.ready === 1);
    expect(inbox.pending).toBe(0);
    expect(takeAll(inbox).map((f) => f.name)).toEqual(['broken.json']);
  });

  it('forgets a file that disappears before it is taken (another watcher claimed it)', async () => {
    const { dir, inbox, start } = await inboxIn();
    await writeFile(path.join(dir, 'gone.json'), '{}');
    await start();
    expect(inbox.ready).toBe(1);
    await rename(path.join(dir, 'gone.json'), path.join(dir, '..', 'elsewhere.json'));
    await waitFor('the unlink to be seen', () => inbox.ready === 0 && inbox.pending === 0);
    expect(inbox.take()).toBeUndefined();
  });

  it('lets go of the folder when closed right after its files were claimed (a stopped watcher exits)', async () => {
    // `maestro watch` stopped by a signal just after claiming: the folder's watch handle must not
    // outlive close(), or the process, its loop stopped, never exits.
    const watches = (): number => process.getActiveResourcesInfo().filter((r) => r === 'FSEventWrap').length;
    const before = watches();
    const { dir, inbox, start } = await inboxIn();
    const names = Array.from({ length: 8 }, (_, i) => `c-${i}.json`);
    for (const name of names) await writeFile(path.join(dir, name), '{}');
    await mkdir(path.join(dir, '..', 'claimed'));
    await start();
    expect(inbox.ready).toBe(names.length);
    await new Promise((resolve) => setTimeout(resolve, 20));
    for (const name of names) renameSync(path.join(dir, name), path.join(dir, '..', 'claimed', name));
    // Closed while the watcher is still looking at those removals.
    await new Promise<void>((resolve, reject) => setImmediate(() => inbox.close().then(resolve, reject)));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(watches()).toBe(before);
  });

  it('leaves no timer behind when closed while a file was just claimed (a stopped watcher exits at once, not a second later)', async () => {
    const timers = (): number => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const { dir, inbox, start } = await inboxIn();
    await writeFile(path.join(dir, 'a.json'), '{}');
    await mkdir(path.join(dir, '..', 'claimed'));
    await start();
    await waitFor('the start-up scan to settle', () => inbox.ready === 1 && inbox.pending === 0);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const before = timers();
    renameSync(path.join(dir, 'a.json'), path.join(dir, '..', 'claimed', 'a.json'));
    // The watcher sees the folder change and starts reading it again; closed meanwhile.
    await new Promise((resolve) => setTimeout(resolve, 0));
    await inbox.close();
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(timers()).toBe(before);
  });
});
