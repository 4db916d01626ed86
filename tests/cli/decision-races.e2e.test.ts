import { access, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli, spawnCli, type CliResult } from '../fakes/cli.js';
import { tempWorkspace } from '../fakes/fixtures.js';
import { CliProcess } from '../helpers/watch-workspace.js';

// Issue 23, point 5: a decision or a resume that two processes race on is taken by exactly one.
let ws: Awaited<ReturnType<typeof tempWorkspace>>;
const maestro = (...args: string[]) => runCli(args, { cwd: ws.dir });
const spawned = (...args: string[]) => spawnCli(args, { cwd: ws.dir, timeoutMs: 60_000 });
const ghostPersona = () => path.join(ws.dir, 'personas', 'ghost.md');

beforeEach(async () => {
  ws = await tempWorkspace();
  // Names a persona the workspace lacks: the run pauses at the first gate, before any model call.
  await writeFile(
    path.join(ws.dir, 'ghost.json'),
    JSON.stringify({ task_description: 'Review the plan', config: { max_rounds: 1, personas: ['coordinator', 'ghost'] } }),
  );
});
afterEach(() => ws.cleanup());

async function pausedRun(): Promise<string> {
  await rm(ghostPersona(), { force: true });
  const paused = await maestro('run', 'ghost.json', '--json');
  expect(paused.code).toBe(3);
  return JSON.parse(paused.stdout).run_id as string;
}

/** Adds the missing persona: a resumed run then gets past the gate and completes. */
async function addGhost(): Promise<void> {
  const auditor = await readFile(path.join(ws.dir, 'personas', 'auditor.md'), 'utf8');
  await writeFile(ghostPersona(), auditor.replace(/^id: .*$/m, 'id: ghost').replace(/^name: .*$/m, 'name: Ghost'));
}

async function auditEvents(runId: string): Promise<string[]> {
  const log = await readFile(path.join(ws.dir, '.maestro', 'audit', `${runId}.jsonl`), 'utf8');
  return log
    .split('\n')
    .filter((l) => l.length > 0)
    .map((l) => (JSON.parse(l) as { event: string }).event);
}

/** Once a process holds the run: its record is in the run's holder folder. */
async function heldBySomeone(runId: string): Promise<void> {
  const holder = path.join(ws.dir, '.maestro', 'holders', runId);
  for (let i = 0; i < 400 && (await readdir(holder).catch(() => [])).length === 0; i++) await new Promise((r) => setTimeout(r, 25));
}

const count = (events: string[], event: string) => events.filter((e) => e === event).length;
const stateOf = async (runId: string) => JSON.parse(await readFile(path.join(ws.dir, '.maestro', 'runs', runId, 'state.json'), 'utf8'));

/** One winner (exit 0) and one refused (exit 2); returns the loser. */
/** Exactly one was refused (exit 2); the other went through: 0, or 4 for a stop (stopped by a person). */
function oneWinner(results: CliResult[], decisions?: readonly string[]): CliResult {
  const winner = results.findIndex((r) => r.code !== 2);
  expect(results.filter((r) => r.code === 2)).toHaveLength(1);
  expect(results[winner]?.code).toBe(decisions?.[winner] === 'stop' ? 4 : 0);
  return results.find((r) => r.code === 2)!;
}

// Each round starts real processes; the suite runs a few (every pair of decisions once), the soak more:
// MAESTRO_RACE_ROUNDS=50 npx vitest run tests/cli/decision-races.e2e.test.ts
const ROUNDS = Number(process.env.MAESTRO_RACE_ROUNDS ?? 2);

describe('two processes deciding or resuming one run at once', () => {
  it('two `hitl decide` started together: exactly one decides, the other is refused saying so (continue and stop mixed)', async () => {
    // Continue against stop first: the suite runs two rounds (MAESTRO_RACE_ROUNDS=4 tries every pair).
    const pairs = [
      ['continue', 'stop'],
      ['stop', 'stop'],
      ['stop', 'continue'],
      ['continue', 'continue'],
    ] as const;
    for (let round = 0; round < ROUNDS; round++) {
      const id = await pausedRun();
      const pair = pairs[round % pairs.length]!;
      const results = await Promise.all(pair.map((d) => spawned('hitl', 'decide', id, d)));
      const loser = oneWinner(results, pair);
      expect(loser.stderr).toMatch(/refused: .*(already decided|another maestro process is deciding or resuming run)/);
      const events = await auditEvents(id);
      expect(count(events, 'HITL_DECIDED'), `round ${round}: ${events.join(' ')}`).toBe(1);
      const state = await stateOf(id);
      expect(state.hitl).toHaveLength(1);
      const winner = pair[results.findIndex((r) => r.code !== 2)];
      expect(state.status).toBe(winner === 'stop' ? 'stopped' : 'running');
      expect(count(events, 'RUN_FINISHED')).toBe(winner === 'stop' ? 1 : 0);
    }
  }, 240_000);

  it('two `run --resume` started together: exactly one resumes and finishes the run, the other is refused', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const id = await pausedRun();
      if (round % 2 === 0) {
        // A `continue` waiting for its resumer.
        expect((await maestro('hitl', 'decide', id, 'continue')).code).toBe(0);
      } else {
        // A run its process left `running` (killed): nothing waits in the inbox.
        const state = await stateOf(id);
        delete state.pause;
        await writeFile(path.join(ws.dir, '.maestro', 'runs', id, 'state.json'), JSON.stringify({ ...state, status: 'running' }));
      }
      await addGhost();
      // Model calls slow enough that both processes are up while the run is resumed.
      const resume = () =>
        spawnCli(['run', '--resume', id, '--json'], { cwd: ws.dir, env: { MAESTRO_OFFLINE_DELAY_MS: '150' }, timeoutMs: 60_000 });
      const results = await Promise.all([resume(), resume()]);
      const loser = oneWinner(results);
      expect(loser.stderr).toMatch(/another maestro process (\(pid \d+, since .*\); wait for it|resumed run|finished it)/);
      expect(JSON.parse(loser.stdout)).toMatchObject({ run_id: id, status: 'refused', decision: null, artifact: null });
      const events = await auditEvents(id);
      expect(count(events, 'RUN_RESUMED'), `round ${round}: ${events.join(' ')}`).toBe(1);
      expect(count(events, 'RUN_FINISHED')).toBe(1);
      expect((await stateOf(id)).status).toBe('completed');
    }
  }, 240_000);

  it('a `stop` after a `continue` that waits to be resumed is refused: that pause was already decided', async () => {
    const id = await pausedRun();
    expect((await maestro('hitl', 'decide', id, 'continue')).code).toBe(0);
    const stop = await maestro('hitl', 'decide', id, 'stop');
    expect(stop.code).toBe(2);
    expect(stop.stderr).toContain(`its pause ${id}-p1 was already decided ("continue"`);
    expect(stop.stderr).toContain(`maestro run --resume ${id}`);
    const bound = await maestro('hitl', 'decide', id, 'stop', '--pause', `${id}-p1`);
    expect(bound.code).toBe(2);
    expect(bound.stderr).toContain('already decided');
    // Nothing changed: still running, one decision, and the continue still waits for its resumer.
    expect((await stateOf(id)).status).toBe('running');
    expect(count(await auditEvents(id), 'HITL_DECIDED')).toBe(1);
    await access(path.join(ws.dir, '.maestro', 'decisions', `${id}.json`));
    await addGhost();
    const resumed = await maestro('run', '--resume', id, '--json');
    expect(resumed.code).toBe(0);
    expect(JSON.parse(resumed.stdout).status).toBe('completed');
  });

  it('a decision on a run another process is resuming right now is refused, and the resume finishes', async () => {
    const id = await pausedRun();
    expect((await maestro('hitl', 'decide', id, 'continue')).code).toBe(0);
    await addGhost();
    // Slow model calls: the resume holds the run longer than a decision waits for it (3 s): five calls
    // of 1 s each (measured: the resume ends 1.5 s after the refusal with 0.9 s calls).
    const resume = spawnCli(['run', '--resume', id, '--json'], {
      cwd: ws.dir,
      env: { MAESTRO_OFFLINE_DELAY_MS: '1000' },
      timeoutMs: 60_000,
    });
    // Once the resumer holds the run (and has taken the continue from the inbox).
    await heldBySomeone(id);
    const stop = await maestro('hitl', 'decide', id, 'stop');
    expect(stop.code).toBe(2);
    expect(stop.stderr).toMatch(
      /is not paused: it is running; its pause .* was already decided .*; another maestro process holds it right now \(pid \d+/,
    );
    expect((await stateOf(id).catch(() => ({ status: 'running' }))).status).toBe('running');
    expect((await resume).code).toBe(0);
    expect((await stateOf(id)).status).toBe('completed');
    expect(count(await auditEvents(id), 'HITL_DECIDED')).toBe(1);
  }, 60_000);

  it('a resume killed with -9 while it holds the run lets it go at once: the run it left running can be stopped as run by nobody, once', async () => {
    const id = await pausedRun();
    expect((await maestro('hitl', 'decide', id, 'continue')).code).toBe(0);
    await addGhost();
    const killed = new CliProcess(['run', '--resume', id, '--workspace', ws.dir], { env: { MAESTRO_OFFLINE_DELAY_MS: '1000' } });
    await heldBySomeone(id);
    // And it has taken the continue (killed before that, the continue still waits for a resumer, and
    // a stop is rightly refused: that pause was already decided).
    const decision = path.join(ws.dir, '.maestro', 'decisions', `${id}.json`);
    for (let i = 0; i < 400 && (await readdir(path.dirname(decision)).catch((): string[] => [])).includes(path.basename(decision)); i++)
      await new Promise((r) => setTimeout(r, 25));
    killed.child.kill('SIGKILL');
    expect((await killed.exited).signal).toBe('SIGKILL');
    // Its record is left behind, naming a process that is gone: nothing waits for it to go stale.
    expect(await readdir(path.join(ws.dir, '.maestro', 'holders', id))).toHaveLength(1);
    const stop = await maestro('hitl', 'decide', id, 'stop');
    expect(stop.stderr).not.toMatch(/another maestro process/);
    expect(stop.code).toBe(4);
    expect((await stateOf(id)).status).toBe('stopped');
    const events = await auditEvents(id);
    expect(count(events, 'HITL_DECIDED')).toBe(2);
    expect(count(events, 'RUN_FINISHED')).toBe(1);
    expect(await readdir(path.join(ws.dir, '.maestro', 'holders'))).toEqual([]);
  }, 60_000);
});
