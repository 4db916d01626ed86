import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { HistoryMessage } from '../../../src/domain/session-state.js';
import { FakeClock } from '../../fakes/fake-clock.js';
import { tempWorkspace } from '../../fakes/fixtures.js';

// A load that reads the file while this process's save of an earlier run lands: the save is in the
// file it read (no: it read the file before the rename) or among the saves in flight (no: it landed
// and left them before the load looked). The load must see it one way or the other.

/**
 * The next read of `target` off the event loop (a memory file too long to read at once) is held until
 * `release` is called: the file was opened (and its identity taken) before the save's rename.
 */
const gate = vi.hoisted(() => ({
  target: undefined as string | undefined,
  fds: new Set<number>(),
  opened: undefined as (() => void) | undefined,
  held: undefined as Promise<void> | undefined,
}));

vi.mock('node:fs', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs')>();
  const openSync = ((...args: Parameters<typeof real.openSync>) => {
    const fd = real.openSync(...args);
    if (gate.target !== undefined && args[0] === gate.target && (args[1] ?? 'r') === 'r') {
      gate.target = undefined;
      gate.fds.add(fd);
    }
    return fd;
  }) as typeof real.openSync;
  const read = ((fd: number, ...rest: unknown[]) => {
    const call = () => (real.read as (...a: unknown[]) => void)(fd, ...rest);
    if (!gate.fds.has(fd)) return call();
    gate.fds.delete(fd);
    const held = gate.held;
    gate.opened?.();
    void held?.then(call);
  }) as typeof real.read;
  return { ...real, default: { ...real, openSync, read }, openSync, read };
});
const { FsSessionStore } = await import('../../../src/adapters/fs/session-store.js');

let ws: Awaited<ReturnType<typeof tempWorkspace>>;
beforeEach(async () => {
  ws = await tempWorkspace();
});
afterEach(() => ws.cleanup());

// A long briefing: the memory file is past what is read at once, so its read goes off the event loop.
const said = (runId: string, text: string): HistoryMessage[] => [
  { role: 'user', content: `briefing for ${runId} ${'x'.repeat(300_000)}`, run_id: runId, ts: 't' },
  { role: 'assistant', content: text, run_id: runId, ts: 't' },
];

describe('persona memory: a load racing a save that lands', () => {
  it('a run started after an earlier run began saving sees it, even when the save lands while the file is being read', async () => {
    const dir = path.join(ws.dir, 'session_states');
    const store = new FsSessionStore(dir, new FakeClock('2026-03-04T05:06:07.000Z'));
    // r1 saved by another watcher: this process has not read the file yet, so its load reads it.
    await new FsSessionStore(dir, new FakeClock('2026-03-04T05:06:07.000Z')).appendRun('auditor', 'r1', said('r1', 'first'));

    // r2's save is begun (the run's slot is free from here); then the next run loads, and its read of
    // the file (opened before r2's rename) is held until r2's save has landed and left the saves in flight.
    const saving = store.appendRun('auditor', 'r2', said('r2', 'second'));
    let release: () => void = () => undefined;
    gate.held = new Promise<void>((r) => (release = r));
    const opened = new Promise<void>((r) => (gate.opened = r));
    gate.target = store.fileFor('auditor');
    const loading = store.load('auditor');
    await opened;
    await saving;
    release();

    expect((await loading).state.runs).toEqual(['r1', 'r2']);
  });
});
