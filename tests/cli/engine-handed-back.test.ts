import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PgEngine } from '../../src/adapters/pg/engine.js';
import { PgQueue } from '../../src/adapters/pg/queue-intake.js';
import { PgWorkerSession } from '../../src/adapters/pg/queue.js';
import { PgRunLedger } from '../../src/adapters/pg/run-ledger.js';
import { FsWatcherRegistry } from '../../src/adapters/fs/watcher-registry.js';
import { auditEvent } from '../../src/domain/audit.js';
import { runDecision } from '../../src/domain/decision.js';
import { runCli } from '../fakes/cli.js';
import { engineWorkspace, useEngine } from '../helpers/engine.js';
import { aPgRunState } from '../helpers/pg-engine.js';

// What every view says of a run a stopped worker handed back to the queue, and of the intake's
// claims whose runs the engine holds: the engine's state, not the intake's claim file.
const { database, workspace } = useEngine();
const clock = { now: () => new Date('2026-01-01T00:00:00Z') };
const plain = { task_description: 'Review the rollout plan and list the risks', config: { max_rounds: 1 } };

/** A run a worker took, checkpointed, then `end`ed: handed back (as SIGTERM does) or completed. */
async function workedOn(url: string, ws: string, runId: string, end: 'handed back' | 'completed'): Promise<void> {
  const engine = PgEngine.open(url);
  try {
    const body = JSON.stringify(plain);
    await new PgQueue(engine).submit({ runId, workspaceId: `test:${ws}`, source: `${runId}.json`, body, inputHashes: {}, floorAccept: [] });
    const session = await PgWorkerSession.open(engine, { name: 'k1' });
    const claim = await session.claimNext();
    if (claim?.runId !== runId) throw new Error(`expected to claim ${runId}`);
    const run = await new PgRunLedger({ engine, clock, fence: session.fence(claim, () => undefined) }).open(runId);
    await run.commit({ start: { ...aPgRunState(runId), command: plain as never } });
    if (end === 'handed back') await session.requeue(claim);
    else {
      const decision = runDecision('arbitration', 'ARBITRATION_PROCEED');
      const event = { type: 'finished', status: 'completed', decision, finishedAt: '2026-01-01T00:00:01.000Z', summary: 'done' } as const;
      await run.commit({ event, records: [auditEvent('RUN_FINISHED', decision)] });
    }
    await session.close();
  } finally {
    await engine.close();
  }
}

/** The intake's claim of the command in `.maestro/inflight/`, owned by the watcher `owner` (alive or gone). */
async function claimedByIntake(ws: string, runId: string, owner: { id: string; pid: number }): Promise<void> {
  const inflight = path.join(ws, '.maestro', 'inflight');
  await mkdir(inflight, { recursive: true });
  await writeFile(path.join(inflight, `${runId}.json`), JSON.stringify(plain));
  const claim = { run_id: runId, source: `${runId}.json`, claimed_at: '2026-01-01T00:00:00.000Z', owner, kind: 'command' };
  await writeFile(path.join(inflight, `${runId}.claim`), JSON.stringify(claim));
}

describe('a run a stopped worker handed back to the queue', () => {
  it('is interrupted, queued again for the next free worker, in runs, show, hitl show and status', async () => {
    const url = await database();
    const ws = workspace(await engineWorkspace(url));
    await workedOn(url, ws, 'R-back', 'handed back');
    // The intake that submitted it is alive: its claim is not the run's holder.
    const registry = new FsWatcherRegistry(path.join(ws, '.maestro', 'watchers'));
    const intake = FsWatcherRegistry.newIdentity();
    await registry.register({ ...intake, started_at: '2026-01-01T00:00:00.000Z', once: false, version: 'test' });
    await claimedByIntake(ws, 'R-back', intake);
    try {
      const runs = JSON.parse((await runCli(['runs', '--json', '--workspace', ws])).stdout) as { run_id: string; status: string }[];
      expect(runs.find((r) => r.run_id === 'R-back')).toMatchObject({ status: 'interrupted', next_step: 'maestro run --resume R-back' });
      expect((await runCli(['runs', '--workspace', ws])).stdout).toContain('queued again: the next free worker resumes it');
      expect(JSON.parse((await runCli(['show', 'R-back', '--json', '--workspace', ws])).stdout)).toMatchObject({ status: 'interrupted' });
      const hitl = await runCli(['hitl', 'show', 'R-back', '--workspace', ws]);
      expect(hitl.stdout).toContain('the run is interrupted');
      expect(hitl.stdout).not.toContain('the run is running');
      const status = await runCli(['status', '--workspace', ws]);
      expect(status.stdout).not.toContain(`running in pid ${intake.pid}`);
      expect(status.stdout).toMatch(
        /R-back R-back\.json · 0 step\(s\) done · interrupted in the engine: queued again, the next free worker resumes it/,
      );
      const json = JSON.parse((await runCli(['status', '--json', '--workspace', ws])).stdout);
      expect(json.inflight[0]).toMatchObject({ run_id: 'R-back', run_status: 'interrupted', engine: { queue: 'queued', worker: null } });
    } finally {
      await registry.unregister(intake);
    }
  }, 60_000);

  it('a claim of a dead intake whose run completed in the engine says so, and offers no resume', async () => {
    const url = await database();
    const ws = workspace(await engineWorkspace(url));
    await workedOn(url, ws, 'R-done', 'completed');
    await claimedByIntake(ws, 'R-done', { id: '999999-deadbeef', pid: 999_999 });
    const status = await runCli(['status', '--workspace', ws]);
    expect(status.stdout).toMatch(
      /R-done R-done\.json · 0 step\(s\) done · completed in the engine: the next "maestro watch" writes it back/,
    );
    expect(status.stdout).not.toContain('maestro run --resume R-done');
  }, 60_000);
});

describe('hitl decide continue --run while an idle worker runs', () => {
  it('when the worker takes the run up first, the continue is recorded: exit 0, status queued (not refused)', async () => {
    const url = await database();
    const ws = workspace(await engineWorkspace(url));
    const ghost = {
      task_description: 'Review the rollout plan and list the risks',
      config: { max_rounds: 1, personas: ['coordinator', 'ghost'] },
    };
    await writeFile(path.join(ws, 'ghost.json'), JSON.stringify(ghost));
    const paused = await runCli(['run', 'ghost.json', '--json'], { cwd: ws });
    expect(paused.code, paused.stderr).toBe(3);
    const id = JSON.parse(paused.stdout).run_id as string;
    // An idle worker: it looks every few milliseconds, takes the continued run as soon as nobody holds it, and keeps it.
    const engine = PgEngine.open(url);
    const session = await PgWorkerSession.open(engine, { name: 'idle' });
    let stop = false;
    const taken = (async () => {
      while (!stop) {
        const claim = await session.claimNext();
        if (claim) return claim.runId;
        await new Promise((r) => setTimeout(r, 2));
      }
      return undefined;
    })();
    try {
      const decided = await runCli(['hitl', 'decide', id, 'continue', '--run', '--json'], { cwd: ws, timeoutMs: 60_000 });
      stop = true;
      expect(await taken).toBe(id);
      expect(decided.code, decided.stderr).toBe(0);
      expect(JSON.parse(decided.stdout)).toMatchObject({ run_id: id, decision: 'continue', status: 'queued' });
      expect(JSON.parse(decided.stdout).message).toMatch(/^the continue is recorded; another process took the run up first/);
      const text = await runCli(['hitl', 'show', id, '--json'], { cwd: ws });
      expect(JSON.parse(text.stdout).status).toBe('running'); // the worker holds it
    } finally {
      stop = true;
      await taken;
      await session.close();
      await engine.close();
    }
  }, 90_000);
});
