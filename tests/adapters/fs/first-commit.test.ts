import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FsRunStore } from '../../../src/adapters/fs/run-store.js';
import { readIfExists } from '../../../src/adapters/fs/read.js';
import { WorkspacePaths } from '../../../src/adapters/fs/workspace-paths.js';
import { StorageError } from '../../../src/domain/errors.js';
import type { RunState } from '../../../src/domain/run-state.js';
import { aRunState, memoryApp } from '../../fakes/memory-app.js';
import { faultyFs } from '../../helpers/faulty-fs.js';

// A run's first commit: its command beside the checkpoint, durable before the journal's first line
// names the run; and the small reads on a run's way.

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
function fullAfter(after: number) {
  let writes = 0;
  return faultyFs({ write: () => (++writes > after ? 0 : undefined) });
}

/** A run's first state, as `processCommand` makes it. */
function firstState(runId: string): RunState {
  return aRunState(memoryApp(), { task_description: 'A task' }, runId);
}

describe("a run's first commit", () => {
  it("writes the command beside the checkpoint and flushes it before the journal's first line", async () => {
    const flushed: string[] = [];
    const fs = faultyFs({ flush: (file) => void flushed.push(path.basename(file).replace(/^\.(.+)\.\d+\.[0-9a-f]+\.tmp$/, '$1')) });
    const paths = new WorkspacePaths(dir);
    const store = new FsRunStore(paths, { fs });
    const state = firstState('run-1');
    await store.recordAhead({
      at: state.created_at,
      after: state,
      files: [{ name: 'command.json', content: '{"task_description":"A task"}' }],
    });
    expect(flushed).toEqual(['command.json', 'run-1', 'journal.jsonl', 'run-1']);
    expect(await readIfExists(path.join(paths.runDir('run-1'), 'command.json'))).toBe('{"task_description":"A task"}');
    expect((await store.load('run-1'))?.status).toBe('running');
    // A later change's files are written (and flushed) as well, before its line.
    await store.recordAhead({ at: state.created_at, after: { ...state, source: 'b.json' }, files: [{ name: 'hitl.json', content: '{}' }] });
    expect(await readIfExists(path.join(paths.runDir('run-1'), 'hitl.json'))).toBe('{}');
    expect(flushed.at(-1)).toBe('journal.jsonl');
  });

  it('on a full disk, fails with the file named and leaves no journal that names the run', async () => {
    const paths = new WorkspacePaths(dir);
    const store = new FsRunStore(paths, { fs: fullAfter(0) });
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
