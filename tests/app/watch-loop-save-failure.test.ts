import { afterEach, describe, expect, it, vi } from 'vitest';
import { StorageError } from '../../src/domain/errors.js';
import type { WatchEvent } from '../../src/domain/queue.js';
import { dropCommand, makeWorkspace, readAuditLogs, readRunState, removeWorkspace, task } from '../helpers/watch-workspace.js';

// A run's memory save that fails (a full disk) is reported on that run, ends it so it can be resumed,
// does not stop the watcher, and loses nothing once resumed.

/** The next atomic write of a file whose name ends with `failing` fails as a full disk does. */
const disk = vi.hoisted(() => ({ failing: undefined as string | undefined }));

vi.mock('../../src/adapters/fs/atomic-file.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/adapters/fs/atomic-file.js')>();
  const writeJsonAtomically: typeof real.writeJsonAtomically = async (file, value, options) => {
    if (disk.failing !== undefined && file.endsWith(disk.failing)) {
      disk.failing = undefined;
      throw new StorageError(`could not write ${file}: ENOSPC: no space left on device`, file, { errno: 'ENOSPC' });
    }
    return real.writeJsonAtomically(file, value, options);
  };
  return { ...real, writeJsonAtomically };
});

const { fileWatchLoop } = await import('../helpers/file-watch-loop.js');
const { resumeRun } = await import('../../src/app/process-command.js');
const { createApp } = await import('../../src/compose/app.js');

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  disk.failing = undefined;
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('WatchLoop: a memory save that fails', () => {
  it('ends that run as a storage failure (reported, resumable); the next run completes; after the resume each run is in memory once', async () => {
    const ws = await makeWorkspace('maestro-tail-fail-');
    cleanups.push(() => removeWorkspace(ws));
    const app = await createApp({ workspace: ws });
    const { loop, events } = fileWatchLoop(app);
    cleanups.push(() => loop.stop());
    await dropCommand(ws, '1.json', task('First task ALPHA: review the rollout'));
    await dropCommand(ws, '2.json', task('Second task BRAVO: review the rollback'));

    // The disk is full for the first run's auditor save.
    disk.failing = 'auditor_session.json';
    await loop.start();
    expect(await loop.stopped).toBe('once');
    const [first, second] = events.filter((e) => e.kind === 'claimed').map((e) => e.run_id);

    const finished = new Map(
      events.filter((e): e is Extract<WatchEvent, { kind: 'finished' }> => e.kind === 'finished').map((e) => [e.run_id, e]),
    );
    expect(finished.get(second ?? '')?.status).toBe('completed');
    const failed = finished.get(first ?? '');
    expect(failed?.status).toBe('error');
    expect(failed?.reason_code).toBe('STORAGE_WRITE_FAILED');
    expect(failed?.message).toContain(`maestro run --resume ${first}`);
    const logs = await readAuditLogs(ws);
    const firstEvents = (logs.get(first ?? '') ?? []).map((r) => r.event);
    expect(firstEvents).toContain('RUN_FAILED');
    expect(firstEvents).not.toContain('RUN_FINISHED');
    expect((await readRunState(ws, first ?? '')).status).toBe('error');

    // Resumed once there is room: it completes its ending, and every persona holds each run once.
    const resumed = await resumeRun(first ?? '', app.deps);
    expect(resumed.status).toBe('completed');
    for (const persona of ['auditor', 'strategist', 'coordinator']) {
      const memory = (await app.deps.sessions.load(persona)).state;
      expect([...memory.runs].sort()).toEqual([first, second].sort());
      // Saved twice, a run would hold each of its passages twice (a run's passages are distinct) and two summaries.
      for (const id of [first, second]) {
        const passages = memory.passages.filter((p) => p.run_id === id).map((p) => `${p.from}\u0000${p.text}`);
        expect(passages.length).toBeGreaterThan(0);
        expect(new Set(passages).size).toBe(passages.length);
        expect(memory.tasks.filter((t) => t.run_id === id)).toHaveLength(1);
      }
    }
    const after = (await readAuditLogs(ws)).get(first ?? '') ?? [];
    expect(after.filter((r) => r.event === 'SESSIONS_SAVED')).toHaveLength(1);
    expect(after.filter((r) => r.event === 'RUN_FINISHED')).toHaveLength(1);
  });
});
