import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { withFileLock } from '../../../src/adapters/fs/file-lock.js';
import { FsSessionStore } from '../../../src/adapters/fs/session-store.js';
import { lockPathFor } from '../../../src/domain/runtime-files.js';
import { FakeClock } from '../../fakes/fake-clock.js';
import { tempWorkspace } from '../../fakes/fixtures.js';
import { aRunMemory } from '../../fixtures/domain-builders.js';

// Persona memory is a snapshot of the file at a run's start: a save lands under the file's lock, once.

let ws: Awaited<ReturnType<typeof tempWorkspace>>;
let dir: string;
beforeEach(async () => {
  ws = await tempWorkspace();
  dir = path.join(ws.dir, 'session_states');
});
afterEach(() => ws.cleanup());

const said = (runId: string, text: string) => aRunMemory(runId, `task of ${runId}`, [text]);

/** Holds the persona file's lock (as another process saving would) until `release` is called. */
async function holdLock(store: FsSessionStore, persona: string): Promise<{ release: () => void; done: Promise<void> }> {
  let release: () => void = () => undefined;
  let locked: () => void = () => undefined;
  const held = new Promise<void>((r) => (locked = r));
  const done = withFileLock(lockPathFor(store.fileFor(persona)), async () => {
    locked();
    await new Promise<void>((r) => (release = r));
  });
  await held;
  return { release: () => release(), done };
}

describe('persona memory: saves and the file', () => {
  it('a save waiting for another process to let go of the file lands once it does, once; a load meanwhile shows the file as it is', async () => {
    const store = new FsSessionStore(dir, new FakeClock('2026-03-04T05:06:07.000Z'));
    await store.appendRun('auditor', 'r1', said('r1', 'first'));
    const lock = await holdLock(store, 'auditor');
    const saving = store.appendRun('auditor', 'r2', said('r2', 'second'));
    expect((await store.load('auditor')).state.runs).toEqual(['r1']);
    lock.release();
    await lock.done;
    await saving;
    const landed = (await store.load('auditor')).state;
    expect(landed.runs).toEqual(['r1', 'r2']);
    expect(landed.passages.map((p) => p.text)).toEqual(['first', 'second']);
    expect(landed.tasks.map((t) => t.asked)).toEqual(['task of r1', 'task of r2']);
  });

  it('saves of one persona in one process land in the order they were made, each once', async () => {
    const store = new FsSessionStore(dir, new FakeClock('2026-03-04T05:06:07.000Z'), 2);
    await Promise.all(['r1', 'r2', 'r3'].map((id) => store.appendRun('auditor', id, said(id, `said in ${id}`))));
    const landed = (await store.load('auditor')).state;
    expect({ runs: landed.runs, archived: landed.archived.count }).toEqual({ runs: ['r2', 'r3'], archived: 1 });
    const archive = (await readFile(store.archiveFor('auditor'), 'utf8')).trim().split('\n');
    // r1's passage, then its task's summary (recall finds it there once the state keeps no more of r1).
    expect(archive.map((l) => (JSON.parse(l) as { text: string }).text)).toEqual([
      'said in r1',
      '2026-01-01 asked: task of r1 | decided: proceed',
    ]);
  });

  it('a file changed since this process last read it is read again: replaced by another process, or edited in place', async () => {
    const store = new FsSessionStore(dir, new FakeClock('2026-03-04T05:06:07.000Z'));
    await store.appendRun('auditor', 'r1', said('r1', 'one'));
    expect((await store.load('auditor')).state.runs).toEqual(['r1']);
    const other = new FsSessionStore(dir, new FakeClock('2026-03-04T05:06:07.000Z'));
    await other.appendRun('auditor', 'r2', said('r2', 'two'));
    expect((await store.load('auditor')).state.runs).toEqual(['r1', 'r2']);
    // A person who edits the file by hand (in place, same inode) is heard too.
    const text = await readFile(store.fileFor('auditor'), 'utf8');
    await writeFile(store.fileFor('auditor'), text.replace('"two"', '"two, edited"'));
    expect((await store.load('auditor')).state.passages.at(-1)?.text).toBe('two, edited');
  });

  it('a save that cannot take the lock fails and leaves the file as it was: the run did not end, and its ending saves it again', async () => {
    const store = new FsSessionStore(dir, new FakeClock('2026-03-04T05:06:07.000Z'), 30, undefined, { waitMs: 0 });
    const lock = await holdLock(store, 'auditor');
    await expect(store.appendRun('auditor', 'r1', said('r1', 'lost'))).rejects.toThrow();
    expect((await store.load('auditor')).state.runs).toEqual([]);
    lock.release();
    await lock.done;
  });
});
