import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { realSyncFs, writeFileAtomicallySync, type SyncFs } from '../../../src/adapters/fs/atomic-file.js';
import { FsRunStore } from '../../../src/adapters/fs/run-store.js';
import { readIfExists } from '../../../src/adapters/fs/read.js';
import { WorkspacePaths } from '../../../src/adapters/fs/workspace-paths.js';
import { StorageError } from '../../../src/domain/errors.js';
import type { RunState } from '../../../src/domain/run-state.js';
import { aRunState, memoryApp } from '../../fakes/memory-app.js';

// The calls on a run's path that are synchronous (small reads, the holder, the first commit's files):
// they must keep every guarantee of the asynchronous ones they replace.

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'maestro-sync-paths-'));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

describe('readIfExists', () => {
  it('reads small and large files whole, says undefined for a missing one, and names the file for a folder', async () => {
    const small = path.join(dir, 'small.json');
    const large = path.join(dir, 'large.jsonl');
    await writeFile(small, '{"a":1}\n');
    // Past the size read synchronously: read off the event loop, whole all the same.
    const big = `${'é'.repeat(200_000)}\n${'x'.repeat(100_000)}`;
    await writeFile(large, big);
    expect(await readIfExists(small)).toBe('{"a":1}\n');
    expect(await readIfExists(large)).toBe(big);
    expect(await readIfExists(path.join(dir, 'none.json'))).toBeUndefined();
    await mkdir(path.join(dir, 'folder'));
    await expect(readIfExists(path.join(dir, 'folder'))).rejects.toThrow(StorageError);
    await expect(readIfExists(path.join(dir, 'folder'))).rejects.toThrow(/folder/);
  });
});

/** The real calls, but every data write takes nothing after `after` writes (a full disk). */
function fullAfter(after: number): SyncFs {
  let writes = 0;
  return { ...realSyncFs, writeSync: (fd, b, o, l, p) => (++writes > after ? 0 : realSyncFs.writeSync(fd, b, o, l, p)) };
}

describe('writeFileAtomicallySync', () => {
  it('replaces a file whole, and on a full disk leaves the old content and no temporary file', async () => {
    const file = path.join(dir, 'holder.json');
    writeFileAtomicallySync(file, 'old\n', { mode: 0o600 });
    expect(await readFile(file, 'utf8')).toBe('old\n');
    let failure: unknown;
    try {
      writeFileAtomicallySync(file, 'new content\n', { fs: fullAfter(0) });
    } catch (error) {
      failure = error;
    }
    expect(failure).toBeInstanceOf(StorageError);
    expect((failure as StorageError).errno).toBe('ENOSPC');
    expect((failure as StorageError).message).toContain(file);
    expect(await readFile(file, 'utf8')).toBe('old\n');
    expect(await readdir(dir)).toEqual(['holder.json']);
    writeFileAtomicallySync(file, 'new\n', { durable: false });
    expect(await readFile(file, 'utf8')).toBe('new\n');
  });
});

/** A run's first state, as `processCommand` makes it. */
function firstState(runId: string): RunState {
  return aRunState(memoryApp(), { task_description: 'A task' }, runId);
}

describe("a run's first commit", () => {
  it("writes the command beside the checkpoint and flushes it before the journal's first line", async () => {
    const flushed: string[] = [];
    const names = new Map<number, string>();
    const journalFs: SyncFs = {
      ...realSyncFs,
      openSync: (file, flags, mode) => {
        const fd = realSyncFs.openSync(file, flags, mode);
        names.set(fd, path.basename(file).replace(/^\.(.+)\.\d+\.[0-9a-f]+\.tmp$/, '$1'));
        return fd;
      },
      fdatasyncSync: (fd) => {
        flushed.push(names.get(fd) ?? '?');
        realSyncFs.fdatasyncSync(fd);
      },
    };
    const paths = new WorkspacePaths(dir);
    const store = new FsRunStore(paths, { journalFs });
    const state = firstState('run-1');
    await store.recordAhead({
      at: state.created_at,
      after: state,
      files: [{ name: 'command.json', content: '{"task_description":"A task"}' }],
    });
    expect(flushed).toEqual(['command.json', 'journal.jsonl']);
    expect(await store.loadFile('run-1', 'command.json')).toBe('{"task_description":"A task"}');
    expect((await store.load('run-1'))?.status).toBe('running');
    // A later change's files are written (and flushed) as well, before its line.
    await store.recordAhead({ at: state.created_at, after: { ...state, source: 'b.json' }, files: [{ name: 'hitl.json', content: '{}' }] });
    expect(await store.loadFile('run-1', 'hitl.json')).toBe('{}');
    expect(flushed.at(-1)).toBe('journal.jsonl');
  });

  it('on a full disk, fails with the file named and leaves no journal that names the run', async () => {
    const paths = new WorkspacePaths(dir);
    const store = new FsRunStore(paths, { journalFs: fullAfter(0) });
    const state = firstState('run-2');
    await expect(
      store.recordAhead({
        at: state.created_at,
        after: state,
        files: [{ name: 'command.json', content: '{"task_description":"A task"}' }],
      }),
    ).rejects.toThrow(/command\.json/);
    expect(await store.load('run-2')).toBeUndefined();
  });
});
