// `npm run bench -- own-time`: issue 36. maestro's own time per run — what a run takes beyond the time
// the model holds its requests — with a model that answers after LATENCY ms and at zero latency, one
// run at a time, in each mode; and --concurrency 4 at LATENCY against the ideal. The server (the one of
// the concurrency bench) notes when it held each request; a run's own time is its share of the wall
// time during which the server held none. Each process starts on a workspace in use: the personas'
// memory of a warm-up drain, past its token budget. The first two runs of each process are left out
// and the first one's own time is shown apart: it loads modules, and its save loads the tokenizer.
// From a fresh workspace instead, the tokenizer's one load (about 0.5 s of CPU) lands on whichever
// later run first crosses the memory budget, inside the measured window.
//
// BENCH_BUILDS="name=path/to/bin/maestro.js,…": those builds instead of this checkout, interleaved in
// every repetition, each against the first (a before/after in one run); printed, not written.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { machine, percentile, writeSection } from './report.mjs';
import { drain, server } from './concurrency.bench.mjs';
import { CLI } from './report.mjs';

const LATENCY = Number(process.env.BENCH_CONC_LATENCY_MS ?? 300);
const REPS = Number(process.env.BENCH_REPS ?? 2);
const MODES = (process.env.BENCH_CONC_MODES ?? 'default,round_robin,parallel,hierarchical').split(',');
/** Commands per process at LATENCY and at zero latency (0: not measured). */
const SLOW = Number(process.env.BENCH_OWN_SLOW ?? 7);
const FAST = Number(process.env.BENCH_OWN_FAST ?? 16);
const REQUESTS_PER_RUN = 8;
/** BENCH_OWN_C4=0: no --concurrency 4 drain. */
const C4 = process.env.BENCH_OWN_C4 !== '0';
const BUILDS = (process.env.BENCH_BUILDS ?? `this=${CLI}`).split(',').map((b) => {
  const [name, cli] = b.split('=');
  return { name, cli };
});

/** How long the server held at least one request between `from` and `to` (ms). */
function busy(log, from, to) {
  const spans = log
    .map((r) => [Math.max(r.arrived, from), Math.min(r.sent, to)])
    .filter(([a, b]) => b > a)
    .sort((x, y) => x[0] - y[0]);
  let held = 0;
  let end = Number.NEGATIVE_INFINITY;
  for (const [a, b] of spans) {
    if (b <= end) continue;
    held += b - Math.max(a, end);
    end = b;
  }
  return held;
}

/** Runs left out at the start of each process (see above). */
const SKIP = 2;
/** Runs of the warm-up drain whose memory each measured process starts with. */
const WARM = Number(process.env.BENCH_OWN_WARM ?? 8);

/**
 * The runs of a drain after the first SKIP, one at a time: wall time and own time per run (ms). The
 * window opens when the last run left out has sent its last reply (its requests are those before the
 * next claim: a run's calls are over before the next is claimed, in any build) and closes at the
 * last `finished`.
 */
async function perRun(srv, latency, mode, cli, commands, memory) {
  srv.reset(latency);
  const { events } = await drain(srv.url, 1, mode, { cli, commands, memory });
  const next = events.filter((e) => e.kind === 'claimed')[SKIP];
  const from = Math.max(...srv.state.log.filter((r) => r.arrived < next.at).map((r) => r.sent));
  const last = events.filter((e) => e.kind === 'finished').at(-1);
  const runs = commands - SKIP;
  const wall = (last.at - from) / runs;
  const claimed = events.find((e) => e.kind === 'claimed');
  const firstAt = events.find((e) => e.kind === 'finished').at;
  const firstOwn = firstAt - claimed.at - busy(srv.state.log, claimed.at, firstAt);
  return { wall, own: wall - busy(srv.state.log, from, last.at) / runs, cpu: (last.cpu - next.cpu) / runs, firstOwn };
}

/** A `session_states/` folder past the memory budget: what WARM runs of `mode` leave behind. */
async function warmMemory(srv, mode, cli) {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'maestro-bench-memory-'));
  srv.reset(0);
  await drain(srv.url, 1, mode, { cli, commands: WARM, keepMemory: path.join(dir, 'session_states') });
  return path.join(dir, 'session_states');
}

const median = (xs) =>
  percentile(
    [...xs].sort((a, b) => a - b),
    50,
  );

export default async function bench() {
  const srv = await server();
  const results = new Map(); // `${what}|${mode}` → build name → values
  const note = (what, mode, build, value) => {
    const key = `${what}|${mode}`;
    if (!results.has(key)) results.set(key, new Map());
    const byBuild = results.get(key);
    byBuild.set(build, [...(byBuild.get(build) ?? []), value]);
  };
  for (let rep = 0; rep < REPS; rep++) {
    const order = rep % 2 === 0 ? BUILDS : [...BUILDS].reverse();
    for (const mode of MODES) {
      const memory = await warmMemory(srv, mode, BUILDS[0].cli);
      for (const [latency, commands] of [
        [LATENCY, SLOW],
        [0, FAST],
      ].filter(([, n]) => n > SKIP)) {
        for (const b of order) {
          const r = await perRun(srv, latency, mode, b.cli, commands, memory);
          note(`first run's own ms at ${latency} ms`, mode, b.name, r.firstOwn);
          note(`own ms per run at ${latency} ms`, mode, b.name, r.own);
          note(`own share at ${latency} ms`, mode, b.name, r.own / r.wall);
          note(`wall ms per run at ${latency} ms`, mode, b.name, r.wall);
          note(`CPU ms per run at ${latency} ms`, mode, b.name, r.cpu);
          console.log(
            `${b.name} ${mode} @${latency} ms: ${r.wall.toFixed(1)} ms a run, own ${r.own.toFixed(1)} ms, CPU ${r.cpu.toFixed(0)} ms, first run own ${r.firstOwn.toFixed(0)} ms`,
          );
        }
      }
      await rm(path.dirname(memory), { recursive: true, force: true });
    }
    for (const b of C4 ? order : []) {
      srv.reset(LATENCY);
      const { wall } = await drain(srv.url, 4, 'default', { cli: b.cli, commands: 16 });
      note('--concurrency 4 ÷ ideal', 'default', b.name, wall / ((16 * REQUESTS_PER_RUN * LATENCY) / 1000 / 4));
      console.log(`${b.name} --concurrency 4: ${wall.toFixed(2)} s`);
    }
  }
  await srv.close();
  const first = BUILDS[0].name;
  const fmt = (what, v) =>
    what.includes('share') ? `${(v * 100).toFixed(2)} %` : what.includes('÷') ? `${v.toFixed(2)} ×` : `${v.toFixed(1)}`;
  const rows = [...results].map(([key, byBuild]) => {
    const [what, mode] = key.split('|');
    const base = median(byBuild.get(first));
    const cells = BUILDS.map((b) => {
      const m = median(byBuild.get(b.name));
      return b.name === first || what.includes('share') ? fmt(what, m) : `${fmt(what, m)} (${(m / base).toFixed(2)} ×)`;
    });
    return `| ${what} | ${mode} | ${cells.join(' | ')} |`;
  });
  const body = [
    `Machine: ${machine()} (shared with other jobs: compare ratios, not milliseconds).`,
    `Command: \`npm run bench -- own-time\` (bench/own-time.bench.mjs). One \`maestro watch --once --concurrency 1\` per mode drains ${SLOW} commands answered after ${LATENCY} ms a request, then ${FAST} at zero latency, by a local chat-completions server on 127.0.0.1 (\`{"config": {"max_rounds": 1}}\`, 3 personas), each process on a workspace whose personas' memory is what ${WARM} earlier runs of the mode left (past its token budget, as in a workspace in use); the first ${SKIP} runs of each process are left out of the per-run figures (module loading; the tokenizer's one load at the first save) and the first run's own time is shown apart. Own time: the measured runs' wall time (the last reply of the runs left out → the last \`finished\`) minus the time the server held one of their requests, per run; CPU: the process's CPU time (every thread, /proc, 10 ms ticks) from the first measured run's claim to the last \`finished\`, per run. --concurrency 4: 16 commands × ${REQUESTS_PER_RUN} requests at ${LATENCY} ms, started → last finished, against (serial model time ÷ 4). Medians of ${REPS} repetitions${BUILDS.length > 1 ? ', builds interleaved' : ''}.`,
    '',
    `| measure | mode | ${BUILDS.map((b) => b.name).join(' | ')} |`,
    `|---|---|${BUILDS.map(() => '---|').join('')}`,
    ...rows,
  ].join('\n');
  console.log(body);
  if (!process.env.BENCH_BUILDS) await writeSection("maestro's own time per run (a model at 300 ms a call, and at zero latency)", body);
}
