import { mkdir, readFile, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  type CliProcess,
  dropCommand,
  listDir,
  readAuditLogs,
  readRunState,
  waitFor,
  watch,
  watchOnce,
  useWatchScope,
} from '../helpers/watch-workspace.js';
import { runCli } from '../fakes/cli.js';

// The offline model answers in about a millisecond; MAESTRO_OFFLINE_DELAY_MS makes each call wait,
// so "in the middle of a run" is a state the test can wait for instead of a moment it must hit.
const SLOW = { MAESTRO_OFFLINE_DELAY_MS: '150' };
/**
 * For tests where a second process must find the run still going: ten calls left at 600 ms give it
 * six seconds to start, enough on a loaded machine (at 150 ms the run could end before it looked).
 */
const SLOWER = { MAESTRO_OFFLINE_DELAY_MS: '600' };
const LONG_TASK = { task_description: 'Plan the migration of the billing service, step by step', config: { max_rounds: 3 } };
/** 3 personas × 3 rounds + 3 verdicts + 1 synthesis. */
const STEPS = 13;

const { workspace, started } = useWatchScope();

/** Starts a slow watcher, drops one long command, and waits until `steps` model calls are checkpointed. */
async function midRun(ws: string, delay = SLOW, steps = 3): Promise<{ watcher: CliProcess; runId: string }> {
  const watcher = started(watch(ws, [], delay));
  await watcher.waitForEvent('the watcher to start', (e) => e.kind === 'started');
  await dropCommand(ws, 'long.json', LONG_TASK);
  const claimed = await watcher.waitForEvent('the claim', (e) => e.kind === 'claimed');
  const runId = String(claimed.run_id);
  await waitFor(`${steps} checkpointed model call(s)`, async () => (await readRunState(ws, runId)).steps.length >= steps);
  return { watcher, runId };
}

async function expectFinishedOnce(ws: string, runId: string): Promise<void> {
  const state = await readRunState(ws, runId);
  expect(state.status).toBe('completed');
  expect(state.steps.map((s) => s.index)).toEqual(Array.from({ length: STEPS }, (_, i) => i));
  const records = (await readAuditLogs(ws)).get(runId) ?? [];
  expect(records[0]?.event).toBe('COMMAND_RECEIVED');
  expect(records.filter((r) => r.event === 'COMMAND_RECEIVED')).toHaveLength(1);
  expect(records.filter((r) => r.event === 'RUN_RESUMED')).toHaveLength(1);
  // No finished model call is made twice: every step index is audited at most once.
  const steps = records.filter((r) => r.event === 'MODEL_CALL').map((r) => r.details?.step);
  expect(new Set(steps).size).toBe(steps.length);
  expect(records.filter((r) => r.event === 'RUN_FINISHED')).toHaveLength(1);
  expect(await listDir(path.join(ws, 'outputs'))).toEqual([`${runId}.md`]);
  expect(await readFile(path.join(ws, 'outputs', `${runId}.md`), 'utf8')).toContain('Plan the migration of the billing service');
  expect(await listDir(path.join(ws, 'commands'))).toEqual([]);
  expect(await listDir(path.join(ws, '.maestro', 'inflight'))).toEqual([]);
}

describe('maestro watch: crash recovery and clean stop (end to end)', () => {
  it('after kill -9 in the middle of a run, the next start finishes it from its checkpoint', async () => {
    const ws = await workspace();
    const { watcher, runId } = await midRun(ws);
    watcher.kill('SIGKILL');
    expect((await watcher.exited).signal).toBe('SIGKILL');
    expect(await listDir(path.join(ws, '.maestro', 'inflight'))).toEqual([`${runId}.claim`, `${runId}.json`]);
    expect((await readRunState(ws, runId)).status).toBe('running');

    // The next start needs no process of its own (only the killed one does): it runs in this one.
    const restart = await watchOnce(ws);
    expect(restart.code).toBe(0);
    expect(restart.events.find((e) => e.kind === 'started')).toMatchObject({ recovered: 1 });
    expect(restart.events.find((e) => e.kind === 'claimed')).toMatchObject({ run_id: runId, source: 'long.json', resume: 'checkpoint' });
    await expectFinishedOnce(ws, runId);
    // The stale pid file of the killed watcher is gone, and so is the one of the restart.
    expect(await listDir(path.join(ws, '.maestro', 'watchers'))).toEqual([]);
  }, 60_000);

  it('on SIGTERM stops at a checkpoint and exits 0; the next start resumes the run', async () => {
    const ws = await workspace();
    const { watcher, runId } = await midRun(ws);
    watcher.kill('SIGTERM');
    expect(await watcher.exited).toEqual({ code: 0, signal: null });
    expect(watcher.events.at(-2)).toMatchObject({
      kind: 'finished',
      run_id: runId,
      status: 'interrupted',
      message: 'interrupted at its last checkpoint: the watcher was stopped; the next start resumes it',
    });
    expect(watcher.events.at(-1)).toMatchObject({ kind: 'stopped', state: 'STOPPED', reason: 'signal' });
    expect(await listDir(path.join(ws, '.maestro', 'watchers'))).toEqual([]);
    expect(await listDir(path.join(ws, '.maestro', 'inflight'))).toEqual([`${runId}.claim`, `${runId}.json`]);
    const interrupted = (await readAuditLogs(ws)).get(runId) ?? [];
    expect(interrupted.at(-1)?.event).toBe('RUN_INTERRUPTED');

    // The next start needs no process of its own (only the killed one does): it runs in this one.
    const restart = await watchOnce(ws);
    expect(restart.code).toBe(0);
    expect(restart.events.find((e) => e.kind === 'claimed')).toMatchObject({ run_id: runId, resume: 'checkpoint' });
    await expectFinishedOnce(ws, runId);
  }, 60_000);

  it('a second watcher leaves alone a claim whose watcher is alive', async () => {
    const ws = await workspace();
    const { watcher, runId } = await midRun(ws, SLOWER);
    const other = await watchOnce(ws);
    expect(other.code).toBe(0);
    expect(other.events.find((e) => e.kind === 'started')).toMatchObject({ recovered: 0, owned_by_others: 1 });
    // Said, not silent: the second watcher names the first.
    const said = other.events.find((e) => e.kind === 'notice');
    expect(String(said?.message)).toContain(`another watcher is running on this workspace (pid ${watcher.child.pid} since `);
    expect(other.events.filter((e) => e.kind === 'claimed')).toEqual([]);

    // The first watcher still holds its run: stopped now, it checkpoints it, and no call was made twice.
    watcher.kill('SIGTERM');
    expect((await watcher.exited).code).toBe(0);
    expect(watcher.events.find((e) => e.kind === 'finished')).toMatchObject({ run_id: runId, status: 'interrupted' });
    const records = (await readAuditLogs(ws)).get(runId) ?? [];
    const steps = records.filter((r) => r.event === 'MODEL_CALL').map((r) => r.details?.step);
    expect(steps.length).toBeGreaterThanOrEqual(3);
    expect(new Set(steps).size).toBe(steps.length);
    expect(records.filter((r) => r.event === 'COMMAND_RECEIVED')).toHaveLength(1);
  }, 60_000);

  it('a recovered claim whose run had already ended is cleaned up, not run again', async () => {
    const ws = await workspace();
    await dropCommand(ws, 'done.json', { task_description: 'A short task', config: { max_rounds: 1 } });
    const first = await watchOnce(ws);
    expect(first.code).toBe(0);
    const runId = String(first.events.find((e) => e.kind === 'finished')?.run_id);
    // Simulate a crash after the run ended but before its command file was deleted.
    const inflight = path.join(ws, '.maestro', 'inflight');
    await writeFile(path.join(inflight, `${runId}.json`), JSON.stringify({ task_description: 'A short task' }));
    await writeFile(
      path.join(inflight, `${runId}.claim`),
      JSON.stringify({
        run_id: runId,
        source: 'done.json',
        claimed_at: new Date().toISOString(),
        owner: { id: '999999-dead', pid: 999999 },
      }),
    );

    const restart = await watchOnce(ws);
    expect(restart.code).toBe(0);
    expect(restart.events.filter((e) => e.kind === 'claimed')).toEqual([]);
    expect(restart.events.find((e) => e.kind === 'notice')).toMatchObject({ run_id: runId });
    expect(await listDir(inflight)).toEqual([]);
    expect(((await readAuditLogs(ws)).get(runId) ?? []).filter((r) => r.event === 'COMMAND_RECEIVED')).toHaveLength(1);
  }, 60_000);

  it('maestro run --resume refuses a run a live watcher holds, so it is never run twice', async () => {
    const ws = await workspace();
    // One checkpointed call is enough: the run is under way, and a dozen calls of 600 ms are left.
    const { runId } = await midRun(ws, SLOWER, 1);
    const resume = await runCli(['run', '--resume', runId, '--workspace', ws]);
    expect(resume.code).toBe(2);
    expect(resume.stdout).toContain('is claimed by a running watcher');
  }, 60_000);

  it('maestro run --resume takes over the claim of a watcher killed with -9, finishes the run once, and nothing is left claimed', async () => {
    const ws = await workspace();
    const { watcher, runId } = await midRun(ws);
    watcher.kill('SIGKILL');
    await watcher.exited;
    const resume = await runCli(['run', '--resume', runId, '--workspace', ws]);
    expect(resume.code).toBe(0);
    await expectFinishedOnce(ws, runId);
    // A later watcher finds nothing to recover and runs nothing again.
    const after = await watchOnce(ws);
    expect(after.code).toBe(0);
    expect(after.events.filter((e) => e.kind === 'claimed')).toEqual([]);
    await expectFinishedOnce(ws, runId);
  }, 60_000);

  it('enforces audit retention at start: logs last written longer ago than audit.retention_days go', async () => {
    const ws = await workspace();
    const audit = path.join(ws, '.maestro', 'audit');
    await mkdir(audit, { recursive: true });
    const old = new Date(Date.now() - 40 * 24 * 60 * 60 * 1000);
    await writeFile(path.join(audit, '20200101T000000Z-000000.jsonl'), '');
    await utimes(path.join(audit, '20200101T000000Z-000000.jsonl'), old, old);
    await writeFile(path.join(audit, '20200102T000000Z-000000.jsonl'), '');
    const once = await watchOnce(ws);
    expect(once.code).toBe(0);
    expect(await listDir(audit)).toEqual(['20200102T000000Z-000000.jsonl']);
    expect(once.events.find((e) => e.kind === 'notice')?.message).toContain('audit retention: deleted the logs of 1 run(s)');
  }, 60_000);
});
