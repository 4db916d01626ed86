import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { dropCommand, engineLedger, startIntake, startWorker } from '../../bench/pg-cluster.mjs';
import { cliHere, engineWorkspace, query, useEngine } from '../helpers/engine.js';

// The engine taken down and brought back under an intake and workers: this file's own PostgreSQL (the
// suite's serves every other engine test), so a restart here breaks no other file's connections.
const { database, server, started, workspace } = useEngine({ ownServer: true });

const listDir = async (dir: string): Promise<string[]> => (await readdir(dir).catch(() => [] as string[])).sort();
const task = (text: string): Record<string, unknown> => ({ task_description: text, config: { max_rounds: 1 } });
const plain = task('Review the rollout plan and list the risks');

describe('an intake and workers on an engine that restarts', () => {
  it('the engine restarted mid-run: workers reconnect and every command completes once', async () => {
    const url = await database();
    const ws = workspace(await engineWorkspace(url));
    // Reconnect tries 50 ms apart at first (production: 250 ms, then doubling): the outage is the
    // same, only the wait after the engine is back is shorter.
    const retry = { MAESTRO_ENGINE_RETRY_MS: '50' };
    const env = { MAESTRO_OFFLINE_DELAY_MS: '100', ...retry };
    const intake = started(startIntake(ws, [], retry));
    const workers = [started(startWorker(ws, 'r1', env)), started(startWorker(ws, 'r2', env))];
    await intake.waitFor('the intake', (e) => e.kind === 'started');
    // Four commands for two workers: each worker is mid-run when the engine goes, and two more wait
    // queued through the restart (six made the same two cases, three runs longer).
    const COMMANDS = 4;
    for (let i = 0; i < COMMANDS; i++)
      await dropCommand(ws, `r${i}.json`, task(`Review the plan for restart case ${i} and list the risks`));
    await workers[0]!.waitFor('a run under way', (e) => e.kind === 'claimed');
    await new Promise((r) => setTimeout(r, 250)); // a few model calls into it
    await server().restart(500);
    await intake
      .waitFor(
        'every result',
        () => new Set(intake.events.filter((e) => e.kind === 'finished').map((e) => e.source)).size === COMMANDS,
        60_000,
      )
      .catch(async (error: Error) => {
        const queue = await query(
          url,
          'SELECT run_id, source, state, owner, epoch, claims, delivered_at FROM maestro_queue ORDER BY seq',
        ).catch((e: Error) => e.message);
        const show = (p: { events: Array<Record<string, unknown>> }): string =>
          p.events
            .filter((e) => e.kind !== 'step')
            .map((e) => JSON.stringify(e).slice(0, 300))
            .join('\n');
        throw new Error(
          `${error.message}\nqueue: ${JSON.stringify(queue)}\nintake:\n${show(intake)}\n${workers.map((w) => `worker:\n${show(w)}\n${w.stderr}`).join('\n')}`,
        );
      });
    expect(intake.events.filter((e) => e.kind === 'finished').every((e) => e.status === 'completed')).toBe(true);
    // The same processes: no worker died of the restart (a connection ended under a transaction).
    expect(
      workers.map((w) => w.alive),
      workers.map((w) => `worker stderr:\n${w.stderr}`).join('\n'),
    ).toEqual([true, true]);
    expect(intake.alive).toBe(true);
    expect(workers.some((w) => w.events.some((e) => e.kind === 'notice' && /reconnected|engine/.test(String(e.message))))).toBe(true);
    const ledger = await engineLedger(url);
    expect(ledger.runs.filter((r) => r.finished !== 1 || r.artifacts !== 1 || r.sessions !== 1)).toEqual([]);
    expect(ledger.repeatedSteps).toBe(0);
    expect(await listDir(path.join(ws, 'outputs'))).toHaveLength(COMMANDS);
    expect((await cliHere(['audit', 'verify', '--all', '--workspace', ws])).code).toBe(0);
  }, 90_000);

  it('says once that the connection is lost and once that it is back, then submits again what the engine lost, once', async () => {
    const url = await database();
    const ws = workspace(await engineWorkspace(url));
    // Tries 100 ms apart at first (production: 1 s, doubling): a one-second outage is then a few
    // failed tries, each of which must stay unsaid after the first.
    const retry = { MAESTRO_ENGINE_RETRY_MS: '100' };
    const intake = started(startIntake(ws, [], retry));
    await intake.waitFor('the intake', (e) => e.kind === 'started');
    for (let i = 0; i < 3; i++) await dropCommand(ws, `f${i}.json`, { ...plain, task_description: `Forgotten task ${i}: list the risks` });
    const submittedRuns = () =>
      intake.events.filter((e) => e.kind === 'notice' && /submitted to the engine as run/.test(String(e.message)));
    await intake.waitFor('three submissions', () => submittedRuns().length === 3);
    // The engine loses one acknowledged submission (as a crash with asynchronous commits, or a restore, would) and goes away a while.
    const [lost] = await query<{ run_id: string; source: string }>(
      url,
      `DELETE FROM maestro_queue WHERE source = 'f1.json' RETURNING run_id, source`,
    );
    await server().restart(1000);
    for (let i = 3; i < 5; i++) await dropCommand(ws, `f${i}.json`, { ...plain, task_description: `Late task ${i}: list the risks` });
    const worker = started(startWorker(ws, 'after', retry));
    await intake.waitFor('five results', () => intake.events.filter((e) => e.kind === 'finished').length >= 5, 90_000);

    const notices = intake.events.filter((e) => e.kind === 'notice').map((e) => String(e.message));
    expect(notices.filter((m) => /connection to the engine is lost/.test(m))).toHaveLength(1);
    const back = notices.filter((m) => /connection to the engine is back/.test(m));
    expect(back).toHaveLength(1);
    expect(Number(/(\d+) failed tries/.exec(back[0] ?? '')?.[1])).toBeGreaterThanOrEqual(2);
    expect(notices.filter((m) => /cannot be reached|could not be submitted/.test(m))).toEqual([]);
    expect(notices.filter((m) => m.includes(`no longer has run ${lost!.run_id}`))).toHaveLength(1);
    expect(intake.events.filter((e) => e.kind === 'finished').map((e) => e.status)).toEqual(Array(5).fill('completed'));
    expect((await listDir(path.join(ws, '.maestro', 'inflight'))).filter((n) => !n.startsWith('.'))).toEqual([]);
    const ledger = await engineLedger(url);
    expect(ledger.runs.filter((r) => r.finished !== 1)).toEqual([]);
    expect(worker.alive && intake.alive).toBe(true);
  }, 120_000);
});
