import type { FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { HistoryMessage } from '../../../src/domain/session-state.js';
import { FakeClock } from '../../fakes/fake-clock.js';
import { tempWorkspace } from '../../fakes/fixtures.js';

// A load that reads the file while this process's save of an earlier run lands: the save is in the
// file it read (no: it read the file before the rename) or among the saves in flight (no: it landed
// and left them before the load looked). The load must see it one way or the other.

/** The next read of `target` (opened 'r') holds its handle's `stat` until `release` is called. */
const gate = vi.hoisted(() => ({
  target: undefined as string | undefined,
  opened: undefined as (() => void) | undefined,
  held: undefined as Promise<void> | undefined,
}));

vi.mock('node:fs/promises', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs/promises')>();
  const open = async (...args: Parameters<typeof real.open>): Promise<FileHandle> => {
    // The first open of the target called after arming (not the first to complete).
    const gated = gate.target !== undefined && args[0] === gate.target && (args[1] ?? 'r') === 'r';
    if (gated) gate.target = undefined;
    const handle = await real.open(...args);
    if (!gated) return handle;
    const held = gate.held;
    gate.opened?.();
    const stat = handle.stat.bind(handle) as FileHandle['stat'];
    return Object.assign(handle, {
      stat: (async (...a: Parameters<FileHandle['stat']>) => {
        await held;
        return stat(...a);
      }) as FileHandle['stat'],
    });
  };
  return { ...real, default: { ...real, open }, open };
});

const { FsSessionStore } = await import('../../../src/adapters/fs/session-store.js');

let ws: Awaited<ReturnType<typeof tempWorkspace>>;
beforeEach(async () => {
  ws = await tempWorkspace();
});
afterEach(() => ws.cleanup());

const said = (runId: string, text: string): HistoryMessage[] => [
  { role: 'user', content: `briefing for ${runId}`, run_id: runId, ts: 't' },
  { role: 'assistant', content: text, run_id: runId, ts: 't' },
];

describe('persona memory: a load racing a save that lands', () => {
  it('a run started after an earlier run began saving sees it, even when the save lands while the file is being read', async () => {
    const store = new FsSessionStore(path.join(ws.dir, 'session_states'), new FakeClock('2026-03-04T05:06:07.000Z'));
    await store.appendRun('auditor', 'r1', said('r1', 'first'));

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
