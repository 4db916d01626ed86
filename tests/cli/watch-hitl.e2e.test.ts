import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../fakes/cli.js';
import { dropCommand, listDir, readAuditLogs, readRunState, task, watch, useWatchScope } from '../helpers/watch-workspace.js';

const { workspace, started } = useWatchScope();

// The watchers are processes (SIGTERM, kill -9); a person's `hitl decide` runs through main(argv, io).
describe('maestro watch and human decisions (end to end)', () => {
  it("keeps a paused run's command with the run, and resumes the run when a person decides to continue", async () => {
    const ws = await workspace();
    const watcher = started(watch(ws));
    await watcher.waitForEvent('the watcher to start', (e) => e.kind === 'started');
    await dropCommand(ws, 'risky.json', task('The requirements are unclear: decide the vendor'));
    const paused = await watcher.waitForEvent('the pause', (e) => e.kind === 'finished');
    expect(paused).toMatchObject({ source: 'risky.json', status: 'paused' });
    const runId = String(paused.run_id);
    expect(await listDir(path.join(ws, 'commands'))).toEqual([]);
    expect(await listDir(path.join(ws, '.maestro', 'inflight'))).toEqual([]);
    expect(await listDir(path.join(ws, '.maestro', 'runs', runId))).toContain('command.json');
    const callsBefore = (await readRunState(ws, runId)).steps.length;

    expect((await runCli(['hitl', 'decide', runId, 'continue', '--workspace', ws])).code).toBe(0);

    const resumed = await watcher.waitForEvent(
      'the resumed run',
      (e) => e.kind === 'finished' && e.run_id === runId && e.status !== 'paused',
    );
    expect(resumed.status).toBe('completed');
    expect(watcher.events.find((e) => e.kind === 'claimed' && e.resume === 'decision')).toMatchObject({
      run_id: runId,
      source: 'risky.json',
    });
    watcher.kill('SIGTERM');
    expect((await watcher.exited).code).toBe(0);

    expect((await readRunState(ws, runId)).steps.length).toBe(callsBefore);
    const records = (await readAuditLogs(ws)).get(runId) ?? [];
    expect(records.map((r) => r.event)).toEqual(expect.arrayContaining(['HITL_REQUESTED', 'HITL_DECIDED', 'RUN_RESUMED', 'RUN_FINISHED']));
    expect(await listDir(path.join(ws, '.maestro', 'decisions'))).toEqual([]);
    expect(await listDir(path.join(ws, '.maestro', 'inflight'))).toEqual([]);
  }, 60_000);

  it('survives kill -9 while a run is paused: after a restart, the decision resumes it in the new watcher', async () => {
    const ws = await workspace();
    const first = started(watch(ws));
    await first.waitForEvent('the watcher to start', (e) => e.kind === 'started');
    await dropCommand(ws, 'risky.json', task('The requirements are unclear: decide the vendor'));
    const paused = await first.waitForEvent('the pause', (e) => e.kind === 'finished');
    const runId = String(paused.run_id);
    first.kill('SIGKILL');
    await first.exited;

    const second = started(watch(ws));
    await second.waitForEvent('the second watcher to start', (e) => e.kind === 'started');
    expect((await readRunState(ws, runId)).status).toBe('paused');
    expect((await runCli(['hitl', 'decide', runId, 'continue', '--workspace', ws])).code).toBe(0);
    const resumed = await second.waitForEvent(
      'the resumed run',
      (e) => e.kind === 'finished' && e.run_id === runId && e.status !== 'paused',
    );
    expect(resumed.status).toBe('completed');
    second.kill('SIGTERM');
    expect((await second.exited).code).toBe(0);
    expect(await listDir(path.join(ws, 'outputs'))).toHaveLength(1);
  }, 60_000);
});
