import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../fakes/cli.js';
import { tempWorkspace } from '../fakes/fixtures.js';

let ws: Awaited<ReturnType<typeof tempWorkspace>>;
beforeEach(async () => {
  ws = await tempWorkspace();
});
afterEach(() => ws.cleanup());

const maestro = (...args: string[]) => runCli(args, { cwd: ws.dir });
const runJson = async (file: string) => {
  const r = await maestro('run', file, '--json');
  return { code: r.code, ...(JSON.parse(r.stdout) as { run_id: string; status: string; reason_code: string }) };
};

describe('a conflict line the loop policy stopped, through the CLI', () => {
  it('stops later commands at once (no new pause) and refuses continue on its paused runs until a reset', async () => {
    // A task the floor pauses on at a gate (ethics), on the offline model: the line is the task itself.
    await writeFile(path.join(ws.dir, 't.json'), JSON.stringify({ task_description: 'Fire Bob.' }));
    // The same line in other words: a `conflict_key` would do it too; here the task differs only in case and spacing.
    await writeFile(path.join(ws.dir, 'u.json'), JSON.stringify({ task_description: '  fire   BOB. ' }));
    const runs = [];
    for (const file of ['t.json', 't.json', 't.json', 't.json', 't.json', 'u.json']) runs.push(await runJson(file));
    expect(runs.map((r) => [r.code, r.reason_code])).toEqual([
      [3, 'ETHICS_HIGH_STAKES'],
      [3, 'ETHICS_HIGH_STAKES'],
      [3, 'ETHICS_HIGH_STAKES'],
      [4, 'ACC_END_SESSION_AFTER_4_HITL'],
      [4, 'ACC_STOPPED_IS_TERMINAL'],
      [4, 'ACC_STOPPED_IS_TERMINAL'],
    ]);
    const session = (await maestro('session', 'show')).stdout;
    expect(session).toContain('4 pause(s) — STOPPED (terminal until reset)');
    const listed = JSON.parse((await maestro('hitl', 'list', '--json')).stdout) as { run_id: string; conflict_stopped: boolean }[];
    // (Run ids started in the same second sort by their random tail, not by start.)
    expect(listed.map((r) => [r.run_id, r.conflict_stopped]).sort()).toEqual(
      runs
        .slice(0, 3)
        .map((r) => [r.run_id, true])
        .sort(),
    );

    // Paused before the line was stopped: offered only stop, and a continue is refused (exit 2), changing nothing.
    const first = runs[0]!.run_id;
    const refused = await maestro('hitl', 'decide', first, 'continue');
    expect(refused.code).toBe(2);
    expect(refused.stdout).not.toContain('continue recorded');
    expect(refused.stderr).toContain('ACC_STOPPED_IS_TERMINAL');
    expect(refused.stderr).toContain(`maestro hitl decide ${first} stop`);
    expect(refused.stderr).toContain('maestro session reset');
    expect(JSON.parse((await maestro('hitl', 'show', first, '--json')).stdout)).toMatchObject({ status: 'paused', decisions: [] });
    const all = await maestro('hitl', 'decide', '--all', '--reason', 'ETHICS_HIGH_STAKES', 'continue');
    expect(all.code).toBe(2);
    expect(all.stdout).not.toContain('continue recorded');
    expect(all.stdout.match(/refused: .*only stop is offered/g)).toHaveLength(3);

    const stop = await maestro('hitl', 'decide', runs[1]!.run_id, 'stop');
    expect(stop.code).toBe(4); // stopped by a person
    expect(stop.stdout).toContain('stopped (hitl: HITL_STOP)');

    // A new session opens the line again: the paused run may continue, and the task pauses as before.
    expect((await maestro('session', 'reset', '--keep-memory')).code).toBe(0);
    const decided = await maestro('hitl', 'decide', runs[2]!.run_id, 'continue');
    expect(decided.code).toBe(0);
    expect(decided.stdout).toContain('continue recorded');
    expect(await runJson('t.json')).toMatchObject({ code: 3, reason_code: 'ETHICS_HIGH_STAKES' });
  });
});

describe('a corrupt loop policy', () => {
  it('is never a new session by itself: runs, hitl and session show refuse with the cause until session reset', async () => {
    await writeFile(path.join(ws.dir, 't.json'), JSON.stringify({ task_description: 'Fire Bob.' }));
    const paused = await runJson('t.json');
    expect(paused).toMatchObject({ code: 3, reason_code: 'ETHICS_HIGH_STAKES' });
    const file = path.join(ws.dir, '.maestro', 'loop-policy.json');
    await writeFile(file, '{"schemaVersion":1,"session_id":');

    // The run ends before any persona, on the storage failure, naming the file and the way out.
    const run = await maestro('run', 't.json', '--json');
    expect(run.code).toBe(1);
    const out = JSON.parse(run.stdout) as { status: string; reason_code: string; message: string; artifact: null };
    expect(out).toMatchObject({ status: 'error', reason_code: 'STORAGE_WRITE_FAILED', artifact: null });
    expect(out.message).toContain(`the loop policy ${file} is corrupt (not valid JSON)`);
    expect(out.message).toContain('maestro session reset');
    // A paused run's continue needs the line's stops: refused the same way, the run still paused.
    const decided = await maestro('hitl', 'decide', paused.run_id, 'continue');
    expect(decided.code).toBe(1);
    expect(decided.stderr).toContain('is corrupt');
    for (const look of [
      ['session', 'show'],
      ['hitl', 'show', paused.run_id],
    ]) {
      const shown = await maestro(...look);
      expect(shown.code).toBe(1);
      expect(shown.stderr).toContain('is corrupt');
    }
    // The file is left as it was until the explicit new session start, which keeps a copy.
    expect(await readFile(file, 'utf8')).toBe('{"schemaVersion":1,"session_id":');
    expect((await maestro('session', 'reset', '--keep-memory')).code).toBe(0);
    expect((await readdir(path.join(ws.dir, '.maestro'))).filter((f) => f.startsWith('loop-policy.json.corrupt-'))).toHaveLength(1);
    expect(JSON.parse((await maestro('hitl', 'show', paused.run_id, '--json')).stdout)).toMatchObject({ status: 'paused', decisions: [] });
    expect(await runJson('t.json')).toMatchObject({ code: 3, reason_code: 'ETHICS_HIGH_STAKES' });
  });
});
