import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FsClaimStore } from '../../src/adapters/fs/claim-store.js';
import { FsCommandInbox } from '../../src/adapters/fs/command-inbox.js';
import { WatchLoop } from '../../src/app/watch-loop.js';
import { createApp } from '../../src/compose/app.js';
import type { RunLedger } from '../../src/domain/ports.js';
import type { WatchEvent } from '../../src/domain/queue.js';
import { dropCommand, listDir, makeWorkspace, removeWorkspace, task } from '../helpers/watch-workspace.js';

// Issue 9 item 3: a claim that fails every time — and whose failure cannot even be recorded — is not
// taken over and failed on forever: after three times in a row it goes to rejected/ with every reason.
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('a poison claim', () => {
  it('is rejected with every reason after three failed attempts by successive watchers', async () => {
    const ws = await makeWorkspace('maestro-poison-');
    cleanups.push(() => removeWorkspace(ws));
    const app = await createApp({ workspace: ws });
    // The run's ledger cannot be opened at all (say, a file system that refuses it): nothing can be recorded.
    const { ledger } = app.deps;
    const refusing: RunLedger = {
      open: async () => Promise.reject(new Error('EACCES: the audit folder refuses writes')),
      load: (runId) => ledger.load(runId),
      list: () => ledger.list(),
      readFile: (runId, name) => ledger.readFile(runId, name),
    };
    const deps = { ...app.deps, ledger: refusing };
    await dropCommand(ws, 'poison.json', task('Review the plan'));

    const attempt = async (n: number): Promise<WatchEvent[]> => {
      const self = { id: `${process.pid}-${'abcdef'.slice(0, 2)}${n}${n}`, pid: process.pid };
      const events: WatchEvent[] = [];
      const loop = new WatchLoop({
        deps,
        inbox: new FsCommandInbox({ dir: app.paths.commands }),
        claims: new FsClaimStore({ paths: app.paths, self, registry: { isAlive: async (o) => o.id === self.id }, clock: app.deps.clock }),
        onEvent: (e) => events.push(e),
        once: true,
        pid: process.pid,
        workspace: ws,
      });
      await loop.start();
      await loop.stopped;
      return events;
    };
    const finished = (events: WatchEvent[]) => events.find((e) => e.kind === 'finished') as Extract<WatchEvent, { kind: 'finished' }>;

    const first = finished(await attempt(1));
    expect(first.message).toContain('failure 1 of 3');
    expect((await listDir(path.join(ws, '.maestro', 'inflight'))).some((n) => n.endsWith('.json'))).toBe(true);
    expect(finished(await attempt(2)).message).toContain('failure 2 of 3');
    const third = finished(await attempt(3));
    expect(third).toMatchObject({ status: 'error', reason_code: 'RUN_FAILED_REPEATEDLY' });
    expect(await listDir(path.join(ws, '.maestro', 'inflight'))).toEqual([]);
    const report = JSON.parse(await readFile(path.join(ws, '.maestro', 'rejected', 'poison.json.error.json'), 'utf8'));
    expect(report.issues).toHaveLength(3);
    expect(report.issues.every((i: string) => i.includes('EACCES'))).toBe(true);
    // A fourth watcher has nothing to take over.
    expect((await attempt(4)).some((e) => e.kind === 'claimed')).toBe(false);
  });
});
