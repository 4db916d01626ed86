import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { withFileLock } from '../../../src/adapters/fs/file-lock.js';
import { FsSessionStore } from '../../../src/adapters/fs/session-store.js';
import { lockPathFor } from '../../../src/domain/runtime-files.js';
import type { HistoryMessage } from '../../../src/domain/session-state.js';
import { FakeClock } from '../../fakes/fake-clock.js';
import { tempWorkspace } from '../../fakes/fixtures.js';

// Issue 24 item 5: a run's memory save need not hold up the next run, which must still see it.

let ws: Awaited<ReturnType<typeof tempWorkspace>>;
let dir: string;
beforeEach(async () => {
  ws = await tempWorkspace();
  dir = path.join(ws.dir, 'session_states');
});
afterEach(() => ws.cleanup());

const said = (runId: string, text: string): HistoryMessage[] => [
  { role: 'user', content: `briefing for ${runId}`, run_id: runId, ts: 't' },
  { role: 'assistant', content: text, run_id: runId, ts: 't' },
];

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

describe('persona memory: saves still being written', () => {
  it('a run loaded while an earlier run is being saved sees it; the file gets it once, when the save lands', async () => {
    const store = new FsSessionStore(dir, new FakeClock('2026-03-04T05:06:07.000Z'));
    await store.appendRun('auditor', 'r1', said('r1', 'first'));
    const lock = await holdLock(store, 'auditor');
    const saving = store.appendRun('auditor', 'r2', said('r2', 'second'));

    // The save waits for the lock: the file does not have r2 yet, and this process's next snapshot does.
    const file = JSON.parse(await readFile(store.fileFor('auditor'), 'utf8')) as { runs: string[] };
    expect(file.runs).toEqual(['r1']);
    const snapshot = (await store.load('auditor')).state;
    expect(snapshot.runs).toEqual(['r1', 'r2']);
    expect(snapshot.messages.map((m) => m.content)).toEqual(['briefing for r1', 'first', 'briefing for r2', 'second']);

    // Another process's store sees it only when it lands.
    const other = new FsSessionStore(dir, new FakeClock('2026-03-04T05:06:07.000Z'));
    expect((await other.load('auditor')).state.runs).toEqual(['r1']);

    lock.release();
    await lock.done;
    await saving;
    expect((await other.load('auditor')).state.runs).toEqual(['r1', 'r2']);
    const landed = (await store.load('auditor')).state;
    expect(landed.runs).toEqual(['r1', 'r2']);
    expect(landed.messages).toHaveLength(4);
  });

  it('a snapshot taken while saves are in flight is compacted as the saves will compact the file', async () => {
    const store = new FsSessionStore(dir, new FakeClock('2026-03-04T05:06:07.000Z'), 2);
    await store.appendRun('auditor', 'r1', said('r1', 'one'));
    await store.appendRun('auditor', 'r2', said('r2', 'two'));
    const lock = await holdLock(store, 'auditor');
    const saving = store.appendRun('auditor', 'r3', said('r3', 'three'));
    const snapshot = (await store.load('auditor')).state;
    expect(snapshot.runs).toEqual(['r2', 'r3']);
    expect(snapshot.archived.count).toBe(1);
    lock.release();
    await lock.done;
    await saving;
    const landed = (await store.load('auditor')).state;
    expect({ runs: landed.runs, archived: landed.archived.count }).toEqual({ runs: snapshot.runs, archived: 1 });
    // The run that left the file is in the archive, once.
    const archive = (await readFile(store.archiveFor('auditor'), 'utf8')).trim().split('\n');
    expect(archive.map((l) => (JSON.parse(l) as HistoryMessage).content)).toEqual(['briefing for r1', 'one']);
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
    expect((await store.load('auditor')).state.messages.at(-1)?.content).toBe('two, edited');
  });

  it('a save that fails is no longer shown: the run did not end, and its ending saves it again', async () => {
    const store = new FsSessionStore(dir, new FakeClock('2026-03-04T05:06:07.000Z'), 30, undefined, { waitMs: 0 });
    const lock = await holdLock(store, 'auditor');
    await expect(store.appendRun('auditor', 'r1', said('r1', 'lost'))).rejects.toThrow();
    expect((await store.load('auditor')).state.runs).toEqual([]);
    lock.release();
    await lock.done;
  });
});
