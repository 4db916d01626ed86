import { mkdir, open, readFile, rename, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  dropCommand,
  listDir,
  readAuditLogs,
  readRunState,
  task,
  waitFor,
  watch,
  type CliProcess,
  useWatchScope,
} from '../helpers/watch-workspace.js';

// End-to-end: the built CLI as child processes, real chokidar, real temp folders. No assertion
// depends on timing: every wait polls for a condition with a generous timeout.

const { workspace, started } = useWatchScope();

// A burst is every command arriving in the same instant (half renamed in, half written in place), and
// two watchers race for every command whatever their number: the suite's sizes show both; each run is a
// whole council run in a process, so a soak runs them bigger:
// MAESTRO_SOAK_BURST=50 MAESTRO_SOAK_SHARED=30 npx vitest run tests/cli/watch-queue.e2e.test.ts
const BURST = Number(process.env.MAESTRO_SOAK_BURST ?? 16);
/** Commands for two watchers on one folder: half queued before either starts, half after. */
const SHARED = Number(process.env.MAESTRO_SOAK_SHARED ?? 12);

async function stop(p: CliProcess): Promise<void> {
  p.kill('SIGTERM');
  expect(await p.exited).toEqual({ code: 0, signal: null });
}

/** Run ids whose audit log starts with COMMAND_RECEIVED: one per run, as the issue counts them. */
async function runsInAudit(ws: string): Promise<string[]> {
  const logs = await readAuditLogs(ws);
  return [...logs].filter(([, records]) => records[0]?.event === 'COMMAND_RECEIVED').map(([id]) => id);
}

describe('maestro watch (end to end)', () => {
  it(`runs ${BURST} commands dropped at once: ${BURST} artifacts, nothing left in commands/ or inflight/`, async () => {
    const ws = await workspace();
    const watcher = started(watch(ws));
    await watcher.waitForEvent('the watcher to start', (e) => e.kind === 'started');

    await Promise.all(
      Array.from({ length: BURST }, (_, i) => {
        const name = `cmd-${String(i).padStart(2, '0')}.json`;
        const body = task(`Review item ${i} of the backlog`);
        // Half arrive by rename, half are written in place (create, then write).
        return i % 2 === 0 ? dropCommand(ws, name, body) : writeFile(path.join(ws, 'commands', name), JSON.stringify(body));
      }),
    );

    await waitFor(`${BURST} artifacts`, async () => (await listDir(path.join(ws, 'outputs'))).length === BURST, 90_000);
    await waitFor(
      'an empty queue',
      async () =>
        (await listDir(path.join(ws, 'commands'))).length === 0 && (await listDir(path.join(ws, '.maestro', 'inflight'))).length === 0,
    );
    await stop(watcher);

    const finished = watcher.events.filter((e) => e.kind === 'finished');
    expect(finished).toHaveLength(BURST);
    expect(finished.every((e) => e.status === 'completed')).toBe(true);
    expect(new Set(finished.map((e) => e.source)).size).toBe(BURST);
    expect(await runsInAudit(ws)).toHaveLength(BURST);
    expect(await listDir(path.join(ws, '.maestro', 'rejected'))).toEqual([]);
  }, 120_000);

  it(`two watchers on one folder run each of ${SHARED} commands exactly once`, async () => {
    const ws = await workspace();
    // Half are queued before either watcher starts (both start-up scans race for them), half arrive later.
    for (let i = 0; i < SHARED / 2; i += 1) await dropCommand(ws, `early-${i}.json`, task(`Review early draft number ${i}`));
    const a = started(watch(ws));
    const b = started(watch(ws));
    await a.waitForEvent('watcher A to start', (e) => e.kind === 'started');
    await b.waitForEvent('watcher B to start', (e) => e.kind === 'started');
    for (let i = 0; i < SHARED / 2; i += 1) await dropCommand(ws, `late-${i}.json`, task(`Review late draft number ${i}`));

    await waitFor(`${SHARED} artifacts`, async () => (await listDir(path.join(ws, 'outputs'))).length === SHARED, 90_000);
    await waitFor(
      'an empty queue',
      async () =>
        (await listDir(path.join(ws, 'commands'))).length === 0 && (await listDir(path.join(ws, '.maestro', 'inflight'))).length === 0,
    );
    await stop(a);
    await stop(b);

    const runs = await runsInAudit(ws);
    expect(runs).toHaveLength(SHARED);
    const logs = await readAuditLogs(ws);
    const received = [...logs.values()].flat().filter((r) => r.event === 'COMMAND_RECEIVED');
    expect(received).toHaveLength(SHARED);
    const tasks = await Promise.all(runs.map(async (id) => (await readRunState(ws, id)).command.task_description));
    expect(new Set(tasks).size).toBe(SHARED);
    const claimed = [...a.events, ...b.events].filter((e) => e.kind === 'claimed').map((e) => e.run_id);
    expect(claimed).toHaveLength(SHARED);
    expect(new Set(claimed).size).toBe(SHARED);
    // The shared council remembers every run, whichever watcher ran it.
    for (const persona of ['coordinator', 'strategist', 'auditor']) {
      const session = JSON.parse(await readFile(path.join(ws, 'session_states', `${persona}_session.json`), 'utf8')) as { runs: string[] };
      expect([...session.runs].sort()).toEqual([...runs].sort());
    }
  }, 120_000);

  it('waits for a file written slowly in pieces and runs it once, whole', async () => {
    const ws = await workspace();
    const watcher = started(watch(ws));
    await watcher.waitForEvent('the watcher to start', (e) => e.kind === 'started');

    const text = JSON.stringify(task('Review a plan that arrives slowly, in several pieces, and must be read whole'), null, 2);
    const handle = await open(path.join(ws, 'commands', 'slow.json'), 'w');
    const pieces = 6;
    const size = Math.ceil(text.length / pieces);
    for (let i = 0; i < pieces; i += 1) {
      await handle.write(text.slice(i * size, (i + 1) * size));
      await handle.sync();
      // Each pause is well under the 2 s stability window, so the file is waited for, not rejected.
      await new Promise((r) => setTimeout(r, 250));
    }
    await handle.close();

    const done = await watcher.waitForEvent('the slow file to finish', (e) => e.kind === 'finished');
    expect(done).toMatchObject({ source: 'slow.json', status: 'completed' });
    const state = await readRunState(ws, String(done.run_id));
    expect(state.command.task_description).toBe('Review a plan that arrives slowly, in several pieces, and must be read whole');
    await stop(watcher);
    expect(watcher.events.filter((e) => e.kind === 'claimed')).toHaveLength(1);
    expect(await listDir(path.join(ws, '.maestro', 'rejected'))).toEqual([]);
  }, 60_000);

  it('moves invalid JSON and schema errors to rejected/ with the reason, and keeps going', async () => {
    const ws = await workspace();
    const watcher = started(watch(ws));
    await watcher.waitForEvent('the watcher to start', (e) => e.kind === 'started');

    // Written a minute ago, then moved in: it is judged (and rejected) at once. One written just now is
    // given 2 s to be finished first (tests/adapters/fs/command-inbox.test.ts shows that wait).
    const draft = path.join(ws, 'broken.json.draft');
    await writeFile(draft, '{"task_description": "never closed"');
    const old = new Date(Date.now() - 60_000);
    await utimes(draft, old, old);
    await rename(draft, path.join(ws, 'commands', 'broken.json'));
    await dropCommand(ws, 'typo.json', { task_description: 'Review the fine plan', config: { max_rounds: 1, max_round: 3 } });
    await dropCommand(ws, 'empty-task.json', { task_description: '   ' });
    await watcher.waitForEvent(
      'three rejections',
      () => watcher.events.filter((e) => e.kind === 'finished' && e.status === 'invalid').length === 3,
      30_000,
    );
    await dropCommand(ws, 'good.json', task('Review the valid plan after the broken ones'));
    const good = await watcher.waitForEvent('the good command', (e) => e.kind === 'finished' && e.source === 'good.json');
    expect(good.status).toBe('completed');
    expect(watcher.child.exitCode).toBeNull();
    await stop(watcher);
    // Only the command that parses is announced as executing; the others are reported invalid straight away.
    expect(watcher.events.filter((e) => e.kind === 'claimed').map((e) => e.source)).toEqual(['good.json']);

    const rejected = path.join(ws, '.maestro', 'rejected');
    expect(await listDir(rejected)).toEqual([
      'broken.json',
      'broken.json.error.json',
      'empty-task.json',
      'empty-task.json.error.json',
      'typo.json',
      'typo.json.error.json',
    ]);
    // The user's file is kept byte for byte.
    expect(await readFile(path.join(rejected, 'broken.json'), 'utf8')).toBe('{"task_description": "never closed"');
    const reason = async (name: string): Promise<{ issues: string[]; reason_code: string; audit_log: string }> =>
      JSON.parse(await readFile(path.join(rejected, `${name}.error.json`), 'utf8'));
    expect((await reason('broken.json')).issues).toEqual([expect.stringMatching(/^\(root\): not valid JSON/)]);
    expect((await reason('typo.json')).issues).toEqual([
      expect.stringMatching(/^config: unknown key "max_round" \(not part of the schema; did you mean "max_rounds"\?/),
    ]);
    expect((await reason('empty-task.json')).issues).toEqual(['task_description: must not be empty']);

    const logs = await readAuditLogs(ws);
    const invalid = [...logs.values()].filter((records) => records.some((r) => r.event === 'COMMAND_INVALID'));
    expect(invalid).toHaveLength(3);
    expect(await listDir(path.join(ws, 'commands'))).toEqual([]);
    expect(await listDir(path.join(ws, '.maestro', 'inflight'))).toEqual([]);
  }, 60_000);

  it('ignores dotfiles, editor temp files and subfolders, and takes a second command.json as a new command', async () => {
    const ws = await workspace();
    const commands = path.join(ws, 'commands');
    for (const name of ['.hidden.json', 'notes.json~', '.notes.json.swp', '4913', 'draft.json.tmp', '.#lock.json']) {
      await writeFile(path.join(commands, name), JSON.stringify(task('must not run')));
    }
    await mkdir(path.join(commands, 'sub'));
    await writeFile(path.join(commands, 'sub', 'nested.json'), JSON.stringify(task('must not run either')));
    const watcher = started(watch(ws));
    await watcher.waitForEvent('the watcher to start', (e) => e.kind === 'started');

    await dropCommand(ws, 'command.json', task('Review the first legacy plan'));
    const first = await watcher.waitForEvent('the first command.json', (e) => e.kind === 'finished');
    await dropCommand(ws, 'command.json', task('Review the second legacy plan'));
    const second = await watcher.waitForEvent('the second command.json', (e) => e.kind === 'finished' && e.run_id !== first.run_id);
    expect([first.status, second.status]).toEqual(['completed', 'completed']);
    expect((await readRunState(ws, String(second.run_id))).command.task_description).toBe('Review the second legacy plan');
    await stop(watcher);

    expect(watcher.events.filter((e) => e.kind === 'claimed')).toHaveLength(2);
    expect(await listDir(commands)).toEqual([
      '.#lock.json',
      '.hidden.json',
      '.notes.json.swp',
      '4913',
      'draft.json.tmp',
      'notes.json~',
      'sub',
    ]);
  }, 60_000);
});
