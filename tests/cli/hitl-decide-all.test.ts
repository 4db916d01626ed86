import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../fakes/cli.js';
import { tempWorkspace } from '../fakes/fixtures.js';

// Issue 25 item 2: one decision for every run paused for the same reason, in process.
let ws: Awaited<ReturnType<typeof tempWorkspace>>;
beforeEach(async () => {
  ws = await tempWorkspace();
});
afterEach(() => ws.cleanup());

const maestro = (...args: string[]) => runCli(args, { cwd: ws.dir });
async function pausedRun(name: string, command: Record<string, unknown>): Promise<{ run_id: string; reason_code: string }> {
  await writeFile(path.join(ws.dir, name), JSON.stringify(command));
  const r = await maestro('run', name, '--json');
  expect(r.code, r.stderr).toBe(3);
  return JSON.parse(r.stdout) as { run_id: string; reason_code: string };
}
const statusOf = async (runId: string) =>
  (JSON.parse((await maestro('runs', '--json')).stdout) as { run_id: string; status: string }[]).find((r) => r.run_id === runId)?.status;
const pausedIds = async () => (JSON.parse((await maestro('hitl', 'list', '--json')).stdout) as { run_id: string }[]).map((r) => r.run_id);

describe('maestro hitl decide --all', () => {
  it('decides every run paused for one reason, lists them, leaves other pauses, and refuses when reasons differ unless one is named', async () => {
    const unclear = (n: number) => ({
      task_description: `The requirements are unclear: choose the queue for service ${n}`,
      config: { max_rounds: 1 },
    });
    const a = await pausedRun('a.json', unclear(1));
    const b = await pausedRun('b.json', unclear(2));
    const c = await pausedRun('c.json', unclear(3));
    const budget = await pausedRun('budget.json', {
      task_description: 'Choose the cache for billing',
      config: { max_rounds: 2, budget: { max_calls: 2 } },
    });
    expect(new Set([a, b, c].map((r) => r.reason_code)).size).toBe(1);
    expect(budget.reason_code).not.toBe(a.reason_code);

    // Different reasons and none named: refused, nothing changed.
    const mixed = await maestro('hitl', 'decide', '--all', 'continue');
    expect(mixed.code).toBe(2);
    expect(mixed.stderr).toContain('different reasons');
    expect(mixed.stderr).toContain(a.reason_code);
    expect(mixed.stderr).toContain(budget.reason_code);
    expect((await pausedIds()).sort()).toEqual([a, b, c, budget].map((r) => r.run_id).sort());

    const all = await maestro('hitl', 'decide', '--all', '--reason', a.reason_code, 'continue', '--json');
    expect(all.code, all.stderr).toBe(0);
    const listed = JSON.parse(all.stdout) as { reason: string; runs: { run_id: string; decision: string }[] };
    expect(listed.reason).toBe(a.reason_code);
    expect(listed.runs.map((r) => r.run_id).sort()).toEqual([a, b, c].map((r) => r.run_id).sort());
    expect(listed.runs.every((r) => r.decision === 'continue')).toBe(true);
    expect(await pausedIds()).toEqual([budget.run_id]);

    // Nothing is paused for that reason any more: refused, saying what is.
    const again = await maestro('hitl', 'decide', '--all', '--reason', a.reason_code, 'continue');
    expect(again.code).toBe(2);
    expect(again.stderr).toContain(`no run is paused for ${a.reason_code}`);

    // One reason left: no --reason needed; stop lists the run and ends it, exiting 4 as a single stop does.
    const stop = await maestro('hitl', 'decide', '--all', 'stop');
    expect(stop.code, stop.stderr).toBe(4);
    expect(stop.stdout).toContain(`1 run(s) paused for ${budget.reason_code}`);
    expect(stop.stdout).toContain(budget.run_id);
    expect(await statusOf(budget.run_id)).toBe('stopped');
    expect(await pausedIds()).toEqual([]);
  });

  it('refuses a malformed decision or reason, and a run id with --all, changing nothing', async () => {
    const a = await pausedRun('a.json', { task_description: 'The requirements are unclear: choose the queue', config: { max_rounds: 1 } });
    expect((await maestro('hitl', 'decide', '--all', 'yes')).code).toBe(2);
    expect((await maestro('hitl', 'decide', '--all', '--reason', 'not a code', 'stop')).code).toBe(2);
    expect((await maestro('hitl', 'decide', '--all', a.run_id, 'stop')).code).toBe(2);
    expect(await pausedIds()).toEqual([a.run_id]);
  });
});
