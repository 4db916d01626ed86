import { cp, mkdir, mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { dropCommand, ROOT, startIntake, startWorker } from '../../bench/pg-cluster.mjs';
import { spawnCli } from '../fakes/cli.js';
import { cliHere, engineWorkspace, query, useEngine } from '../helpers/engine.js';

// The suite's PostgreSQL (a database per workspace): the restart test has its own server (engine-restart.e2e.test.ts).
const { database, started, workspace } = useEngine();

const task = (text: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  task_description: text,
  config: { max_rounds: 1 },
  ...extra,
});

const listDir = async (dir: string): Promise<string[]> => (await readdir(dir).catch(() => [] as string[])).sort();

describe('maestro engine migrate', () => {
  it('creates the schema once (versioned), and a worker on an engine that was never migrated refuses with the fix', async () => {
    const url = await database();
    const ws = workspace(await mkdtemp(path.join(os.tmpdir(), 'maestro-engine-')));
    await cp(path.join(ROOT, 'personas'), path.join(ws, 'personas'), { recursive: true });
    const env = { MAESTRO_ENGINE_URL: url };

    const refused = await cliHere(['worker', '--once', '--workspace', ws], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('schema version 0, this maestro needs 2: run "maestro engine migrate" first');
    expect((await cliHere(['engine', 'status', '--workspace', ws], env)).code).toBe(1);

    const first = await cliHere(['engine', 'migrate', '--workspace', ws], env);
    expect(first.code).toBe(0);
    expect(first.stdout).toContain('migration 1:');
    expect(first.stdout).toContain('migration 2:');
    const again = await cliHere(['engine', 'migrate', '--workspace', ws], env);
    expect(again.stdout).toContain('(nothing to do)');
    expect(await query(url, 'SELECT version FROM maestro_migrations')).toEqual([{ version: 1 }, { version: 2 }]);
    expect((await cliHere(['engine', 'status', '--json', '--workspace', ws], env)).stdout).toContain('"ready":true');

    const noEngine = await cliHere(['worker', '--once', '--workspace', ws], { MAESTRO_ENGINE_URL: '' });
    expect(noEngine.code).toBe(2);
    expect(noEngine.stderr).toContain('this workspace has no engine');
    expect((await cliHere(['worker', '--workspace', ws], { MAESTRO_ENGINE_URL: 'mysql://x' })).stderr).toContain('must be a postgres://');
  }, 60_000);
});

describe('a worker that refuses to start', () => {
  it('on a broken workspace exits 2 at once, saying why and taking nothing', async () => {
    const url = await database();
    const ws = workspace(await engineWorkspace(url));
    await writeFile(path.join(ws, 'personas', 'broken.md'), '---\nid: [not closed\n---\n');
    // It exits by itself: a connection left open (its session, a LISTEN) would hold the process until
    // the spawn's limit kills it, and the exit code would not be 2. No wall clock is read: a busy machine is slow, not wrong.
    const refused = await spawnCli(['worker', '--once', '--workspace', ws], { timeoutMs: 25_000 });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('this workspace cannot run commands; nothing was taken');
  }, 30_000);
});

describe('an intake and workers on one engine', () => {
  it('runs dropped commands on the workers, writes the artifacts back, rejects the invalid, and keeps a verifiable audit log in the engine', async () => {
    const url = await database();
    const ws = workspace(await engineWorkspace(url));
    // The workers start beside the intake (they need only the engine), not after it.
    const intake = started(startIntake(ws));
    const workers = [started(startWorker(ws, 'a')), started(startWorker(ws, 'b'))];
    await intake.waitFor('the intake', (e) => e.kind === 'started');
    for (let i = 0; i < 4; i++) await dropCommand(ws, `c${i}.json`, task(`Review rollout plan ${i} and list the risks`));
    await dropCommand(ws, 'bad.json', { task_description: 5 });
    await intake.waitFor('five results', () => intake.events.filter((e) => e.kind === 'finished').length === 5);

    const results = intake.events.filter((e) => e.kind === 'finished');
    expect(
      results
        .filter((e) => e.status === 'completed')
        .map((e) => e.source)
        .sort(),
    ).toEqual(['c0.json', 'c1.json', 'c2.json', 'c3.json']);
    expect(results.find((e) => e.source === 'bad.json')).toMatchObject({ status: 'invalid', reason_code: expect.stringMatching(/^SPEC_/) });
    expect(await listDir(path.join(ws, 'outputs'))).toHaveLength(4);
    // Named with its run id, so the worker that rejected it said exactly where the intake moves it.
    const bad = `bad.${results.find((e) => e.source === 'bad.json')?.run_id}.json`;
    expect(await listDir(path.join(ws, '.maestro', 'rejected'))).toEqual([bad, `${bad}.error.json`]);
    const saidByWorker = workers.flatMap((w) => w.events).find((e) => e.kind === 'finished' && e.source === 'bad.json');
    expect(saidByWorker?.rejected_to).toBe(`${os.hostname()}:${ws}/.maestro/rejected/${bad}`);
    expect(results.find((e) => e.source === 'bad.json')?.rejected_to).toBe(path.join(ws, '.maestro', 'rejected', bad));
    expect(JSON.parse(await readFile(path.join(ws, '.maestro', 'rejected', `${bad}.error.json`), 'utf8')).issues.join('\n')).toContain(
      'task_description',
    );
    expect(await listDir(path.join(ws, 'commands'))).toEqual([]);
    expect(await listDir(path.join(ws, '.maestro', 'inflight'))).toEqual([]);
    // Both workers took work: the queue hands out commands to whichever is free.
    expect(workers.every((w) => w.events.some((e) => e.kind === 'claimed'))).toBe(true);
    // Nothing of the runs is in the workspace's files: the engine holds them.
    expect(await listDir(path.join(ws, '.maestro', 'audit'))).toEqual([]);

    const status = JSON.parse((await cliHere(['status', '--json', '--workspace', ws])).stdout) as {
      engine: { workers: { name: string }[]; queue: Record<string, number>; recent: { run_id: string; status: string }[] };
    };
    expect(status.engine.workers.map((w) => w.name).sort()).toEqual(['a', 'b']);
    expect(status.engine.queue).toMatchObject({ queued: 0, running: 0, done: 4, rejected: 1 });
    // The engine's runs are the recent runs (the workspace's files hold none of them).
    expect(status.engine.recent.map((r) => r.status).sort()).toEqual(['completed', 'completed', 'completed', 'completed', 'invalid']);
    const text = (await cliHere(['status', '--workspace', ws])).stdout;
    expect(text).toContain("recent     5 (newest first, the engine's runs with this workspace's)");
    for (const r of status.engine.recent) expect(text).toContain(r.run_id);

    const verified = await cliHere(['audit', 'verify', '--all', '--workspace', ws]);
    expect(verified.code).toBe(0);
    expect(verified.stdout).toContain('5 log(s): 5 OK');
    const out = await mkdtemp(path.join(os.tmpdir(), 'maestro-export-'));
    expect((await cliHere(['audit', 'export', '--all', '--out', out, '--workspace', ws])).code).toBe(0);
    expect((await listDir(out)).filter((n) => n.endsWith('.jsonl'))).toHaveLength(5);
    // The exported files are the chain itself: they verify as a workspace's files.
    const plain = workspace(await mkdtemp(path.join(os.tmpdir(), 'maestro-plain-')));
    await mkdir(path.join(plain, '.maestro'), { recursive: true });
    await cp(out, path.join(plain, '.maestro', 'audit'), { recursive: true });
    await writeFile(path.join(plain, 'maestro.config.json'), '{}\n');
    expect((await cliHere(['audit', 'verify', '--all', '--workspace', plain], { MAESTRO_ENGINE_URL: '' })).stdout).toContain(
      '5 log(s): 5 OK',
    );

    // An edit in the engine is caught like an edit in a file.
    const runId = String(results.find((e) => e.source === 'c0.json')?.run_id);
    await query(url, `UPDATE maestro_audit SET line = replace(line, '"layer":"validation"', '"layer":"queue"') WHERE run_id = $1`, [runId]);
    const tampered = await cliHere(['audit', 'verify', runId, '--workspace', ws]);
    expect(tampered.code).toBe(1);
    expect(tampered.stdout).toContain('edited');
    // Put back as it was, it verifies again (and the suite-wide invariant check sees the true log).
    await query(
      url,
      `UPDATE maestro_audit SET line = replace(line, '"layer":"queue","decision":"RUN","reason_code":"SPEC_OK"', '"layer":"validation","decision":"RUN","reason_code":"SPEC_OK"') WHERE run_id = $1`,
      [runId],
    );
    expect((await cliHere(['audit', 'verify', runId, '--workspace', ws])).code).toBe(0);
  }, 90_000);

  it('a pause on worker A, decided from the intake machine, resumes on worker B with no model call repeated', async () => {
    const url = await database();
    const ws = workspace(await engineWorkspace(url));
    const intake = started(startIntake(ws));
    const a = started(startWorker(ws, 'A'));
    await intake.waitFor('the intake', (e) => e.kind === 'started');
    await dropCommand(ws, 'risky.json', task('The requirements are unclear: decide the vendor'));
    await a.waitFor('A to take it', (e) => e.kind === 'claimed');
    // B starts while A runs (so its start-up is not waited for later); the run is A's already.
    const b = started(startWorker(ws, 'B'));
    const paused = await intake.waitFor('the pause', (e) => e.kind === 'finished');
    expect(paused).toMatchObject({ source: 'risky.json', status: 'paused' });
    const runId = String(paused.run_id);
    // Worker A ran it (its own report may reach us just after the intake's).
    expect(await a.waitFor("A's report", (e) => e.kind === 'finished')).toMatchObject({ run_id: runId, status: 'paused' });
    a.kill('SIGTERM');
    expect((await a.exited).code).toBe(0);

    const status = (await cliHere(['status', '--workspace', ws])).stdout;
    expect(status).toContain('paused     1 cluster-wide');
    expect(status).toContain(runId);
    const calls = async (): Promise<number> =>
      (
        await query<{ n: string }>(
          url,
          `SELECT count(*) AS n FROM maestro_audit WHERE run_id = $1 AND line LIKE '%"event":"MODEL_CALL"%'`,
          [runId],
        )
      )[0]?.n as unknown as number;
    const before = Number(await calls());
    expect(before).toBeGreaterThan(0);

    await b.waitFor('worker B', (e) => e.kind === 'started');
    const decided = await cliHere(['hitl', 'decide', runId, 'continue', '--workspace', ws]);
    expect(decided.code).toBe(0);
    expect(decided.stdout).toContain('queued in the engine');

    const done = await intake.waitFor('the resumed run', (e) => e.kind === 'finished' && e.run_id === runId && e.status !== 'paused');
    expect(done.status).toBe('completed');
    expect(b.events.find((e) => e.kind === 'claimed')).toMatchObject({ run_id: runId, resume: 'decision' });
    expect(Number(await calls())).toBe(before);
    expect(await listDir(path.join(ws, 'outputs'))).toHaveLength(1);
    const events = (await query<{ line: string }>(url, 'SELECT line FROM maestro_audit WHERE run_id = $1 ORDER BY seq', [runId])).map(
      (r) => (JSON.parse(r.line) as { event: string }).event,
    );
    expect(events).toEqual(expect.arrayContaining(['HITL_REQUESTED', 'HITL_DECIDED', 'RUN_RESUMED', 'RUN_FINISHED']));
    expect((await cliHere(['audit', 'verify', runId, '--workspace', ws])).code).toBe(0);
  }, 90_000);

  it("a worker whose copy of an input differs from the intake's pauses the run with the reason", async () => {
    const url = await database();
    const ws = workspace(await engineWorkspace(url));
    await writeFile(path.join(ws, 'plan.md'), '# Plan\nMove the billing service on Monday.\n');
    // The worker's machine: the same personas and config, but another copy of plan.md.
    const remote = workspace(await mkdtemp(path.join(os.tmpdir(), 'maestro-remote-')));
    await cp(path.join(ws, 'personas'), path.join(remote, 'personas'), { recursive: true });
    await cp(path.join(ws, 'maestro.config.json'), path.join(remote, 'maestro.config.json'));
    await writeFile(path.join(remote, 'plan.md'), '# Plan\nMove the billing service on Friday.\n');
    const intake = started(startIntake(ws));
    started(startWorker(remote, 'remote'));
    await intake.waitFor('the intake', (e) => e.kind === 'started');
    await dropCommand(ws, 'review.json', task('Review the plan in plan.md and list the risks', { input_artifacts: ['plan.md'] }));
    const paused = await intake.waitFor('the pause', (e) => e.kind === 'finished');
    expect(paused.status).toBe('paused');
    const shown = await cliHere(['hitl', 'show', String(paused.run_id), '--json', '--workspace', ws]);
    const pause = (JSON.parse(shown.stdout) as { pause: { layer: string; message: string } }).pause;
    expect(pause.layer).toBe('consistency');
    expect(pause.message).toContain('plan.md');
    expect(pause.message).toContain("differs from the intake's copy");
    expect(await query(url, 'SELECT count(*)::int AS n FROM maestro_audit WHERE line LIKE \'%"event":"MODEL_CALL"%\'')).toEqual([{ n: 0 }]);
  }, 60_000);

  it("the floor's acceptances are the intake workspace's, carried with the command, not the worker's own config", async () => {
    const url = await database();
    const ws = workspace(await engineWorkspace(url));
    // The worker's machine: the same personas, but a config that accepts changes to systems.
    const remote = workspace(await mkdtemp(path.join(os.tmpdir(), 'maestro-remote-')));
    await cp(path.join(ws, 'personas'), path.join(remote, 'personas'), { recursive: true });
    const config = JSON.parse(await readFile(path.join(ws, 'maestro.config.json'), 'utf8')) as Record<string, unknown>;
    await writeFile(
      path.join(remote, 'maestro.config.json'),
      JSON.stringify({ ...config, floor: { accept: [{ risk: 'change_system' }] } }),
    );
    const intake = started(startIntake(ws));
    started(startWorker(remote, 'remote'));
    await intake.waitFor('the intake', (e) => e.kind === 'started');
    await dropCommand(ws, 'merge.json', { task_description: 'Merge the PR into main' });
    const paused = await intake.waitFor('the pause', (e) => e.kind === 'finished');
    expect(paused).toMatchObject({ status: 'paused', reason_code: 'ACC_EXTERNAL_SIDE_EFFECT_REQUIRES_HITL' });
    const lines = await query<{ line: string }>(url, 'SELECT line FROM maestro_audit WHERE run_id = $1', [String(paused.run_id)]);
    expect(lines.map((r) => r.line).join('\n')).not.toContain('accepted_by":["change_system');
    expect(await query(url, 'SELECT count(*)::int AS n FROM maestro_audit WHERE line LIKE \'%"event":"MODEL_CALL"%\'')).toEqual([{ n: 0 }]);
  }, 60_000);
});
