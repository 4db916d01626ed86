import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../fakes/cli.js';
import { tempWorkspace } from '../fakes/fixtures.js';

let ws: Awaited<ReturnType<typeof tempWorkspace>>;
beforeEach(async () => {
  ws = await tempWorkspace();
});
afterEach(() => ws.cleanup());

const write = (name: string, command: Record<string, unknown>) => writeFile(path.join(ws.dir, name), JSON.stringify(command));
const maestro = (...args: string[]) => runCli(args, { cwd: ws.dir });
const records = async (file: string) =>
  (await readFile(file, 'utf8'))
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
const ambiguous = { task_description: 'The requirements are unclear: choose the message queue for billing', config: { max_rounds: 2 } };

describe('fail-closed policy and HITL, through the real CLI', () => {
  it('refuses a decision on a run whose command did not validate, saying it ended invalid, not that it does not exist', async () => {
    await writeFile(path.join(ws.dir, 'half.json'), '{"task_description": "Summarise the thread",');
    const run = await maestro('run', 'half.json', '--json');
    expect(run.code).toBe(2);
    const { run_id: id } = JSON.parse(run.stdout) as { run_id: string };
    const decide = await maestro('hitl', 'decide', id, 'continue', '--json');
    expect(decide.code).toBe(2);
    expect(JSON.parse(decide.stdout)).toMatchObject({ status: 'refused' });
    expect(decide.stderr).toContain(`run ${id} ended invalid`);
    expect((await maestro('hitl', 'decide', 'no-such-run', 'continue')).stderr).toContain('there is no run "no-such-run"');
  });

  it('stops a task holding an e-mail address (sealed) before any model call, and refuses to continue it', async () => {
    await write('pii.json', { task_description: 'Draft a reply to jane.doe@example.com about the refund' });
    const run = await maestro('run', 'pii.json', '--json');
    expect(run.code).toBe(4);
    const out = JSON.parse(run.stdout);
    expect(out).toMatchObject({ status: 'stopped', decision: 'STOPPED', reason_code: 'ETHICS_PII_DETECTED' });
    const log = await records(out.audit_log);
    expect(log.find((r) => r.layer === 'ethics')).toMatchObject({
      sealed: true,
      overrideable: false,
      final_decider: 'SYSTEM',
      decision: 'STOPPED',
    });
    expect(log.some((r) => r.event === 'MODEL_CALL')).toBe(false);
    expect(await readFile(out.audit_log, 'utf8')).not.toContain('jane.doe');

    const decide = await maestro('hitl', 'decide', out.run_id, 'continue');
    expect(decide.code).toBe(2);
    expect(decide.stderr).toContain('refused');
    expect(decide.stderr).toContain('sealed');
  });

  it('pauses an ambiguous task, and `continue` completes it without more model calls than a run without the pause', async () => {
    await write('clear.json', {
      task_description: 'Choose the message queue for billing',
      config: { max_rounds: 2 },
      output_artifact_path: 'outputs/clear.md',
    });
    const clear = JSON.parse((await maestro('run', 'clear.json', '--json')).stdout);
    const clearCalls = (await records(clear.audit_log)).filter((r) => r.event === 'MODEL_CALL').length;

    await write('ambiguous.json', { ...ambiguous, output_artifact_path: 'outputs/ambiguous.md' });
    const paused = await maestro('run', 'ambiguous.json', '--json');
    expect(paused.code).toBe(3);
    const p = JSON.parse(paused.stdout);
    expect(paused.stderr).toContain(`maestro hitl decide ${p.run_id} continue|stop`);

    const list = await maestro('hitl', 'list', '--json');
    expect(JSON.parse(list.stdout)).toEqual([
      expect.objectContaining({ run_id: p.run_id, layer: 'arbitration', reason_code: 'ARBITRATION_INVESTIGATE', conflict_pauses: 1 }),
    ]);
    const show = await maestro('hitl', 'show', p.run_id);
    expect(show.stdout).toContain('no model call is repeated');

    const cont = await maestro('hitl', 'decide', p.run_id, 'continue', '--note', 'the facts are known', '--run', '--json');
    expect(cont.code).toBe(0);
    const done = JSON.parse(cont.stdout);
    expect(done).toMatchObject({ run_id: p.run_id, status: 'completed', artifact: path.join(ws.dir, 'outputs', 'ambiguous.md') });
    const log = await records(p.audit_log);
    expect(log.filter((r) => r.event === 'MODEL_CALL')).toHaveLength(clearCalls);
    expect(log.find((r) => r.event === 'HITL_DECIDED')).toMatchObject({ final_decider: 'USER', sealed: false, overrideable: false });
    expect((await maestro('hitl', 'list', '--json')).stdout.trim()).toBe('[]');
  });

  it('`stop` ends the run as STOPPED: command removed, artifact records the stop', async () => {
    await write('ambiguous.json', { ...ambiguous, output_artifact_path: 'outputs/stopped.md' });
    const p = JSON.parse((await maestro('run', 'ambiguous.json', '--json')).stdout);
    const stop = await maestro('hitl', 'decide', p.run_id, 'stop', '--note', 'not now', '--json');
    // Stopped by a person: exit 4, as `stopped` is everywhere (README, exit codes).
    expect(stop.code).toBe(4);
    expect(JSON.parse(stop.stdout)).toMatchObject({ status: 'stopped', decision: 'STOPPED', reason_code: 'HITL_STOP' });
    const artifact = await readFile(path.join(ws.dir, 'outputs', 'stopped.md'), 'utf8');
    expect(artifact).toContain('Status: STOPPED');
    // The person's stop is the run's ending: on the trail once, after the pause it decided.
    const trail =
      artifact
        .split('## Decision trail')[1]
        ?.split('\n')
        .filter((l) => l.startsWith('| ') && !l.startsWith('| Layer')) ?? [];
    expect(trail.slice(-2)).toEqual([
      expect.stringContaining('| arbitration | PAUSE_FOR_HITL | ARBITRATION_INVESTIGATE |'),
      '| hitl | STOPPED | HITL_STOP | a person chose to stop | no | USER |',
    ]);
    expect(new Set(trail).size).toBe(trail.length);
    // Listed with the person's stop, not the code that paused it.
    const listed = JSON.parse((await maestro('runs', '--json')).stdout) as Array<Record<string, unknown>>;
    expect(listed.find((r) => r.run_id === p.run_id)).toMatchObject({ status: 'stopped', reason_code: 'HITL_STOP' });
    await expect(stat(path.join(ws.dir, '.maestro', 'runs', p.run_id, 'command.json'))).rejects.toThrow();
    expect((await maestro('hitl', 'decide', p.run_id, 'continue')).code).toBe(2);
  });

  it('records who decided, how and where (the OS user, the CLI, this machine), and offers no decision on a stopped run', async () => {
    await write('ambiguous.json', ambiguous);
    const p = JSON.parse((await maestro('run', 'ambiguous.json', '--json')).stdout);
    expect((await maestro('hitl', 'decide', p.run_id, 'stop', '--note', 'not now')).code).toBe(4);
    const user = os.userInfo().username;
    const decided = (await records(p.audit_log)).find((r) => r.event === 'HITL_DECIDED');
    expect(decided?.details).toMatchObject({ decided_by: user, via: 'cli', from: os.hostname() });
    const show = await maestro('hitl', 'show', p.run_id);
    expect(show.stdout).toContain(`by ${user} via the CLI on ${os.hostname()} — not now`);
    // The pause was decided: nothing on the run offers a decision any more.
    expect(show.stdout).not.toMatch(/Paused at|Continue would|Decide:/);
    expect(show.stdout).toContain('Nothing to decide: the run is stopped');
    expect(JSON.parse((await maestro('hitl', 'show', p.run_id, '--json')).stdout)).toMatchObject({ pause: null, continue_would: null });
    expect((await maestro('audit', 'show', p.run_id)).stdout).toContain(`decided_by=${user}`);
  });

  it('refuses a decision for an old pause, and a malformed one, changing nothing', async () => {
    await write('gate.json', { ...ambiguous, input_artifacts: ['docs/missing.md'] });
    const p = JSON.parse((await maestro('run', 'gate.json', '--json')).stdout);
    expect(p.reason_code).toBe('CONSISTENCY_INPUT_MISSING');
    expect((await maestro('hitl', 'decide', p.run_id, 'continue', '--run')).code).toBe(3);
    const stale = await maestro('hitl', 'decide', p.run_id, 'continue', '--pause', `${p.run_id}-p1`);
    expect(stale.code).toBe(2);
    expect(stale.stderr).toContain(`current pause of run ${p.run_id} is ${p.run_id}-p2`);
    const malformed = await maestro('hitl', 'decide', p.run_id, 'yes');
    expect(malformed.code).toBe(2);
    expect(JSON.parse((await maestro('hitl', 'show', p.run_id, '--json')).stdout)).toMatchObject({
      status: 'paused',
      pause: { pause_id: `${p.run_id}-p2` },
    });
  });

  it('runs the 4-pause loop-policy story: plan at 3, sealed stop at 4, terminal guard, reset', async () => {
    const conflict = (n: number) =>
      write(`c${n}.json`, {
        ...ambiguous,
        task_description: `${ambiguous.task_description} (attempt ${n})`,
        config: { max_rounds: 1, conflict_key: 'queue' },
      });
    const codes: number[] = [];
    const ids: string[] = [];
    let fourthStderr = '';
    for (let n = 1; n <= 4; n++) {
      await conflict(n);
      const r = await maestro('run', `c${n}.json`, '--json');
      codes.push(r.code ?? -1);
      ids.push(JSON.parse(r.stdout).run_id);
      fourthStderr = r.stderr;
    }
    expect(codes).toEqual([3, 3, 3, 4]);
    const third = JSON.parse((await maestro('hitl', 'show', ids[2]!, '--json')).stdout);
    expect(third.plan).toContain('Plan to resolve the repeated pauses');
    expect(third.conflict_pauses).toBe(4); // counted now; at the third pause it was 3:
    expect(JSON.parse(await readFile(path.join(ws.dir, '.maestro', 'runs', ids[2]!, 'hitl.json'), 'utf8')).conflict_pauses).toBe(3);
    const fourth = JSON.parse((await maestro('hitl', 'show', ids[3]!, '--json')).stdout);
    expect(fourth).toMatchObject({ status: 'stopped', sealed: true });
    // The first three still wait, but their conflict line is stopped: continue is not offered, only stop.
    const first = JSON.parse((await maestro('hitl', 'show', ids[0]!, '--json')).stdout);
    expect(first).toMatchObject({ status: 'paused', conflict_stopped: true });
    expect(first.continue_would).toMatch(/^not go on: this conflict line was ended by the loop policy/);
    const firstText = (await maestro('hitl', 'show', ids[0]!)).stdout;
    expect(firstText).toContain(`Decide: maestro hitl decide ${ids[0]} stop [--note TEXT]`);
    expect(firstText).not.toContain('continue|stop');
    // The list names the file and the task's first line, and marks the stopped line.
    const listed = (await maestro('hitl', 'list')).stdout;
    expect(listed).toContain('FILE — TASK');
    expect(listed).toContain('c1.json — The requirements are unclear: choose the message queue for …');
    expect(listed).toContain('(conflict line stopped: stop only)');
    const rows = JSON.parse((await maestro('hitl', 'list', '--json')).stdout) as Array<{ source: string; conflict_stopped: boolean }>;
    expect(rows.map((r) => r.source).sort()).toEqual(['c1.json', 'c2.json', 'c3.json']);
    expect(rows.every((r) => r.conflict_stopped)).toBe(true);

    await conflict(5);
    const guarded = await maestro('run', 'c5.json', '--json');
    expect(guarded.code).toBe(4);
    expect(JSON.parse(guarded.stdout).reason_code).toBe('ACC_STOPPED_IS_TERMINAL');
    // The stop names the way out, in the same words as the fourth pause's stop did (and its artifact).
    expect(guarded.stderr).toContain('maestro session reset --keep-memory');
    const wayOut = 'To work on it again, start a new council session: maestro session reset --keep-memory (the personas keep their memory';
    expect(fourthStderr).toContain(wayOut);
    expect(guarded.stderr).toContain(wayOut);
    expect((await maestro('hitl', 'show', ids[3]!)).stdout).toContain(wayOut);
    expect((await maestro('session', 'show')).stdout).toContain('STOPPED (terminal until reset)');

    const reset = await maestro('session', 'reset');
    expect(reset.code).toBe(0);
    expect(reset.stdout).toContain('loop-policy counters, plans and stops cleared');
    await conflict(6);
    const sixth = await maestro('run', 'c6.json');
    expect(sixth.stderr + sixth.stdout).toContain('paused for a person');
    expect(sixth.code).toBe(3);
  });
});

describe('the council session', () => {
  it('has the same id on every look: session show, its --json, and after runs (one that completes, one that pauses)', async () => {
    const first = (await maestro('session', 'show')).stdout.split('\n')[0];
    expect(first).toMatch(/^Council session S-\S+ \(since /);
    const id = first?.split(' ')[2];
    expect(JSON.parse((await maestro('session', 'show', '--json')).stdout).session_id).toBe(id);
    await write('clear.json', { task_description: 'Write a short note on the billing cache choice' });
    expect((await maestro('run', 'clear.json')).code).toBe(0);
    await write('ambiguous.json', ambiguous);
    expect((await maestro('run', 'ambiguous.json')).code).toBe(3);
    expect((await maestro('session', 'show')).stdout.split('\n')[0]).toBe(first);
  });
});

describe('session reset', () => {
  it('counts every file it archives: the session states and the history archives', async () => {
    const states = path.join(ws.dir, 'session_states');
    await mkdir(path.join(states, 'archive'), { recursive: true });
    for (const persona of ['coordinator', 'strategist', 'auditor']) {
      await writeFile(path.join(states, `${persona}_session.json`), '{}');
      await writeFile(path.join(states, 'archive', `${persona}_history.jsonl`), '');
    }
    const reset = await maestro('session', 'reset');
    expect(reset.code).toBe(0);
    const to = /persona memory archived to (session_states\/archive\/S-[^/]+)\/ \((\d+) file\(s\)\)/.exec(reset.stdout);
    expect(to?.[2]).toBe('6');
    expect(await readdir(path.join(ws.dir, to?.[1] ?? 'none'))).toHaveLength(6);
  });
});

describe('the personas folder', () => {
  it('a README.md beside the personas documents them and does not block a run', async () => {
    await writeFile(path.join(ws.dir, 'personas', 'README.md'), '# Our council\n\nThree personas; edit them freely.\n');
    await write('clear.json', { task_description: 'Write a short note on the billing cache choice' });
    const run = await maestro('run', 'clear.json', '--json');
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout).status).toBe('completed');
    // On the offline model, the outcome line says it was a rehearsal, not advice.
    expect(JSON.parse(run.stdout).message).toMatch(/^completed: proceed .* · an offline rehearsal: canned replies, not advice/);
    // Its recommendation reads as sentences.
    const artifact = await readFile(JSON.parse(run.stdout).artifact, 'utf8');
    expect(artifact).toContain("After arbitration the council's position is: **proceed**. The task, in its key words: ");
    expect(artifact).not.toContain('arbitrated position is');
  });
});
