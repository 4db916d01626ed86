import { spawn } from 'node:child_process';
import { mkdir, open, rename, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { FsCommandInbox } from '../../../src/adapters/fs/command-inbox.js';
import { isCommandFileName } from '../../../src/domain/queue.js';
import type { ReadyFile } from '../../../src/domain/queue.js';
import { REPO_ROOT } from '../../fakes/fixtures.js';
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

describe('FsCommandInbox (a real watch on the folder)', () => {
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

  it('lets a stopped watcher exit by itself: a process that claims every file and closes its inbox at once ends', async () => {
    // `maestro watch` stopped by a signal just after claiming: nothing of the inbox may keep the process alive.
    const { dir } = await inboxIn();
    for (let i = 0; i < 8; i++) await writeFile(path.join(dir, `c-${i}.json`), '{}');
    const claimed = path.join(dir, '..', 'claimed');
    await mkdir(claimed);
    const module = pathToFileURL(path.join(REPO_ROOT, 'dist', 'adapters', 'fs', 'command-inbox.js')).href;
    const script = [
      "import { renameSync } from 'node:fs';",
      `import { FsCommandInbox } from ${JSON.stringify(module)};`,
      'const [dir, claimed] = process.argv.slice(1);',
      'const inbox = new FsCommandInbox({ dir });',
      'await inbox.start(() => undefined);',
      'for (let f = inbox.take(); f; f = inbox.take()) renameSync(`${dir}/${f.name}`, `${claimed}/${f.name}`);',
      'await inbox.close();',
    ].join('\n');
    const child = spawn(process.execPath, ['--input-type=module', '-e', script, dir, claimed], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exit = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect({ exit, stderr }).toEqual({ exit: 0, stderr: '' });
  });
});
