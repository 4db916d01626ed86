import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FsRunHolds } from '../../../src/adapters/fs/run-holds.js';
import { FsRunLiveness, showRun } from '../../../src/adapters/fs/run-liveness.js';
import { FsWatcherRegistry } from '../../../src/adapters/fs/watcher-registry.js';
import { isRecordedProcessAlive, readProcessStart } from '../../../src/adapters/system/process-identity.js';
import { WorkspacePaths } from '../../../src/adapters/fs/workspace-paths.js';
import { InvalidInputError, RunHeldError } from '../../../src/domain/errors.js';

// Issue 22 point 8: a run is `running` only while a live process holds it; a killed process's run is `interrupted`.

let live: ChildProcess;
let dead: number;
let dir: string;
let paths: WorkspacePaths;

/** A pid that is certainly not running: a child that has exited (and been reaped). */
async function exitedPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '']);
  await new Promise((r) => child.on('exit', r));
  return child.pid!;
}

beforeAll(async () => {
  live = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 120000)'], { stdio: 'ignore' });
  await new Promise((r) => live.on('spawn', r));
  dead = await exitedPid();
});
afterAll(() => {
  live.kill('SIGKILL');
});
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'maestro-liveness-'));
  paths = new WorkspacePaths(dir);
});
afterEach(() => rm(dir, { recursive: true, force: true }));

/** The one record in a run's holder folder. */
async function holderFile(runId: string): Promise<string> {
  const folder = path.join(dir, '.maestro', 'holders', runId);
  const names = await readdir(folder);
  expect(names).toHaveLength(1);
  return path.join(folder, names[0]!);
}
const RUN = '20261126T060000Z-abc123';
const OTHER = '20261126T060000Z-def456';

/** The status a reader shows for a checkpoint that says `running`. */
const shown = async (runId = RUN) => (await showRun({ run_id: runId, status: 'running' }, new FsRunLiveness(paths))).status;

describe('the process start time guards against a reused pid', () => {
  it('reads a start token for a live process (Linux), the same each time, different for another process', () => {
    if (process.platform !== 'linux') return;
    const mine = readProcessStart(process.pid);
    expect(mine).toMatch(/:[0-9]+$/);
    expect(readProcessStart(process.pid)).toBe(mine);
    expect(readProcessStart(live.pid!)).not.toBe(mine);
    expect(readProcessStart(dead)).toBeUndefined();
  });

  it.each([
    ['the pid is gone', { pid: 1, process_start: 'b:1' }, false, 'b:1', false],
    ['the pid answers and started when recorded', { pid: 1, process_start: 'b:1' }, true, 'b:1', true],
    ['the pid answers but started later: handed to another process', { pid: 1, process_start: 'b:1' }, true, 'b:9', false],
    ['the pid answers and its start cannot be read now: unsure counts as alive', { pid: 1, process_start: 'b:1' }, true, undefined, true],
    ['the pid answers and no start was recorded (no /proc): the pid alone', { pid: 1 }, true, 'b:9', true],
  ])('%s', (_what, recorded, answers, startNow, alive) => {
    expect(
      isRecordedProcessAlive(
        recorded,
        () => answers,
        () => startNow,
      ),
    ).toBe(alive);
  });
});

describe('FsRunHolds: who holds a run now', () => {
  const liveHolds = () => new FsRunHolds(paths, { pid: live.pid!, readStart: () => readProcessStart(live.pid!) });

  it('a run held by a live process shows running; once that process is gone, interrupted', async () => {
    const other = await liveHolds().hold(RUN);
    expect(await shown()).toBe('running');
    expect(await new FsRunHolds(paths).holderOf(RUN)).toMatchObject({ pid: live.pid, alive: true });

    const file = await holderFile(RUN);
    const record = JSON.parse(await readFile(file, 'utf8'));
    await writeFile(file, JSON.stringify({ ...record, pid: dead, process_start: undefined }));
    expect(await shown()).toBe('interrupted');
    await other.release();
  });

  it('a holder record naming a live pid that started at another time (pid reuse) shows interrupted', async () => {
    if (process.platform !== 'linux') return;
    await new FsRunHolds(paths, { pid: live.pid!, readStart: () => readProcessStart(process.pid) }).hold(RUN);
    expect(await shown()).toBe('interrupted');
  });

  it('this process knows which runs it holds: its own pid in a record it did not write is stale', async () => {
    const hold = await new FsRunHolds(paths).hold(RUN);
    expect(await shown()).toBe('running');
    const file = await holderFile(RUN);
    const record = await readFile(file, 'utf8');
    await hold.release();
    expect(await readdir(path.join(dir, '.maestro', 'holders'))).toEqual([]);
    expect(await shown()).toBe('interrupted');
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, record); // left behind, as by a process with this pid that was killed
    expect(await shown()).toBe('interrupted');
  });

  it('refuses to hold a run a live process holds (a second hold in this process too), and takes over one whose holder is gone', async () => {
    await liveHolds().hold(RUN);
    const refused = await new FsRunHolds(paths).hold(RUN).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(RunHeldError);
    expect((refused as RunHeldError).message).toContain(`pid ${live.pid}`);
    const mine = await new FsRunHolds(paths).hold(OTHER);
    await expect(new FsRunHolds(paths).hold(OTHER)).rejects.toBeInstanceOf(RunHeldError);
    await mine.release();

    await new FsRunHolds(paths, { pid: dead }).hold(OTHER);
    const taken = await new FsRunHolds(paths).hold(OTHER);
    expect(JSON.parse(await readFile(await holderFile(OTHER), 'utf8')).pid).toBe(process.pid);
    await taken.release();
  });

  it('a process that would run a run another one runs is refused at once; a decision waits for the run to let go', async () => {
    const running = await liveHolds().hold(RUN, { span: 'run' });
    // The span is in the record's name: its content is what a maestro of the version before reads (a strict record).
    const file = await holderFile(RUN);
    expect(path.basename(file)).toMatch(/\.run\.json$/);
    expect(Object.keys(JSON.parse(await readFile(file, 'utf8'))).sort()).toEqual(['host', 'pid', 'process_start', 'run_id', 'since']);
    // Within the test's few seconds: without the span, the resume would wait its whole minute.
    const resume = await new FsRunHolds(paths).hold(RUN, { waitMs: 60_000, span: 'run' }).catch((e: unknown) => e);
    expect(resume).toBeInstanceOf(RunHeldError);
    expect((resume as RunHeldError).message).toContain(`pid ${live.pid}`);
    // A decision (a moment's hold) waits: the run may be about to pause and let go.
    const decision = new FsRunHolds(paths).hold(RUN, { waitMs: 60_000 });
    await running.release();
    await (await decision).release();
    // A run held for a moment (a decision) is waited for by a resume too.
    const deciding = await liveHolds().hold(OTHER);
    const waiting = new FsRunHolds(paths).hold(OTHER, { waitMs: 60_000, span: 'run' });
    await deciding.release();
    await (await waiting).release();
  });

  it("clears the staged folders of processes killed while taking a hold, and leaves a live one's", async () => {
    const holders = path.join(dir, '.maestro', 'holders');
    const staged = async (pid: number, id: string, record?: object) => {
      const name = `${pid}-${id}`;
      await mkdir(path.join(holders, `.new-${name}`), { recursive: true });
      if (record) await writeFile(path.join(holders, `.new-${name}`, `${name}.json`), JSON.stringify(record));
      return `.new-${name}`;
    };
    const since = new Date().toISOString();
    const host = os.hostname();
    await staged(dead, 'aaaaaaaa', { run_id: RUN, pid: dead, host, since }); // killed after writing its record
    await staged(await exitedPid(), 'bbbbbbbb'); // killed before writing it
    const living = await staged(live.pid!, 'cccccccc', { run_id: RUN, pid: live.pid, host, since });
    const elsewhere = await staged(dead, 'dddddddd', { run_id: OTHER, pid: dead, host: 'another-machine', since });
    const hold = await new FsRunHolds(paths).hold(RUN);
    expect((await readdir(holders)).sort()).toEqual([RUN, living, elsewhere].sort());
    await hold.release();
  });

  it('a run an earlier maestro holds with its holder file (holders/<run_id>.json) is not taken while that process lives', async () => {
    // The record as a watcher of the version before run holds were folders writes it, beside this one.
    const legacy = path.join(dir, '.maestro', 'holders', `${RUN}.json`);
    const record = {
      run_id: RUN,
      pid: live.pid,
      process_start: readProcessStart(live.pid!),
      host: os.hostname(),
      since: '2026-11-29T10:00:00.000Z',
    };
    await mkdir(path.dirname(legacy), { recursive: true });
    await writeFile(legacy, JSON.stringify(record));
    expect(await shown()).toBe('running');
    const refused = await new FsRunHolds(paths).hold(RUN).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(RunHeldError);
    expect((refused as RunHeldError).message).toContain(`pid ${live.pid}`);

    // That process gone: its file names no one, and the run is taken.
    await writeFile(legacy, JSON.stringify({ ...record, pid: dead, process_start: undefined }));
    expect(await shown()).toBe('interrupted');
    const taken = await new FsRunHolds(paths).hold(RUN);
    expect(await shown()).toBe('running');
    await taken.release();
  });

  it('of many processes taking one run at once, exactly one holds it; the others are told who does', async () => {
    // Processes told apart by pid: this one and live ones (each a real process that answers).
    const others = await Promise.all(
      [1, 2, 3].map(async () => {
        const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
        await new Promise((r) => child.on('spawn', r));
        return child;
      }),
    );
    try {
      for (let round = 0; round < 20; round++) {
        const runId = `${RUN}-${round}`;
        const contenders = [new FsRunHolds(paths), ...[live, ...others].map((c) => new FsRunHolds(paths, { pid: c.pid! }))];
        // A dead holder left behind in half the rounds: every contender wants to take it over at once.
        if (round % 2 === 1) await new FsRunHolds(paths, { pid: dead }).hold(runId);
        const results = await Promise.allSettled(contenders.map((c) => c.hold(runId)));
        const won = results.filter((r) => r.status === 'fulfilled');
        expect(won, `round ${round}`).toHaveLength(1);
        for (const r of results) if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(RunHeldError);
        expect(await readdir(path.join(dir, '.maestro', 'holders', runId))).toHaveLength(1);
        await (won[0] as PromiseFulfilledResult<{ release(): Promise<void> }>).value.release();
      }
    } finally {
      for (const c of others) c.kill('SIGKILL');
    }
  });

  it('a hold asked to wait is taken once the holder lets go', async () => {
    const first = await new FsRunHolds(paths).hold(RUN);
    const waiting = new FsRunHolds(paths).hold(RUN, { waitMs: 60_000 });
    await first.release();
    const second = await waiting;
    expect(await new FsRunHolds(paths).holderOf(RUN)).toMatchObject({ pid: process.pid, alive: true });
    await second.release();
    expect(await readdir(path.join(dir, '.maestro', 'holders'))).toEqual([]);
  });

  it('letting go removes only its own record, not one a later process wrote', async () => {
    const mine = await new FsRunHolds(paths, { pid: dead }).hold(RUN);
    const later = await new FsRunHolds(paths).hold(RUN);
    await mine.release();
    expect(JSON.parse(await readFile(await holderFile(RUN), 'utf8')).pid).toBe(process.pid);
    expect(await shown()).toBe('running');
    await later.release();
  });

  it('cannot check a process on another machine sharing the folder: it counts as running, and is not taken over', async () => {
    await new FsRunHolds(paths, { pid: dead, host: 'elsewhere' }).hold(RUN);
    expect(await shown()).toBe('running');
    await expect(new FsRunHolds(paths).hold(RUN)).rejects.toBeInstanceOf(RunHeldError);
  });

  it('refuses a name that is not a run id, and reads no file for one', async () => {
    await expect(new FsRunHolds(paths).hold('../escape')).rejects.toBeInstanceOf(InvalidInputError);
    expect(await new FsRunHolds(paths).holderOf('../escape')).toBeUndefined();
    expect(await shown('../escape')).toBe('interrupted');
  });

  it('an edited holder record names no process, and is replaced by the next hold', async () => {
    const edited = path.join(dir, '.maestro', 'holders', RUN, 'edited.json');
    await mkdir(path.dirname(edited), { recursive: true });
    await writeFile(edited, '{"pid": "not a pid"');
    expect(await new FsRunHolds(paths).holderOf(RUN)).toBeUndefined();
    expect(await shown()).toBe('interrupted');
    const hold = await new FsRunHolds(paths).hold(RUN);
    expect(await readdir(path.dirname(edited))).toHaveLength(1);
    await hold.release();
  });
});

describe('FsRunLiveness: a watcher that owns the claim counts as holding the run', () => {
  const watchers = () => path.join(dir, '.maestro', 'watchers');

  async function claimedBy(owner: { id: string; pid: number }, processStart?: string): Promise<void> {
    await mkdir(paths.inflight, { recursive: true });
    await writeFile(path.join(paths.inflight, `${RUN}.json`), '{}');
    await writeFile(
      path.join(paths.inflight, `${RUN}.claim`),
      JSON.stringify({ run_id: RUN, source: 'a.json', claimed_at: '2026-11-26T06:00:00.000Z', owner }),
    );
    await new FsWatcherRegistry(watchers()).register({
      ...owner,
      started_at: '2026-11-26T06:00:00.000Z',
      once: false,
      version: '0.1.0',
      ...(processStart ? { process_start: processStart } : {}),
    });
  }

  it('a live watcher owns the claim: running; the same watcher gone: interrupted', async () => {
    await claimedBy({ id: `${live.pid}-beef`, pid: live.pid! });
    expect(await shown()).toBe('running');
    await rm(watchers(), { recursive: true });
    await claimedBy({ id: `${dead}-beef`, pid: dead });
    expect(await shown()).toBe('interrupted');
  });

  it('a watcher pid file whose pid now belongs to a process that started later: interrupted', async () => {
    if (process.platform !== 'linux') return;
    await claimedBy({ id: `${live.pid}-beef`, pid: live.pid! }, readProcessStart(process.pid));
    expect(await shown()).toBe('interrupted');
    expect((await new FsWatcherRegistry(watchers()).list())[0]).toMatchObject({ pid: live.pid, alive: false });
  });

  it("a person's continue waiting for a live watcher: running; with no watcher to take it: continued, not interrupted", async () => {
    await mkdir(paths.decisions, { recursive: true });
    await writeFile(path.join(paths.decisions, `${RUN}.json`), '{}');
    expect(await shown()).toBe('continued');
    await new FsWatcherRegistry(watchers()).register({
      id: `${live.pid}-beef`,
      pid: live.pid!,
      started_at: '2026-11-26T06:00:00.000Z',
      once: false,
      version: '0.1.0',
    });
    expect(await shown()).toBe('running');
  });

  it('only a checkpoint that says running is looked at; the others are what they say', async () => {
    for (const status of ['paused', 'completed', 'stopped', 'guardrail_stopped', 'invalid', 'error']) {
      expect((await showRun({ run_id: RUN, status }, new FsRunLiveness(paths))).status).toBe(status);
    }
    expect(await showRun({ run_id: RUN, status: 'running' }, new FsRunLiveness(paths))).toEqual({
      status: 'interrupted',
      next_step: `maestro run --resume ${RUN}`,
    });
    expect(await showRun({ run_id: RUN, status: 'paused' }, new FsRunLiveness(paths))).toEqual({
      status: 'paused',
      next_step: `maestro hitl decide ${RUN} continue|stop`,
    });
  });
});
