import { mkdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FsClaimStore } from '../../../src/adapters/fs/claim-store.js';
import { FsDecisionInbox } from '../../../src/adapters/fs/decision-inbox.js';
import { listClaims } from '../../../src/adapters/fs/inflight-claims.js';
import type { WatcherIdentity } from '../../../src/adapters/fs/watcher-registry.js';
import { WorkspacePaths } from '../../../src/adapters/fs/workspace-paths.js';
import type { Claim } from '../../../src/domain/queue.js';
import { listDir, makeWorkspace, removeWorkspace } from '../../helpers/watch-workspace.js';

const clock = { now: () => new Date('2026-01-01T00:00:00Z') };
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A workspace and a set of "watchers" (claim stores) sharing it; `alive` decides who is running. */
async function setup(): Promise<{ paths: WorkspacePaths; alive: Set<string>; store: (n: number) => FsClaimStore; ids: WatcherIdentity[] }> {
  const ws = await makeWorkspace('maestro-claims-');
  cleanups.push(() => removeWorkspace(ws));
  const paths = new WorkspacePaths(ws);
  const ids = [1, 2, 3, 4].map((n) => ({ id: `${1000 + n}-${'abc'.repeat(n)}`, pid: 1000 + n }));
  const alive = new Set(ids.map((i) => i.id));
  const registry = { isAlive: async (o: WatcherIdentity) => alive.has(o.id) };
  const store = (n: number): FsClaimStore => new FsClaimStore({ paths, self: ids[n]!, registry, clock });
  return { paths, alive, store, ids };
}

const file = (name: string) => ({ name, mtimeMs: 0 });

describe('FsClaimStore', () => {
  it('lets exactly one of several watchers claim a file, by an atomic rename', async () => {
    const { paths, store } = await setup();
    await writeFile(path.join(paths.commands, 'command.json'), '{"task_description":"x"}');
    const results = await Promise.all([0, 1, 2, 3].map((n) => store(n).claim(file('command.json'), `run-${n}`)));
    const winners = results.filter((r): r is Claim => r !== undefined);
    expect(winners).toHaveLength(1);
    const runId = winners[0]!.runId;
    expect(await listDir(paths.inflight)).toEqual([`${runId}.claim`, `${runId}.json`]);
    expect(await listDir(paths.commands)).toEqual([]);
    expect(await store(0).read(winners[0]!)).toBe('{"task_description":"x"}');
  });

  it("recovers a dead watcher's claim in exactly one of several watchers recovering at once", async () => {
    const { paths, alive, store, ids } = await setup();
    await writeFile(path.join(paths.commands, 'a.json'), '{}');
    const claim = await store(0).claim(file('a.json'), 'run-a');
    expect(claim).toBeDefined();
    alive.delete(ids[0]!.id);

    const results = await Promise.all([1, 2, 3].map((n) => store(n).recoverOrphans()));
    expect(results.map((r) => r.recovered.length).sort()).toEqual([0, 0, 1]);
    expect(results.map((r) => r.ownedByOthers).sort()).toEqual([0, 1, 1]);
    const recovered = results.flatMap((r) => r.recovered);
    expect(recovered).toEqual([
      { runId: 'run-a', source: 'a.json', claimedAt: '2026-01-01T00:00:00.000Z', recovered: true, kind: 'command' },
    ]);
  });

  it("leaves a live watcher's claim alone, and follows the takeover chain when the taker dies too", async () => {
    const { paths, alive, store, ids } = await setup();
    await writeFile(path.join(paths.commands, 'a.json'), '{}');
    await store(0).claim(file('a.json'), 'run-a');
    expect(await store(1).recoverOrphans()).toEqual({ recovered: [], ownedByOthers: 1 });

    alive.delete(ids[0]!.id);
    expect((await store(1).recoverOrphans()).recovered).toHaveLength(1);
    // Watcher 1 now owns it: watcher 2 must not take it while 1 lives...
    expect(await store(2).recoverOrphans()).toEqual({ recovered: [], ownedByOthers: 1 });
    expect((await listClaims(paths.inflight))[0]?.owner).toEqual(ids[1]);
    // ...and takes it over once 1 dies as well.
    alive.delete(ids[1]!.id);
    expect((await store(2).recoverOrphans()).recovered.map((c) => c.runId)).toEqual(['run-a']);
    expect((await listClaims(paths.inflight))[0]?.owner).toEqual(ids[2]);
  });

  it('release deletes the command and every side file', async () => {
    const { paths, alive, store, ids } = await setup();
    await writeFile(path.join(paths.commands, 'a.json'), '{}');
    await store(0).claim(file('a.json'), 'run-a');
    alive.delete(ids[0]!.id);
    const [claim] = (await store(1).recoverOrphans()).recovered;
    await store(1).release(claim!);
    expect(await listDir(paths.inflight)).toEqual([]);
  });

  it('rejects into .maestro/rejected/ without overwriting an earlier file of the same name', async () => {
    const { paths, store } = await setup();
    const rejection = {
      status: 'invalid' as const,
      reason_code: 'SPEC_INVALID_INPUT',
      message: 'bad',
      issues: ['(root): not valid JSON'],
      audit_log: null,
    };
    await writeFile(path.join(paths.commands, 'command.json'), 'first');
    const first = await store(0).claim(file('command.json'), 'run-1');
    await writeFile(path.join(paths.commands, 'command.json'), 'second');
    const second = await store(0).claim(file('command.json'), 'run-2');
    expect(await store(0).reject(first!, rejection)).toBe(path.join(paths.rejected, 'command.json'));
    expect(await store(0).reject(second!, rejection)).toBe(path.join(paths.rejected, 'command.run-2.json'));
    // A name asked for (the engine's, which a worker elsewhere has already said) is the only one taken.
    await writeFile(path.join(paths.commands, 'command.json'), 'third');
    const third = await store(0).claim(file('command.json'), 'run-3');
    expect(await store(0).reject(third!, rejection, { as: 'command.run-3.json' })).toBe(path.join(paths.rejected, 'command.run-3.json'));
    await rm(path.join(paths.rejected, 'command.run-3.json'));
    await rm(path.join(paths.rejected, 'command.run-3.json.error.json'));
    expect(await listDir(paths.rejected)).toEqual([
      'command.json',
      'command.json.error.json',
      'command.run-2.json',
      'command.run-2.json.error.json',
    ]);
    expect(await readFile(path.join(paths.rejected, 'command.json'), 'utf8')).toBe('first');
    expect(JSON.parse(await readFile(path.join(paths.rejected, 'command.run-2.json.error.json'), 'utf8'))).toMatchObject({
      file: 'command.json',
      run_id: 'run-2',
      issues: ['(root): not valid JSON'],
    });
    expect(await listDir(paths.inflight)).toEqual([]);
  });

  it('refuses a command file that is too big, unread', async () => {
    const { paths, store } = await setup();
    await writeFile(path.join(paths.commands, 'huge.json'), Buffer.alloc(1024 * 1024 + 1, 0x20));
    const claim = await store(0).claim(file('huge.json'), 'run-h');
    await expect(store(0).read(claim!)).rejects.toMatchObject({
      name: 'InvalidInputError',
      issues: [expect.stringContaining('at most 1048576 bytes')],
    });
  });

  it('reads a claimed command whole, however long, and refuses a symbolic link claimed in its place as not a regular file', async () => {
    const { paths, store } = await setup();
    const long = JSON.stringify({ task_description: 'é'.repeat(150_000) }); // several reads' worth, multi-byte
    await writeFile(path.join(paths.commands, 'long.json'), long);
    expect(await store(0).read((await store(0).claim(file('long.json'), 'run-l'))!)).toBe(long);

    await writeFile(path.join(paths.root, 'elsewhere.json'), '{"task_description":"x"}');
    await symlink(path.join(paths.root, 'elsewhere.json'), path.join(paths.commands, 'link.json'));
    const claim = await store(0).claim(file('link.json'), 'run-s');
    await expect(store(0).read(claim!)).rejects.toMatchObject({
      name: 'InvalidInputError',
      issues: ['(root): a symbolic link, not a command file: put the file itself in commands/'],
    });
  });

  it('claims into .maestro/inflight/ even when that folder was removed since the last claim', async () => {
    const { paths, store } = await setup();
    await writeFile(path.join(paths.commands, 'a.json'), '{"task_description":"a"}');
    await writeFile(path.join(paths.commands, 'b.json'), '{"task_description":"b"}');
    const a = await store(0).claim(file('a.json'), 'run-a');
    await store(0).release(a!);
    await rm(paths.inflight, { recursive: true });
    const b = await store(0).claim(file('b.json'), 'run-b');
    expect(await store(0).read(b!)).toBe('{"task_description":"b"}');
    expect(await listDir(paths.inflight)).toEqual(['run-b.claim', 'run-b.json']);
  });

  it("sweeps a dead watcher's claim record that never got its command (a crash between the two steps)", async () => {
    const { paths, alive, store, ids } = await setup();
    await writeFile(path.join(paths.commands, 'a.json'), '{}');
    await store(0).claim(file('a.json'), 'run-a');
    await store(0).release({ runId: 'run-a', source: 'a.json', claimedAt: '', recovered: false });
    // Re-create only the record, as a crash right after writing it would leave it.
    await writeFile(
      path.join(paths.inflight, 'run-b.claim'),
      JSON.stringify({ run_id: 'run-b', source: 'b.json', claimed_at: '', owner: ids[0] }),
    );
    await store(1).recoverOrphans();
    expect(await listDir(paths.inflight)).toEqual(['run-b.claim']);
    alive.delete(ids[0]!.id);
    await store(1).recoverOrphans();
    expect(await listDir(paths.inflight)).toEqual([]);
  });

  it('claims a continue decision against a foreground resume: exactly one of them gets it', async () => {
    const { paths, store } = await setup();
    await mkdir(paths.decisions, { recursive: true });
    await writeFile(path.join(paths.decisions, 'run-d.json'), '{"run_id":"run-d","decision":"continue"}');
    const [watcher, foreground] = await Promise.all([
      store(0).claimDecision(file('run-d.json'), 'run-d', 'risky.json'),
      new FsDecisionInbox(paths).claim('run-d'),
    ]);
    expect([watcher !== undefined, foreground].filter(Boolean)).toHaveLength(1);
    expect(await listDir(paths.decisions)).toEqual([]);
    if (watcher) {
      expect(watcher).toMatchObject({ runId: 'run-d', source: 'risky.json', kind: 'decision', recovered: false });
      // A decision that ends badly is spent, not moved to rejected/: the command is kept with its run.
      const rejection = { status: 'error' as const, reason_code: 'RUN_FAILED_INTERNAL', message: 'x', issues: [], audit_log: null };
      expect(await store(0).reject(watcher, rejection)).toBeNull();
      expect(await listDir(paths.rejected)).toEqual([]);
      expect(await listDir(paths.inflight)).toEqual([]);
    }
  });
});
