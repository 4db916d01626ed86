import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { FsClaimStore } from '../../src/adapters/fs/claim-store.js';
import { FsCommandInbox } from '../../src/adapters/fs/command-inbox.js';
import { withFileLock } from '../../src/adapters/fs/file-lock.js';
import { WatchLoop } from '../../src/app/watch-loop.js';
import type { createApp } from '../../src/compose/app.js';
import type { WatchEvent } from '../../src/domain/queue.js';
import { lockPathFor } from '../../src/domain/runtime-files.js';

type App = Awaited<ReturnType<typeof createApp>>;

/**
 * A watch loop over a workspace's files, in this process, as `maestro watch --once` runs it: commands
 * taken as soon as they are seen, claims held by this process; its events kept in `events`.
 */
export function fileWatchLoop(app: App, options: { concurrency?: number } = {}): { loop: WatchLoop; events: WatchEvent[] } {
  const self = { id: `${process.pid}-${path.basename(app.paths.root)}`, pid: process.pid };
  const events: WatchEvent[] = [];
  const loop = new WatchLoop({
    deps: app.deps,
    inbox: new FsCommandInbox({ dir: app.paths.commands, stabilityMs: 0 }),
    claims: new FsClaimStore({ paths: app.paths, self, registry: { isAlive: async (o) => o.id === self.id }, clock: app.deps.clock }),
    onEvent: (e) => events.push(e),
    once: true,
    pid: process.pid,
    workspace: app.paths.root,
    ...(options.concurrency ? { concurrency: options.concurrency } : {}),
  });
  return { loop, events };
}

/** Holds a persona memory file's lock (as another watcher saving would) until the returned function is called. */
export async function holdMemoryLock(workspace: string, persona: string): Promise<() => Promise<void>> {
  const file = path.join(workspace, 'session_states', `${persona}_session.json`);
  await mkdir(path.dirname(file), { recursive: true });
  let release: () => void = () => undefined;
  let locked: () => void = () => undefined;
  const held = new Promise<void>((r) => (locked = r));
  const done = withFileLock(lockPathFor(file), async () => {
    locked();
    await new Promise<void>((r) => (release = r));
  });
  await held;
  return async () => {
    release();
    await done;
  };
}
