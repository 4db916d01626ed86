import { spawn } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { WorkspaceStatus } from '../../src/adapters/fs/workspace-status.js';
import { runCli } from '../fakes/cli.js';
import { dropCommand, task, useWatchScope, watch, watchOnce } from '../helpers/watch-workspace.js';

const { workspace, defer } = useWatchScope();

/** `maestro status` through `main(argv, io)`: what it reads is the workspace's files and the watchers' pids. */
async function status(ws: string, json = true): Promise<{ code: number | null; out: string; value: WorkspaceStatus }> {
  const { code, stdout: out } = await runCli(['status', '--workspace', ws, ...(json ? ['--json'] : [])]);
  return { code, out, value: json ? (JSON.parse(out) as WorkspaceStatus) : (undefined as never) };
}

/** A pid that is certainly not running: a child that has exited. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '']);
  await new Promise((r) => child.on('exit', r));
  return child.pid!;
}

describe('maestro status (end to end)', () => {
  it('reports an idle workspace: no watcher, what is queued, no runs', async () => {
    const ws = await workspace();
    await dropCommand(ws, 'first.json', task('Review plan one'));
    await dropCommand(ws, 'second.json', task('Review plan two'));
    const { code, value } = await status(ws);
    expect(code).toBe(0);
    expect(value).toMatchObject({ watcher_running: false, watchers: [], inflight: [], paused: [], recent: [], rejected: 0 });
    expect(value.queued.map((q) => q.file).sort()).toEqual(['first.json', 'second.json']);
  });

  it('never prints a secret a queued file name holds, as text or as JSON', async () => {
    const ws = await workspace();
    await dropCommand(ws, 'from-jane.doe@example.com.json', task('Review plan one'));
    const shown = await runCli(['status', '--workspace', ws]);
    const json = await runCli(['status', '--workspace', ws, '--json']);
    for (const out of [shown.stdout, json.stdout]) {
      expect(out).not.toContain('jane.doe@example.com');
      expect(out).toContain('[REDACTED:EMAIL]');
    }
    expect((JSON.parse(json.stdout) as WorkspaceStatus).queued).toHaveLength(1);
  });

  it('reports a running watcher, recent runs with their outcome, and runs paused for a person', async () => {
    const ws = await workspace();
    await dropCommand(ws, 'fine.json', task('Review the ordinary plan'));
    await dropCommand(ws, 'risky.json', task('Delete all production backups with rm -rf tonight'));
    expect((await watchOnce(ws)).code).toBe(0);

    // The running watcher is a process of its own: status finds it by its pid.
    const watcher = watch(ws);
    defer(() => watcher.dispose());
    await watcher.waitForEvent('the watcher to start', (e) => e.kind === 'started');
    const { value } = await status(ws);
    expect(value.watcher_running).toBe(true);
    expect(value.watchers).toEqual([expect.objectContaining({ pid: watcher.child.pid, alive: true })]);
    expect(value.recent.map((r) => [r.source, r.status]).sort()).toEqual([
      ['fine.json', 'completed'],
      ['risky.json', 'paused'],
    ]);
    // The rules see the deletion before any model does: the access-control gate pauses it.
    expect(value.paused).toEqual([
      expect.objectContaining({ source: 'risky.json', layer: 'acc', reason_code: 'ACC_EXTERNAL_SIDE_EFFECT_REQUIRES_HITL' }),
    ]);

    const text = await status(ws, false);
    expect(text.out).toContain(`watcher    running — pid ${watcher.child.pid}`);
    expect(text.out).toContain(`maestro hitl decide ${value.paused[0]?.run_id} continue|stop`);
    watcher.kill('SIGTERM');
    expect((await watcher.exited).code).toBe(0);
    expect((await status(ws)).value.watcher_running).toBe(false);
  }, 60_000);

  it('detects a stale pid file left by a watcher that crashed', async () => {
    const ws = await workspace();
    const pid = await deadPid();
    await mkdir(path.join(ws, '.maestro', 'watchers'), { recursive: true });
    await writeFile(
      path.join(ws, '.maestro', 'watchers', `${pid}.json`),
      JSON.stringify({ id: `${pid}-beef`, pid, started_at: '2026-01-01T00:00:00.000Z', once: false, version: '0.1.0' }),
    );
    const { value, code } = await status(ws);
    expect(code).toBe(0);
    expect(value.watcher_running).toBe(false);
    expect(value.watchers).toEqual([expect.objectContaining({ pid, alive: false })]);
    expect((await status(ws, false)).out).toContain('1 stale pid file(s)');
  });
});

describe('maestro status lists invalid runs', () => {
  it('a run a person chose to continue, with no watcher to take it up, is listed as continued: not as left running by a process that is gone', async () => {
    const ws = await workspace();
    await writeFile(path.join(ws, 'risky.json'), JSON.stringify(task('Delete all production backups with rm -rf tonight')));
    const paused = await runCli(['run', 'risky.json', '--json'], { cwd: ws });
    expect(paused.code).toBe(3);
    const { run_id: id } = JSON.parse(paused.stdout) as { run_id: string };
    expect((await runCli(['hitl', 'decide', id, 'continue', '--workspace', ws])).code).toBe(0);

    const { value } = await status(ws);
    expect(value.interrupted).toEqual([]);
    expect(value.continued).toEqual([
      expect.objectContaining({ run_id: id, source: 'risky.json', next_step: `maestro run --resume ${id}` }),
    ]);
    const text = await status(ws, false);
    expect(text.out).not.toContain('left running by a process that is gone');
    expect(text.out).toContain('continued  1 (a person chose continue; the next "maestro watch" resumes each)');
    expect(text.out).toContain(`resume with: maestro run --resume ${id}`);
    // Every view says continued, not interrupted: nothing went wrong with it.
    expect(value.recent.find((r) => r.run_id === id)?.status).toBe('continued');
    const runs = JSON.parse((await runCli(['runs', '--json', '--workspace', ws])).stdout) as { run_id: string; status: string }[];
    expect(runs.find((r) => r.run_id === id)?.status).toBe('continued');
    expect(JSON.parse((await runCli(['runs', '--status', 'interrupted', '--json', '--workspace', ws])).stdout)).toEqual([]);
    const shown = await runCli(['hitl', 'show', id, '--workspace', ws]);
    expect(shown.stdout).toContain('Nothing to decide: the run is continued. A person chose continue');
  });

  it('a command that failed validation has no checkpoint, only an audit log: it is among the recent runs, as invalid', async () => {
    const ws = await workspace();
    await writeFile(path.join(ws, 'bad.json'), JSON.stringify({ task_description: 'Review the plan', config: { max_round: 2 } }));
    const bad = await runCli(['run', 'bad.json', '--json'], { cwd: ws });
    expect(bad.code).toBe(2);
    const { run_id: invalidId, reason_code: reason } = JSON.parse(bad.stdout) as { run_id: string; reason_code: string };
    await writeFile(path.join(ws, 'good.json'), JSON.stringify(task('Review the ordinary plan')));
    expect((await runCli(['run', 'good.json'], { cwd: ws })).code).toBe(0);

    const json = await runCli(['status', '--json'], { cwd: ws });
    const value = JSON.parse(json.stdout) as WorkspaceStatus;
    expect(value.recent.map((r) => [r.status, r.source])).toEqual([
      ['completed', 'good.json'],
      ['invalid', null],
    ]);
    expect(value.recent[1]).toMatchObject({ run_id: invalidId, reason_code: reason });
    const text = await runCli(['status'], { cwd: ws });
    expect(text.stdout).toContain('recent     2 (newest first)');
    expect(text.stdout).toContain(`${invalidId} invalid ${reason} · no checkpoint, only its audit log (maestro audit show)`);
  });
});
