import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FsClaimStore } from '../../src/adapters/fs/claim-store.js';
import { FsCommandInbox } from '../../src/adapters/fs/command-inbox.js';
import { withFileLock } from '../../src/adapters/fs/file-lock.js';
import { WatchLoop } from '../../src/app/watch-loop.js';
import { createApp } from '../../src/compose/app.js';
import type { WatchEvent } from '../../src/domain/queue.js';
import { lockPathFor } from '../../src/domain/runtime-files.js';
import { dropCommand, makeWorkspace, removeWorkspace, task, waitFor } from '../helpers/watch-workspace.js';

// Issue 24 items 1 and 5: a run writing its memory frees its slot, but runs whose saves cannot land
// (another watcher holds the memory file) must not pile up without bound: at most `concurrency` runs
// are in their tail beside the `concurrency` running ones.

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('WatchLoop: runs in their tail are bounded', () => {
  it.each([1, 2])('with --concurrency %i, stuck saves hold at most that many runs in their tail; the rest wait in commands/', async (n) => {
    const ws = await makeWorkspace('maestro-tail-bound-');
    cleanups.push(() => removeWorkspace(ws));
    const app = await createApp({ workspace: ws });
    const self = { id: `${process.pid}-tail-bound`, pid: process.pid };
    const events: WatchEvent[] = [];
    const loop = new WatchLoop({
      deps: app.deps,
      inbox: new FsCommandInbox({ dir: app.paths.commands, stabilityMs: 0 }),
      claims: new FsClaimStore({ paths: app.paths, self, registry: { isAlive: async (o) => o.id === self.id }, clock: app.deps.clock }),
      onEvent: (e) => events.push(e),
      once: true,
      pid: process.pid,
      workspace: ws,
      concurrency: n,
    });
    cleanups.push(() => loop.stop());
    const total = 2 * n + 3;
    for (let i = 0; i < total; i++) await dropCommand(ws, `${i}.json`, task(`Task ${i}: review the rollout step ${i}`));

    // Another watcher holds the auditor's memory file: no save lands until it lets go.
    const file = path.join(ws, 'session_states', 'auditor_session.json');
    await mkdir(path.dirname(file), { recursive: true });
    let release: () => void = () => undefined;
    let locked: () => void = () => undefined;
    const held = new Promise<void>((r) => (locked = r));
    const lock = withFileLock(lockPathFor(file), async () => {
      locked();
      await new Promise<void>((r) => (release = r));
    });
    await held;
    cleanups.push(async () => {
      release();
      await lock;
    });
    await loop.start();

    const produced = () => events.filter((e) => e.kind === 'producing_artifact').length;
    await waitFor('2 × concurrency runs to write their artifact', () => produced() >= 2 * n);
    await new Promise((r) => setTimeout(r, 400));
    expect(events.filter((e) => e.kind === 'claimed')).toHaveLength(2 * n);
    expect(loop.inFlight).toHaveLength(2 * n);

    release();
    await lock;
    expect(await loop.stopped).toBe('once');
    const finished = events.filter((e): e is Extract<WatchEvent, { kind: 'finished' }> => e.kind === 'finished');
    expect(finished.map((e) => e.status)).toEqual(Array(total).fill('completed'));
    expect((await app.deps.sessions.load('auditor')).state.runs).toHaveLength(total);
  });
});
