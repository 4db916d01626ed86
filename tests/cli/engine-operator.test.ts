import { writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { engineLedger, startWorker } from '../../bench/pg-cluster.mjs';
import { runCli } from '../fakes/cli.js';
import { engineWorkspace, query, useEngine } from '../helpers/engine.js';

// Issue 27: the engine's commands as an operator uses them, in-process through `main(argv, io)`.
// The suite's PostgreSQL (a database per workspace): the outage test has its own server (engine-restart.e2e.test.ts).
const { database, started, workspace } = useEngine();

/** A database whose commits are acknowledged before they are durable (set for the database only). */
async function asyncCommit(url: string): Promise<void> {
  const name = new URL(url).pathname.slice(1);
  await query(url, `ALTER DATABASE "${name}" SET synchronous_commit = off`);
}

describe('exactly-once needs durable commits', () => {
  it('a worker and an intake refuse an engine with synchronous_commit off, and take nothing', async () => {
    const url = await database();
    const ws = workspace(await engineWorkspace(url));
    await asyncCommit(url);
    for (const command of [
      ['worker', '--once'],
      ['watch', '--once'],
    ]) {
      const r = await runCli([...command, '--workspace', ws]);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(new RegExp(`maestro ${command[0]}: the engine at .* has synchronous_commit = off`));
      expect(r.stderr).toContain('--allow-async-commit');
    }
    expect(await query(url, 'SELECT 1 FROM maestro_workers')).toEqual([]);
    // `engine status` says it too, before anyone starts a worker.
    const status = await runCli(['engine', 'status', '--workspace', ws]);
    expect(status.stdout).toContain('synchronous_commit = off: intake and workers refuse this engine');
    expect(JSON.parse((await runCli(['engine', 'status', '--json', '--workspace', ws])).stdout)).toMatchObject({
      synchronous_commit: 'off',
      durable: false,
    });
  });

  it('with --allow-async-commit they start and warn loudly on stderr', async () => {
    const url = await database();
    const ws = workspace(await engineWorkspace(url));
    await asyncCommit(url);
    const r = await runCli(['worker', '--once', '--allow-async-commit', '--workspace', ws]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/maestro worker: WARNING: .*synchronous_commit = off.*exactly-once is NOT guaranteed/);
  });

  it('an engine with synchronous_commit on (local counts: the local WAL is flushed) starts without a word about it', async () => {
    const url = await database();
    const ws = workspace(await engineWorkspace(url));
    const name = new URL(url).pathname.slice(1);
    await query(url, `ALTER DATABASE "${name}" SET synchronous_commit = local`);
    const r = await runCli(['worker', '--once', '--workspace', ws]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toContain('synchronous_commit');
  });
});

/** Submits a command straight into the engine's queue, as an intake would. */
async function submitted(ws: string, url: string, runId: string, command: Record<string, unknown>): Promise<void> {
  const { PgEngine } = await import('../../src/adapters/pg/engine.js');
  const { PgQueue } = await import('../../src/adapters/pg/queue-intake.js');
  const engine = PgEngine.open(url);
  try {
    await new PgQueue(engine).submit({
      runId,
      workspaceId: `test:${ws}`,
      source: `${runId}.json`,
      body: JSON.stringify(command),
      inputHashes: {},
      floorAccept: [],
    });
  } finally {
    await engine.close();
  }
}

const ghost = {
  task_description: 'Review the rollout plan and list the risks',
  config: { max_rounds: 1, personas: ['coordinator', 'ghost'] },
};
const plain = { task_description: 'Review the rollout plan and list the risks', config: { max_rounds: 1 } };

describe('every command works on the engine', () => {
  it('status says which worker paused each paused run, and which were paused in the foreground', async () => {
    const url = await database();
    const ws = workspace(await engineWorkspace(url));
    await submitted(ws, url, 'R-worker-paused', ghost);
    const worker = await runCli(['worker', '--once', '--name', 'gpu-box-7', '--workspace', ws]);
    expect(worker.code, worker.stderr).toBe(0);
    await writeFile(path.join(ws, 'ghost.json'), JSON.stringify(ghost));
    const foreground = await runCli(['run', 'ghost.json', '--json'], { cwd: ws });
    expect(foreground.code, foreground.stderr).toBe(3);
    const foregroundId = JSON.parse(foreground.stdout).run_id as string;

    const status = await runCli(['status', '--workspace', ws]);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(/R-worker-paused .*paused by worker gpu-box-7 \(/);
    expect(status.stdout).toMatch(new RegExp(`${foregroundId} .*paused in the foreground \\(maestro run\\)`));
    const json = JSON.parse((await runCli(['status', '--json', '--workspace', ws])).stdout);
    expect(json.engine.paused.find((p: { run_id: string }) => p.run_id === 'R-worker-paused').paused_by).toMatchObject({
      name: 'gpu-box-7',
    });
  });

  it('run --resume takes a run interrupted on a worker (its worker died) and finishes it here, no model call repeated', async () => {
    const url = await database();
    const ws = workspace(await engineWorkspace(url));
    await submitted(ws, url, 'R-orphan', plain);
    const worker = started(startWorker(ws, 'doomed', { MAESTRO_OFFLINE_DELAY_MS: '400' }));
    // Killed once two model calls are in the engine (what a resume must not repeat), not after a guessed sleep.
    const recordedCalls = async (): Promise<number> =>
      (
        await query<{ n: number }>(
          url,
          `SELECT count(*)::int AS n FROM maestro_audit WHERE run_id = 'R-orphan' AND line LIKE '%"event":"MODEL_CALL"%'`,
        )
      )[0]?.n ?? 0;
    for (const deadline = Date.now() + 30_000; (await recordedCalls()) < 2; ) {
      if (Date.now() > deadline) throw new Error(`no two model calls recorded in 30 s:\n${worker.stderr}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    worker.kill('SIGKILL');
    await worker.exited;
    const before = await query<{ state: string }>(url, `SELECT state FROM maestro_queue WHERE run_id = 'R-orphan'`);
    expect(before).toEqual([{ state: 'running' }]); // left by a worker that is gone

    const resumed = await runCli(['run', '--resume', 'R-orphan', '--json'], { cwd: ws, timeoutMs: 60_000 });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ run_id: 'R-orphan', status: 'completed' });
    expect(await query(url, `SELECT state FROM maestro_queue WHERE run_id = 'R-orphan'`)).toEqual([{ state: 'done' }]);
    const ledger = await engineLedger(url);
    expect(ledger.repeatedSteps).toBe(0);
    expect(ledger.runs.find((r) => r.run_id === 'R-orphan')).toMatchObject({ finished: 1, artifacts: 1 });
    // The record of the resume names who resumed it, from where, as a resume on files does.
    const resumes = (
      await query<{ line: string }>(url, `SELECT line FROM maestro_audit WHERE run_id = 'R-orphan' AND line LIKE '%"event":"RUN_RESUMED"%'`)
    ).map((r) => JSON.parse(r.line) as { details?: Record<string, unknown> });
    expect(resumes.at(-1)?.details).toMatchObject({ resumed_by: os.userInfo().username, via: 'cli', from: os.hostname() });

    const again = await runCli(['run', '--resume', 'R-orphan'], { cwd: ws });
    expect(again.code).toBe(2);
    expect(again.stderr).not.toContain('internal error');
  }, 90_000);

  it('a run set aside (its workers died with it ten times) is listed as ended, and run --resume refuses it', async () => {
    const url = await database();
    const ws = workspace(await engineWorkspace(url));
    await submitted(ws, url, 'R-aside', plain);
    const { aPgRunState } = await import('../helpers/pg-engine.js');
    await query(url, `INSERT INTO maestro_runs (run_id, status, state) VALUES ('R-aside', 'running', $1::jsonb)`, [
      JSON.stringify({ ...aPgRunState('R-aside'), command: plain }),
    ]);
    // Nine workers died with it already; the tenth is gone too (no live session): the next look sets it aside.
    await query(
      url,
      `UPDATE maestro_queue SET state = 'running', owner = 'gone.1', stalls = 9, claimed_at = now() WHERE run_id = 'R-aside'`,
    );
    expect((await runCli(['worker', '--once', '--workspace', ws])).code).toBe(0);
    expect(await query(url, `SELECT state FROM maestro_queue WHERE run_id = 'R-aside'`)).toEqual([{ state: 'rejected' }]);

    const runs = JSON.parse((await runCli(['runs', '--json', '--workspace', ws])).stdout) as { run_id: string; status: string }[];
    expect(runs.find((r) => r.run_id === 'R-aside')?.status).toBe('error');
    const listed = (await runCli(['runs', '--workspace', ws])).stdout;
    expect(listed).not.toContain('interrupted');
    expect(listed).not.toContain('maestro run --resume R-aside');
    const resumed = await runCli(['run', '--resume', 'R-aside'], { cwd: ws });
    expect(resumed.code, resumed.stderr).toBe(2);
    expect(resumed.stdout).toContain('has already ended');
    expect(resumed.stdout).toContain('nothing to resume');
    expect(await query(url, `SELECT count(*)::int AS n FROM maestro_audit WHERE run_id = 'R-aside'`)).toEqual([{ n: 0 }]);
  }, 60_000);

  it('hitl decide continue --run resumes a paused run here, through the engine', async () => {
    const url = await database();
    const ws = workspace(await engineWorkspace(url));
    await writeFile(path.join(ws, 'ghost.json'), JSON.stringify(ghost));
    const paused = await runCli(['run', 'ghost.json', '--json'], { cwd: ws });
    expect(paused.code).toBe(3);
    const id = JSON.parse(paused.stdout).run_id as string;
    const decided = await runCli(['hitl', 'decide', id, 'continue', '--run', '--json'], { cwd: ws, timeoutMs: 60_000 });
    expect(decided.stderr).not.toMatch(/not available with an engine|internal error/);
    expect([0, 3, 4], decided.stderr).toContain(decided.code);
    const outcome = JSON.parse(decided.stdout);
    expect(outcome.run_id).toBe(id);
    const events = (await query<{ line: string }>(url, 'SELECT line FROM maestro_audit WHERE run_id = $1 ORDER BY seq', [id])).map(
      (r) => (JSON.parse(r.line) as { event: string }).event,
    );
    expect(events).toContain('HITL_DECIDED');
    expect(events.indexOf('HITL_DECIDED')).toBeLessThan(events.length - 1); // the run went on after the decision, here
    expect(await query(url, 'SELECT state, kind FROM maestro_queue WHERE run_id = $1', [id])).not.toEqual([
      { state: 'queued', kind: 'decision' },
    ]);
  }, 90_000);
});

describe('runs, show and audit prune read the engine', () => {
  it('lists, shows and prunes the runs kept in the engine as they do files', async () => {
    const url = await database();
    const ws = workspace(await engineWorkspace(url));
    await submitted(ws, url, 'R-done', { ...plain, task_description: 'Summarise the incident report for the on-call team' });
    await submitted(ws, url, 'R-paused', ghost);
    await submitted(ws, url, 'R-invalid', { config: { max_rounds: 1 } });
    expect((await runCli(['worker', '--once', '--workspace', ws])).code).toBe(0);

    const listed = await runCli(['runs', '--json', '--workspace', ws]);
    expect(listed.code, listed.stderr).toBe(0);
    const runs = JSON.parse(listed.stdout) as { run_id: string; status: string; task: string | null }[];
    expect(Object.fromEntries(runs.map((r) => [r.run_id, r.status]))).toEqual({
      'R-done': 'completed',
      'R-paused': 'paused',
      'R-invalid': 'invalid',
    });
    expect(runs.find((r) => r.run_id === 'R-done')?.task).toBe('Summarise the incident report for the on-call team');
    expect((await runCli(['runs', '--status', 'paused', '--workspace', ws])).stdout).toContain('R-paused');

    const shown = await runCli(['show', 'R-done', '--raw', '--workspace', ws]);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain('Summarise the incident report');
    const asJson = await runCli(['show', 'R-done', '--json', '--workspace', ws]);
    expect(asJson.code, asJson.stderr).toBe(0);
    expect(JSON.parse(asJson.stdout).orchestration).toMatchObject({ run_id: 'R-done', final_action: 'proceed' });
    const invalid = await runCli(['show', 'R-invalid', '--workspace', ws]);
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toContain('it ended invalid');
    expect((await runCli(['show', 'R-nowhere', '--workspace', ws])).stderr).toContain('there is no run "R-nowhere"');

    // Forty days later: the ended runs' logs and checkpoints go; the paused run keeps everything.
    await query(url, `UPDATE maestro_audit SET written_at = now() - interval '40 days'`);
    await query(url, `UPDATE maestro_queue SET delivered_at = now() WHERE state <> 'paused'`); // as the intake writes them back
    await query(
      url,
      `UPDATE maestro_runs SET state = jsonb_set(state, '{finished_at}', to_jsonb((now() - interval '40 days')::text)) WHERE status <> 'paused'`,
    );
    const dry = await runCli(['audit', 'prune', '--older-than', '30d', '--dry-run', '--workspace', ws]);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toMatch(/would delete 2 audit log\(s\) .*; 1 kept/);
    expect(dry.stdout).toContain('engine:audit/R-done');
    expect(dry.stdout).toMatch(/would delete the checkpoints .* of 1 ended run\(s\) .*R-done/);
    expect(await query(url, `SELECT DISTINCT run_id FROM maestro_audit ORDER BY run_id`)).toHaveLength(3);

    const pruned = await runCli(['audit', 'prune', '--older-than', '30d', '--workspace', ws]);
    expect(pruned.code, pruned.stderr).toBe(0);
    expect(await query(url, `SELECT DISTINCT run_id FROM maestro_audit ORDER BY run_id`)).toEqual([{ run_id: 'R-paused' }]);
    expect(await query(url, `SELECT run_id FROM maestro_runs ORDER BY run_id`)).toEqual([{ run_id: 'R-paused' }]);
    // The queue rows stay: a command submitted again after a crash is still known, and not run twice.
    expect(await query(url, `SELECT run_id FROM maestro_queue ORDER BY run_id`)).toHaveLength(3);
    expect((await runCli(['audit', 'verify', 'R-paused', '--workspace', ws])).code).toBe(0);
  }, 90_000);
});
