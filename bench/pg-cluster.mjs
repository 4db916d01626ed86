// A workspace, an intake (`maestro watch`) and N workers (`maestro worker`) on one PostgreSQL engine,
// as child processes of the built CLI: shared by the engine's end-to-end tests and `npm run bench -- pg`.
import { spawn, spawnSync } from 'node:child_process';
import { cp, mkdir, mkdtemp, readdir, rename, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const CLI = path.join(ROOT, 'bin', 'maestro.js');

/** A child `maestro` process whose --json events are kept as they arrive (with the time they did). */
export class Proc {
  constructor(args, env = {}) {
    this.args = args;
    this.events = [];
    this.stderr = '';
    this.listeners = new Set();
    this.child = spawn(process.execPath, [CLI, ...args], {
      env: { ...process.env, NO_COLOR: '1', CI: '1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let buffer = '';
    this.child.stdout.setEncoding('utf8').on('data', (chunk) => {
      const at = performance.now();
      buffer += chunk;
      const lines = buffer.split('\n');
      buffer = lines.pop() ?? '';
      for (const line of lines) {
        if (!line.startsWith('{')) continue;
        const event = { ...JSON.parse(line), at };
        this.events.push(event);
        for (const l of this.listeners) l(event);
      }
    });
    this.child.stderr.setEncoding('utf8').on('data', (d) => (this.stderr += d));
    this.exited = new Promise((resolve) => this.child.on('exit', (code, signal) => resolve({ code, signal })));
  }

  get alive() {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  waitFor(what, predicate, timeoutMs = 60_000) {
    const found = this.events.find(predicate);
    if (found) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.listeners.delete(listener);
        reject(new Error(`timed out waiting for ${what} (maestro ${this.args.join(' ')})\n${this.stderr.slice(-2000)}`));
      }, timeoutMs);
      const listener = (e) => {
        if (!predicate(e)) return;
        clearTimeout(timer);
        this.listeners.delete(listener);
        resolve(e);
      };
      this.listeners.add(listener);
    });
  }

  kill(signal) {
    if (this.alive) this.child.kill(signal);
  }

  async dispose() {
    this.kill('SIGKILL');
    await this.exited;
  }
}

/** Runs the CLI to the end; returns { code, stdout, stderr }. */
export function cli(args, env = {}) {
  const r = spawnSync(process.execPath, [CLI, ...args], { env: { ...process.env, NO_COLOR: '1', CI: '1', ...env }, encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/**
 * A workspace with the default personas whose engine is `url` (in its config), migrated. `run` runs
 * the CLI (default: a child process; the tests run it in their own process, which is cheaper).
 */
export async function engineWorkspace(url, prefix = 'maestro-engine-', run = cli) {
  const ws = await mkdtemp(path.join(os.tmpdir(), prefix));
  await cp(path.join(ROOT, 'personas'), path.join(ws, 'personas'), { recursive: true });
  await mkdir(path.join(ws, 'commands'));
  await writeFile(path.join(ws, 'maestro.config.json'), `${JSON.stringify({ engine: { url } }, null, 2)}\n`);
  const migrated = await run(['engine', 'migrate', '--workspace', ws]);
  if (migrated.code !== 0) throw new Error(`engine migrate failed: ${migrated.stderr}`);
  return ws;
}

export async function dropCommand(ws, name, command) {
  const temp = path.join(ws, `.drop-${name}-${process.pid}-${Math.random().toString(16).slice(2)}`);
  await writeFile(temp, typeof command === 'string' ? command : JSON.stringify(command));
  await rename(temp, path.join(ws, 'commands', name));
}

export function startWorker(ws, name, env = {}) {
  return new Proc(['worker', '--json', '--name', name, '--workspace', ws], env);
}

export function startIntake(ws, flags = [], env = {}) {
  return new Proc(['watch', '--json', '--workspace', ws, ...flags], env);
}

/**
 * What the engine says about every run: how many times each one-time effect was recorded (a run
 * done twice would show 2), the model-call steps recorded more than once, and the queue's states.
 */
export async function engineLedger(url) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const effects = await client.query(`
      SELECT run_id,
             count(*) FILTER (WHERE line LIKE '%"event":"RUN_FINISHED"%') AS finished,
             count(*) FILTER (WHERE line LIKE '%"event":"ARTIFACT_WRITTEN"%') AS artifacts,
             count(*) FILTER (WHERE line LIKE '%"event":"SESSIONS_SAVED"%') AS sessions,
             count(*) FILTER (WHERE line LIKE '%"event":"COMMAND_RECEIVED"%') AS received
        FROM maestro_audit GROUP BY run_id`);
    const steps = await client.query(`
      SELECT run_id, (line::jsonb)->'details'->>'step' AS step, count(*) AS n
        FROM maestro_audit WHERE line LIKE '%"event":"MODEL_CALL"%' AND (line::jsonb)->'details' ? 'step'
       GROUP BY 1, 2 HAVING count(*) > 1`);
    const queue = await client.query(`SELECT state, count(*) AS n, sum(claims) AS claims FROM maestro_queue GROUP BY state`);
    const memory = await client.query(`SELECT persona_id, jsonb_array_length(state->'runs') AS runs FROM maestro_sessions`);
    return {
      runs: effects.rows.map((r) => ({
        run_id: r.run_id,
        finished: Number(r.finished),
        artifacts: Number(r.artifacts),
        sessions: Number(r.sessions),
        received: Number(r.received),
      })),
      repeatedSteps: steps.rows.length,
      queue: Object.fromEntries(queue.rows.map((r) => [r.state, { n: Number(r.n), claims: Number(r.claims) }])),
      memory: Object.fromEntries(memory.rows.map((r) => [r.persona_id, Number(r.runs)])),
    };
  } finally {
    await client.end();
  }
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * The soak: `commands` commands through an intake and `workers` workers; `kills` times, a worker that
 * is in the middle of a run is killed with SIGKILL and a new one started in its place. Returns what
 * was lost, what was done twice, and whether every audit chain verifies. `run` runs the one-shot
 * commands (migrate, verify): a child process unless the caller runs them in its own.
 */
export async function runSoak({ url, commands, workers, kills, delayMs = 20, log = () => undefined, run = cli }) {
  const ws = await engineWorkspace(url, 'maestro-soak-', run);
  const env = { MAESTRO_OFFLINE_DELAY_MS: String(delayMs) };
  const intake = startIntake(ws);
  const pool = [];
  let spawned = 0;
  const spawnWorker = () => {
    spawned += 1;
    return startWorker(ws, `w${spawned}`, env);
  };
  try {
    // The workers start beside the intake: they need only the engine.
    for (let i = 0; i < workers; i++) pool.push(spawnWorker());
    await intake.waitFor('the intake to start', (e) => e.kind === 'started');
    const started = performance.now();
    for (let i = 0; i < commands; i++)
      await dropCommand(ws, `soak-${String(i).padStart(4, '0')}.json`, {
        task_description: `Review rollout plan ${i} of the soak and list the risks`,
        config: { max_rounds: 1 },
      });
    const finished = () => new Set(intake.events.filter((e) => e.kind === 'finished').map((e) => e.source)).size;
    let killed = 0;
    // Kills spread over the first two thirds of the expected work, each one aimed at a worker mid-run.
    while (killed < kills && finished() < commands) {
      await sleep(100 + Math.random() * 400);
      const busy = pool
        .map((w, i) => ({ w, i }))
        .filter(({ w }) => {
          const last = w.events.filter((e) => e.kind === 'claimed' || e.kind === 'finished').at(-1);
          return w.alive && last?.kind === 'claimed';
        });
      const victim = busy[Math.floor(Math.random() * busy.length)];
      if (!victim) continue;
      victim.w.kill('SIGKILL');
      await victim.w.exited;
      killed += 1;
      log(`kill -9 #${killed}: ${victim.w.args[3]} (mid-run), replaced`);
      pool[victim.i] = spawnWorker();
    }
    await intake.waitFor(`all ${commands} commands to come back`, () => finished() >= commands, 600_000);
    const durationMs = performance.now() - started;
    const results = intake.events.filter((e) => e.kind === 'finished');
    const verify = await run(['audit', 'verify', '--all', '--workspace', ws]);
    const ledger = await engineLedger(url);
    const outputs = await readdir(path.join(ws, 'outputs')).catch(() => []);
    const completed = results.filter((e) => e.status === 'completed').length;
    return {
      ws,
      commands,
      workers,
      kills: killed,
      durationMs,
      completed,
      outputs: outputs.length,
      lost: commands - new Set(results.map((e) => e.source)).size,
      notCompleted: results.filter((e) => e.status !== 'completed').map((e) => `${e.source}: ${e.status} ${e.reason_code} ${e.message}`),
      runTwice: ledger.runs.filter((r) => r.finished > 1 || r.artifacts > 1 || r.sessions > 1).length,
      // A worker killed before the run's first checkpoint: the next one starts it again (one more COMMAND_RECEIVED, no effect twice).
      restartedFromStart: ledger.runs.filter((r) => r.received > 1).length,
      repeatedSteps: ledger.repeatedSteps,
      resumedRuns: ledger.queue.done ? ledger.queue.done.claims - ledger.queue.done.n : 0,
      auditVerified: verify.code === 0,
      auditSummary: verify.stdout.trim().split('\n').at(-1),
      memory: ledger.memory,
    };
  } finally {
    for (const w of pool) w.kill('SIGTERM');
    intake.kill('SIGTERM');
    await Promise.all([
      ...pool.map((w) => Promise.race([w.exited, sleep(5000).then(() => w.dispose())])),
      Promise.race([intake.exited, sleep(5000).then(() => intake.dispose())]),
    ]);
  }
}

export async function removeWorkspace(ws) {
  await rm(ws, { recursive: true, force: true });
}
