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
    await dropCommand(ws, 'poison.json', task('Review the plan'));
    const attempt = watcherAttempts(app, { ...app.deps, ledger: refusing });

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

  it('one whose handling hits a bug outside its run (not even a run to record it in) is counted too, and set aside at the third', async () => {
    const ws = await makeWorkspace('maestro-poison-bug-');
    cleanups.push(() => removeWorkspace(ws));
    const app = await createApp({ workspace: ws });
    await dropCommand(ws, 'bug.json', task('Review the plan'));
    // Reading the claimed command throws at once, as a bug does (a stack overflow), not as a refused read.
    const attempt = watcherAttempts(app, app.deps, (claims) =>
      overriding(claims, 'read', () => {
        throw new RangeError('Maximum call stack size exceeded');
      }),
    );
    const first = finished(await attempt(1));
    expect(first).toMatchObject({ status: 'error', reason_code: 'RUN_FAILED_INTERNAL' });
    expect(first.message).toContain('internal error while handling bug.json: Maximum call stack size exceeded');
    expect(first.message).toContain('failure 1 of 3');
    expect(finished(await attempt(2)).message).toContain('failure 2 of 3');
    expect(finished(await attempt(3))).toMatchObject({ status: 'error', reason_code: 'RUN_FAILED_REPEATEDLY' });
    expect(await listDir(path.join(ws, '.maestro', 'inflight'))).toEqual([]);
    expect(await listDir(path.join(ws, '.maestro', 'rejected'))).toEqual(['bug.json', 'bug.json.error.json']);
  });
});

type App = Awaited<ReturnType<typeof createApp>>;
const finished = (events: WatchEvent[]) => events.find((e) => e.kind === 'finished') as Extract<WatchEvent, { kind: 'finished' }>;

/** The claim store with one method replaced (the rest are the store's own, on the store). */
function overriding(claims: FsClaimStore, name: keyof FsClaimStore, replacement: unknown): FsClaimStore {
  return new Proxy(claims, {
    get: (target, key) => {
      if (key === name) return replacement;
      const value = Reflect.get(target, key, target) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/** Watchers one after another on the workspace (`n`: a new watcher identity; each earlier one counts as gone), with `--once`. */
function watcherAttempts(app: App, deps: App['deps'], wrap: (claims: FsClaimStore) => FsClaimStore = (c) => c) {
  return async (n: number): Promise<WatchEvent[]> => {
    const self = { id: `${process.pid}-${'abcdef'.slice(0, 2)}${n}${n}`, pid: process.pid };
    const events: WatchEvent[] = [];
    const claims = new FsClaimStore({
      paths: app.paths,
      self,
      registry: { isAlive: async (o) => o.id === self.id },
      clock: app.deps.clock,
    });
    const loop = new WatchLoop({
      deps,
      inbox: new FsCommandInbox({ dir: app.paths.commands }),
      claims: wrap(claims),
      onEvent: (e) => events.push(e),
      once: true,
      pid: process.pid,
      workspace: app.paths.root,
    });
    await loop.start();
    await loop.stopped;
    return events;
  };
}
