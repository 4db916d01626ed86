import { afterEach, describe, expect, it } from 'vitest';
import { createApp } from '../../src/compose/app.js';
import type { WatchEvent } from '../../src/domain/queue.js';
import { fileWatchLoop, holdMemoryLock } from '../helpers/file-watch-loop.js';
import { dropCommand, makeWorkspace, removeWorkspace, task, waitFor } from '../helpers/watch-workspace.js';

// Issue 24 items 1 and 5: a run writing its memory frees its slot, but runs whose saves cannot land
// (another watcher holds the memory file) must not pile up without bound: at most 4 × `concurrency`
// runs are in their tail beside the `concurrency` running ones (4 per slot).

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('WatchLoop: runs in their tail are bounded', () => {
  it.each([1, 2])(
    'with --concurrency %i, stuck saves hold at most 4 × that many runs in their tail; the rest wait in commands/',
    async (n) => {
      const ws = await makeWorkspace('maestro-tail-bound-');
      cleanups.push(() => removeWorkspace(ws));
      const app = await createApp({ workspace: ws });
      const { loop, events } = fileWatchLoop(app, { concurrency: n });
      cleanups.push(() => loop.stop());
      const total = 5 * n + 3;
      for (let i = 0; i < total; i++) await dropCommand(ws, `${i}.json`, task(`Task ${i}: review the rollout step ${i}`));

      // Another watcher holds the auditor's memory file: no save lands until it lets go.
      const release = await holdMemoryLock(ws, 'auditor');
      cleanups.push(release);
      await loop.start();

      const produced = () => events.filter((e) => e.kind === 'producing_artifact').length;
      await waitFor('5 × concurrency runs to write their artifact', () => produced() >= 5 * n);
      await new Promise((r) => setTimeout(r, 400));
      expect(events.filter((e) => e.kind === 'claimed')).toHaveLength(5 * n);
      expect(loop.inFlight).toHaveLength(5 * n);

      await release();
      expect(await loop.stopped).toBe('once');
      const finished = events.filter((e): e is Extract<WatchEvent, { kind: 'finished' }> => e.kind === 'finished');
      expect(finished.map((e) => e.status)).toEqual(Array(total).fill('completed'));
      expect((await app.deps.sessions.load('auditor')).state.runs).toHaveLength(total);
    },
  );
});
