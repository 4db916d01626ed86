import { writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunListing } from '../../src/adapters/fs/run-catalog.js';
import type { WorkspaceStatus } from '../../src/adapters/fs/workspace-status.js';
import { runCli } from '../fakes/cli.js';
import {
  CliProcess,
  dropCommand,
  listDir,
  readAuditLogs,
  readRunState,
  useWatchScope,
  waitFor,
  watch,
} from '../helpers/watch-workspace.js';

// Issue 22 point 8: a `maestro run` (or a watcher) killed with -9 leaves its checkpoint saying
// `running`. Readers show such a run as `interrupted`, with the command that resumes it, as soon as
// no live process holds it; while a process runs it, it is `running`.

// 0.6 s per model call: the 11 calls left after the two waited for (6.6 s) outlast every check made
// while the process lives (in this process, well under a second each even on a loaded machine).
const SLOW = { MAESTRO_OFFLINE_DELAY_MS: '600' };
const LONG_TASK = { task_description: 'Plan the migration of the billing service, step by step', config: { max_rounds: 3 } };
const { workspace, started } = useWatchScope();

const maestro = (ws: string, ...args: string[]) => runCli([...args, '--workspace', ws]);
const runs = async (ws: string, ...args: string[]) => JSON.parse((await maestro(ws, 'runs', '--json', ...args)).stdout) as RunListing[];
const status = async (ws: string) => JSON.parse((await maestro(ws, 'status', '--json')).stdout) as WorkspaceStatus;

/** A slow `maestro run` of the long task, waited on until two model calls are checkpointed. */
async function slowRun(ws: string): Promise<{ child: CliProcess; runId: string }> {
  // Outside commands/: `run` refuses the watcher's folder.
  const file = path.join(ws, 'long-task.json');
  await writeFile(file, JSON.stringify(LONG_TASK));
  const child = started(new CliProcess(['run', file, '--json', '--workspace', ws], { env: SLOW }));
  const runId = await waitFor('the run to start', async () => (await listDir(path.join(ws, '.maestro', 'runs')))[0]);
  await waitFor('two checkpointed model calls', async () => (await readRunState(ws, runId)).steps.length >= 2);
  return { child, runId };
}

/** `claimed`: a watcher's run, still claimed in `.maestro/inflight/`: status lists it once, in flight. */
async function expectInterrupted(ws: string, runId: string, claimed = false): Promise<void> {
  const resume = `maestro run --resume ${runId}`;
  expect((await runs(ws)).find((r) => r.run_id === runId)).toMatchObject({ status: 'interrupted', next_step: resume });
  expect((await runs(ws, '--status', 'interrupted')).map((r) => r.run_id)).toEqual([runId]);
  expect(await runs(ws, '--status', 'running')).toEqual([]);
  const s = await status(ws);
  expect(s.recent.find((r) => r.run_id === runId)).toMatchObject({ status: 'interrupted', next_step: resume });
  const text = (await maestro(ws, 'status')).stdout;
  if (claimed) {
    expect(s.interrupted).toEqual([]);
    expect(text).toContain(`its watcher is gone — the next "maestro watch" resumes it, or now: ${resume}`);
    // Listed once: in flight, and among the recent runs.
    expect(text.split('\n').filter((l) => l.includes(runId))).toHaveLength(2);
    expect(text).not.toContain('left running by a process that is gone');
  } else {
    expect(s.interrupted).toEqual([expect.objectContaining({ run_id: runId, next_step: resume })]);
    expect(text).toContain(`resume with: ${resume}`);
  }
  const shown = (await maestro(ws, 'show', runId, '--raw')).stdout;
  expect(shown.startsWith(`# Run ${runId} — interrupted`)).toBe(true);
  expect(shown).toContain(resume);
  expect(JSON.parse((await maestro(ws, 'hitl', 'show', runId, '--json')).stdout)).toMatchObject({ status: 'interrupted' });
  // A view: the checkpoint itself still says running (resuming is what changes it).
  expect((await readRunState(ws, runId)).status).toBe('running');
}

describe('a run whose process was killed is interrupted, not running forever', () => {
  it('maestro run: running while it runs (and not resumable twice); after kill -9 interrupted; run --resume completes it', async () => {
    const ws = await workspace();
    const { child, runId } = await slowRun(ws);

    expect((await runs(ws)).find((r) => r.run_id === runId)).toMatchObject({ status: 'running', next_step: null });
    const live = await status(ws);
    expect(live.recent.find((r) => r.run_id === runId)).toMatchObject({ status: 'running' });
    expect(live.interrupted).toEqual([]);
    const twice = await maestro(ws, 'run', '--resume', runId);
    expect(twice.code).toBe(2);
    expect(twice.stdout).toContain(`pid ${child.child.pid}`);
    // Nor stopped as if nobody ran it: only a run no live process holds can be stopped without a pause.
    const stop = await maestro(ws, 'hitl', 'decide', runId, 'stop');
    expect(stop.code).toBe(2);
    expect(stop.stderr).toContain('is not paused: it is running');

    child.kill('SIGKILL');
    expect((await child.exited).signal).toBe('SIGKILL');
    await expectInterrupted(ws, runId);

    const resumed = await maestro(ws, 'run', '--resume', runId, '--json');
    expect(resumed.code).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ run_id: runId, status: 'completed' });
    expect((await runs(ws)).find((r) => r.run_id === runId)).toMatchObject({ status: 'completed', next_step: null });
    expect((await status(ws)).interrupted).toEqual([]);
    expect(await listDir(path.join(ws, '.maestro', 'holders'))).toEqual([]);
    // The trail names who resumed it, from where.
    const resumedRecord = (await readAuditLogs(ws)).get(runId)?.find((r) => r.event === 'RUN_RESUMED');
    expect(resumedRecord?.details).toMatchObject({ resumed_by: os.userInfo().username, via: 'cli', from: os.hostname() });
  }, 90_000);

  it('maestro watch: its run shows running while the watcher lives, interrupted once it is killed; run --resume completes it', async () => {
    const ws = await workspace();
    const watcher = started(watch(ws, [], SLOW));
    await watcher.waitForEvent('the watcher to start', (e) => e.kind === 'started');
    await dropCommand(ws, 'long.json', LONG_TASK);
    const runId = String((await watcher.waitForEvent('the claim', (e) => e.kind === 'claimed')).run_id);
    await waitFor('two checkpointed model calls', async () => (await readRunState(ws, runId)).steps.length >= 2);
    expect((await status(ws)).inflight).toEqual([expect.objectContaining({ run_id: runId, owner_alive: true, run_status: 'running' })]);

    watcher.kill('SIGKILL');
    expect((await watcher.exited).signal).toBe('SIGKILL');
    expect((await status(ws)).inflight).toEqual([
      expect.objectContaining({ run_id: runId, owner_alive: false, run_status: 'interrupted' }),
    ]);
    await expectInterrupted(ws, runId, true);

    const resumed = await maestro(ws, 'run', '--resume', runId, '--json');
    expect(JSON.parse(resumed.stdout)).toMatchObject({ run_id: runId, status: 'completed' });
    expect((await status(ws)).inflight).toEqual([]);
  }, 90_000);
});
