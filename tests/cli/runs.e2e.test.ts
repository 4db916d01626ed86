import { mkdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSince } from '../../src/cli/runs.js';
import { runCli } from '../fakes/cli.js';
import { tempWorkspace } from '../fakes/fixtures.js';

let ws: Awaited<ReturnType<typeof tempWorkspace>>;
const maestro = (...args: string[]) => runCli(args, { cwd: ws.dir });
const ids: Record<'completed' | 'paused' | 'invalid', string> = { completed: '', paused: '', invalid: '' };

// One workspace with a completed run, a paused one and an invalid command, as a person would leave it.
beforeAll(async () => {
  ws = await tempWorkspace();
  ids.completed = JSON.parse((await maestro('run', 'examples/review-migration.json', '--json')).stdout).run_id;
  await writeFile(
    path.join(ws.dir, 'doubt.json'),
    JSON.stringify({ task_description: 'The requirements are unclear: decide the vendor', config: { max_rounds: 1 } }),
  );
  ids.paused = JSON.parse((await maestro('run', 'doubt.json', '--json')).stdout).run_id;
  await writeFile(path.join(ws.dir, 'bad.json'), JSON.stringify({ task_description: '   ', surprise: 1 }));
  ids.invalid = JSON.parse((await maestro('run', 'bad.json', '--json')).stdout).run_id;
}, 60_000);
afterAll(() => ws.cleanup());

describe('maestro runs', () => {
  it('lists every run, the invalid one too, newest first, with status, reason, task, model and usage', async () => {
    const r = await maestro('runs', '--json');
    expect(r.code).toBe(0);
    const runs = JSON.parse(r.stdout) as Array<Record<string, unknown>>;
    expect(runs.map((x) => x.run_id)).toEqual([ids.invalid, ids.paused, ids.completed]);
    expect(runs[0]).toMatchObject({ status: 'invalid', reason_code: 'SPEC_INVALID_INPUT', task: null });
    expect(runs[1]).toMatchObject({
      status: 'paused',
      reason_code: 'ARBITRATION_INVESTIGATE',
      task: 'The requirements are unclear: decide the vendor',
      source: 'doubt.json',
    });
    expect(runs[2]).toMatchObject({ status: 'completed', reason_code: 'RUN_COMPLETED', calls: 13, cost_usd: 0 });
    expect(runs[2]!.model).toMatch(/offline/);
    expect(runs[2]!.prompt_tokens).toBeGreaterThan(0);

    const text = await maestro('runs');
    expect(text.stdout).toContain(ids.paused);
    expect(text.stdout).toContain('(the command file was not valid)');
    expect(text.stdout).toContain('3 run(s), newest first');
    expect(text.stdout).not.toContain('not shown');
    // A list cut short says how many it left out and how to see them.
    const cut = await maestro('runs', '-n', '2');
    expect(cut.stdout).toContain('2 run(s), newest first');
    expect(cut.stdout).toContain('1 older run(s) not shown: maestro runs -n 0 lists them all');
  });

  it('filters by status and by time, and refuses what it cannot read', async () => {
    const some = JSON.parse((await maestro('runs', '--status', 'paused,invalid', '--json')).stdout) as Array<{ run_id: string }>;
    expect(some.map((x) => x.run_id)).toEqual([ids.invalid, ids.paused]);
    expect(JSON.parse((await maestro('runs', '--since', '1h', '--json')).stdout)).toHaveLength(3);
    expect(JSON.parse((await maestro('runs', '--since', '2999-01-01', '--json')).stdout)).toHaveLength(0);
    // A filter that leaves every run out says which, not how to start a first run.
    const none = (await maestro('runs', '--since', '2999-01-01')).stdout;
    expect(none).toContain('no runs match --since 2999-01-01 (3 run(s) in all)');
    expect(none).not.toContain('run one with');
    expect((await maestro('runs', '--status', 'continued')).stdout).toContain('no runs match --status continued');
    const bad = await maestro('runs', '--status', 'done');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('not "done"');
    expect((await maestro('runs', '--since', 'yesterday-ish')).code).toBe(2);
  });

  it('reads durations for --since', () => {
    const now = new Date('2026-11-22T12:00:00Z');
    expect(parseSince('30m', now).toISOString()).toBe('2026-11-22T11:30:00.000Z');
    expect(parseSince('10s', now).toISOString()).toBe('2026-11-22T11:59:50.000Z');
    expect(parseSince('7d', now).toISOString()).toBe('2026-11-15T12:00:00.000Z');
    expect(parseSince('2026-11-01', now).toISOString()).toBe('2026-11-01T00:00:00.000Z');
  });
});

describe('maestro show', () => {
  it('prints the transcript, the knowledge requests, the verdicts, the decision trail and the outcome', async () => {
    const r = await maestro('show', ids.completed);
    expect(r.code).toBe(0);
    for (const part of [
      'Transcript',
      'coordinator · round 1',
      'READ_FILE(examples/migration-plan.md) → provided',
      'Verdicts',
      'Decision trail',
      'RUN_COMPLETED',
      'Outcome',
    ]) {
      expect(r.stdout).toContain(part);
    }
    expect(r.stdout).not.toMatch(/\u001b\[/); // NO_COLOR: no escape codes
    const raw = await maestro('show', ids.completed, '--raw');
    expect(raw.stdout.startsWith(`# Run ${ids.completed} — completed`)).toBe(true);
    expect(raw.stdout).toContain('| persona | action | confidence | rationale |');
  });

  it('says how to move a paused run on', async () => {
    const r = await maestro('show', ids.paused, '--raw');
    expect(r.stdout).toContain(`maestro hitl decide ${ids.paused} continue|stop`);
  });

  it('explains a run without a transcript and an unknown id (exit 2)', async () => {
    const invalid = await maestro('show', ids.invalid);
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toContain('ended invalid (SPEC_INVALID_INPUT)');
    const unknown = await maestro('show', 'no-such-run');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('there is no run "no-such-run"');
  });
});

describe('a run that died before its first checkpoint', () => {
  it('is listed as unknown with its command to run again, show says so, and prune removes it once old', async () => {
    const own = await tempWorkspace();
    try {
      const cli = (...args: string[]) => runCli(args, { cwd: own.dir });
      const id = '20200102T030405Z-abc123';
      const dir = path.join(own.dir, '.maestro', 'runs', id);
      await mkdir(dir, { recursive: true });
      await writeFile(path.join(dir, 'command.json'), JSON.stringify({ task_description: 'Write a haiku for alice@example.com' }));
      const listed = JSON.parse((await cli('runs', '--json')).stdout) as Array<Record<string, unknown>>;
      expect(listed).toEqual([
        expect.objectContaining({
          run_id: id,
          status: 'unknown',
          task: 'Write a haiku for [REDACTED:EMAIL]',
          started_at: '2020-01-02T03:04:05.000Z',
          next_step: `maestro run .maestro/runs/${id}/command.json`,
        }),
      ]);
      expect((await cli('runs')).stdout).toContain(`run it again with: maestro run .maestro/runs/${id}/command.json`);
      const show = await cli('show', id);
      expect(show.code).toBe(2);
      expect(show.stderr).toContain('it died before its first checkpoint');
      expect((await cli('audit', 'prune')).code).toBe(0);
      await expect(stat(dir)).rejects.toThrow();
      expect(JSON.parse((await cli('runs', '--json')).stdout)).toEqual([]);
    } finally {
      await own.cleanup();
    }
  });
});
