// `npm run bench -- concurrency`: issue 24. One `maestro watch --once --concurrency N` drains 16 queued
// commands (8 requests each at the server: the mediator's classification, 3 turns, 3 verdicts, the
// synthesis) against a local chat-completions server that answers after LATENCY ms. The server counts
// the requests it holds at once; the route's max_concurrency caps them. Concurrency 1, 4 and 8 are
// interleaved (the machine is shared and noisy): compare the ratios to the ideal, not the seconds.
// Then, at zero latency and concurrency 1, the per-run head (claimed → first request at the server),
// what a run holds up after its last call (last reply sent → the next command claimed), and its
// whole tail (last reply sent → finished: its memory, pictures and last records, written beside the
// next run's calls).
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { CLI, completionBody, instantContent, machine, percentile, ROOT, writeSection } from './report.mjs';

const COMMANDS = Number(process.env.BENCH_CONC_COMMANDS ?? 16);
const LATENCY = Number(process.env.BENCH_CONC_LATENCY_MS ?? 300);
const REPS = Number(process.env.BENCH_REPS ?? 2);
const LEVELS = [1, 4, 8];
const MAX_CONCURRENCY = 6;
const REQUESTS_PER_RUN = 8;

/** A chat-completions server answering after `latency` ms; counts requests in hand and notes when each came and went. */
export function server() {
  const state = { latency: 0, inFlight: 0, peak: 0, log: [] };
  const srv = http.createServer((req, res) => {
    const arrived = performance.now();
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      state.inFlight += 1;
      state.peak = Math.max(state.peak, state.inFlight);
      const json = JSON.parse(body);
      const content = instantContent(json, 'A short, useful reply from the council member.');
      const classify = String(json.messages?.[0]?.content ?? '').startsWith('You read tasks');
      setTimeout(() => {
        const payload = completionBody(json.model, content);
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(payload), () => {
          state.inFlight -= 1;
          state.log.push({ arrived, sent: performance.now(), classify });
        });
      }, state.latency);
    });
  });
  return new Promise((resolve) =>
    srv.listen(0, '127.0.0.1', () =>
      resolve({
        url: `http://127.0.0.1:${srv.address().port}/v1`,
        state,
        reset(latency) {
          Object.assign(state, { latency, inFlight: 0, peak: 0, log: [] });
        },
        close: () => new Promise((r) => srv.close(r)),
      }),
    ),
  );
}

/** The modes the per-run head and tail are measured in: the workspace's default (no mode named), and named ones. */
const HEAD_TAIL_MODES = (process.env.BENCH_CONC_MODES ?? 'default,round_robin,parallel,hierarchical').split(',');

async function workspace(url, mode = 'default', commands = COMMANDS, memory = undefined) {
  const ws = await mkdtemp(path.join(os.tmpdir(), 'maestro-bench-conc-'));
  await cp(path.join(ROOT, 'personas'), path.join(ws, 'personas'), { recursive: true });
  if (memory) await cp(memory, path.join(ws, 'session_states'), { recursive: true });
  await mkdir(path.join(ws, 'commands'));
  const local = { provider: 'openai', model: 'bench', base_url: url, max_retries: 0, max_concurrency: MAX_CONCURRENCY };
  await writeFile(path.join(ws, 'maestro.config.json'), JSON.stringify({ default_route: 'local', routes: { local } }));
  for (let i = 0; i < commands; i++) {
    const config = { max_rounds: 1, ...(mode === 'default' ? {} : { mode }) };
    const command = { task_description: `Benchmark task ${i}: review rollout step ${i} and list the risks`, config };
    await writeFile(path.join(ws, 'commands', `${String(i).padStart(3, '0')}.json`), JSON.stringify(command));
  }
  return ws;
}

/** The CPU time a process has used so far, every thread (ms; Linux's /proc, in clock ticks of 10 ms); NaN elsewhere. */
function cpuMs(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return Number.NaN;
  }
}

/**
 * Drains a queue of `commands` with one watcher (the build at `cli`); wall time from its `started`
 * event to its last `finished` one. `memory`: a `session_states/` folder the workspace starts with;
 * `keepMemory`: where to copy the workspace's `session_states/` when the drain is over.
 */
export async function drain(url, concurrency, mode = 'default', { cli = CLI, commands = COMMANDS, memory, keepMemory } = {}) {
  const ws = await workspace(url, mode, commands, memory);
  const events = [];
  const child = spawn(process.execPath, [cli, 'watch', '--once', '--json', '--concurrency', String(concurrency), '--workspace', ws], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, NO_COLOR: '1' },
  });
  let buffer = '';
  child.stdout.setEncoding('utf8').on('data', (chunk) => {
    const at = performance.now();
    buffer += chunk;
    const lines = buffer.split('\n');
    buffer = lines.pop() ?? '';
    for (const line of lines) if (line.startsWith('{')) events.push({ ...JSON.parse(line), at, cpu: cpuMs(child.pid) });
  });
  const code = await new Promise((resolve) => child.on('exit', resolve));
  if (keepMemory) await cp(path.join(ws, 'session_states'), keepMemory, { recursive: true });
  await rm(ws, { recursive: true, force: true });
  const finished = events.filter((e) => e.kind === 'finished');
  const bad = finished.filter((e) => e.status !== 'completed');
  if (code !== 0 || finished.length !== commands || bad.length > 0) {
    throw new Error(
      `watch --concurrency ${concurrency} (${mode}): exit ${code}, ${finished.length} finished, ${bad.length} not completed (${bad.map((e) => `${e.status} ${e.reason_code}`).join(', ')})`,
    );
  }
  const start = events.find((e) => e.kind === 'started').at;
  return { wall: (finished.at(-1).at - start) / 1000, events };
}

/**
 * Per run at concurrency 1: claimed → its first request (head), its last reply → the next command
 * claimed (after: what the run holds the watcher up after its last call), its last reply → its
 * `finished` event (tail: all it writes, most of it beside the next run's calls), and its last reply →
 * the next run's first request (gap: how long the next call waits, after + the next head). A
 * request belongs to the last run claimed before it arrived: at concurrency 1 a run's calls are
 * over before the next run is claimed, while its tail (memory, last records) may still be written.
 */
function headsAndTails(events, log) {
  const claimed = events.filter((e) => e.kind === 'claimed');
  const finished = new Map(events.filter((e) => e.kind === 'finished').map((e) => [e.run_id, e.at]));
  const runs = claimed.map((c) => ({ claimed: c.at, finished: finished.get(c.run_id), first: Infinity, last: -Infinity }));
  for (const r of log) {
    let i = -1;
    for (let k = 0; k < claimed.length; k++) if (claimed[k].at <= r.arrived + 1) i = k;
    if (i < 0) continue;
    runs[i].first = Math.min(runs[i].first, r.arrived);
    runs[i].last = Math.max(runs[i].last, r.sent);
  }
  const heads = [];
  const tails = [];
  const gaps = [];
  const afters = [];
  runs.forEach((run, i) => {
    if (!Number.isFinite(run.first)) return;
    if (i === 0) return; // the first run of a process pays for loading modules
    heads.push(run.first - run.claimed);
    if (run.finished !== undefined) tails.push(run.finished - run.last);
    const next = runs[i + 1];
    if (next && Number.isFinite(next.first)) gaps.push(next.first - run.last);
    if (next) afters.push(next.claimed - run.last);
  });
  return { heads, tails, gaps, afters };
}

/** Head, tail and gap per mode at zero latency, one run at a time; modes interleaved over the repetitions. */
async function headTailByMode(srv) {
  const KEYS = ['heads', 'afters', 'tails', 'gaps'];
  const byMode = new Map(HEAD_TAIL_MODES.map((m) => [m, Object.fromEntries(KEYS.map((k) => [k, []]))]));
  for (let rep = 0; rep < REPS; rep++) {
    for (const mode of rep % 2 === 0 ? HEAD_TAIL_MODES : [...HEAD_TAIL_MODES].reverse()) {
      srv.reset(0);
      const { events } = await drain(srv.url, 1, mode);
      const ht = headsAndTails(events, srv.state.log);
      const into = byMode.get(mode);
      for (const key of KEYS) into[key].push(...ht[key]);
    }
  }
  for (const v of byMode.values()) for (const key of KEYS) v[key].sort((a, b) => a - b);
  return byMode;
}

/** The paragraphs written by hand below the generated table (after HAND_WRITTEN in BENCHMARKS.md): kept as they are. */
const HAND_WRITTEN = '<!-- written by hand below: kept when the bench rewrites this section -->';
async function handWritten() {
  const text = await readFile(path.join(ROOT, 'BENCHMARKS.md'), 'utf8').catch(() => '');
  const start = text.indexOf('## Issue 24: concurrent runs with route limits\n');
  if (start === -1) return '';
  const next = text.indexOf('\n## ', start + 10);
  const section = text.slice(start, next === -1 ? undefined : next);
  const at = section.indexOf(HAND_WRITTEN);
  return at === -1 ? '' : section.slice(at + HAND_WRITTEN.length).trim();
}

const fmt = (ms) => `${ms.toFixed(1)} ms`;

export default async function bench() {
  const srv = await server();
  const results = new Map(LEVELS.map((n) => [n, []]));
  for (let rep = 0; rep < REPS; rep++) {
    for (const n of rep % 2 === 0 ? LEVELS : [...LEVELS].reverse()) {
      srv.reset(LATENCY);
      const { wall } = await drain(srv.url, n);
      const requests = srv.state.log.length;
      results.get(n).push({ wall, peak: srv.state.peak, requests });
      console.log(`concurrency ${n}: ${wall.toFixed(2)} s, peak ${srv.state.peak} in flight, ${requests} requests`);
    }
  }
  const serialIdeal = (COMMANDS * REQUESTS_PER_RUN * LATENCY) / 1000;
  // The measured serial time (best at concurrency 1): against it, N runs at once show how they scale,
  // whatever a run costs around its calls on this machine.
  const serialBest = Math.min(...results.get(1).map((r) => r.wall));
  const rows = LEVELS.map((n) => {
    const runs = results.get(n);
    const best = Math.min(...runs.map((r) => r.wall));
    const ideal = serialIdeal / Math.min(n, MAX_CONCURRENCY);
    const peak = Math.max(...runs.map((r) => r.peak));
    const scaled = serialBest / Math.min(n, MAX_CONCURRENCY);
    return `| ${n} | ${runs.map((r) => r.wall.toFixed(2)).join(' / ')} s | ${(serialIdeal / n).toFixed(2)} s | ${(best / (serialIdeal / n)).toFixed(2)} × | ${(best / ideal).toFixed(2)} × (÷ ${Math.min(n, MAX_CONCURRENCY)}) | ${(best / scaled).toFixed(2)} × | ${peak} / ${MAX_CONCURRENCY} | ${runs[0].requests} |`;
  });
  // Zero latency, one run at a time: what a run costs around its calls, in each mode.
  const byMode = await headTailByMode(srv);
  await srv.close();
  const body = [
    `Machine: ${machine()} (shared with other jobs: compare ratios, not seconds).`,
    `Command: \`npm run bench -- concurrency\` (bench/concurrency.bench.mjs). ${COMMANDS} commands queued before \`maestro watch --once --concurrency N\` starts, each \`{"config": {"max_rounds": 1}}\` = ${REQUESTS_PER_RUN} requests at the server (the mediator's classification, 3 turns, 3 verdicts, the synthesis), every request answered after ${LATENCY} ms by a local chat-completions server that counts the requests it holds at once. The route has \`max_concurrency: ${MAX_CONCURRENCY}\`. Levels interleaved, ${REPS} repetitions; wall time from the watcher's \`started\` event to its last \`finished\`.`,
    '',
    `| concurrency | wall time (each rep) | ideal (serial ${serialIdeal.toFixed(1)} s ÷ N) | best ÷ ideal | best ÷ ideal within max_concurrency | best ÷ (measured serial ÷ min(N, max_concurrency)) | peak in flight at the server / max_concurrency | requests |`,
    '|---|---|---|---|---|---|---|---|',
    ...rows,
    '',
    'The ideal counts only the 300 ms of each request; what a run costs around its calls (checkpoints and audit records flushed to disk, prompts, the heat map, the memory save) comes on top, and on a shared, loaded machine it is most of the gap to the ideal at concurrency 1 already. The column against the measured serial time shows how the runs scale; the peak column is counted by the server itself.',
    '',
    `Per run at zero latency, concurrency 1, by mode (${COMMANDS} commands a process, ${REPS} repetitions, modes interleaved; the first run of each process left out). Before the first call: the \`claimed\` event read by the bench → the run's first request at the server. After the last call: its last reply sent by the server → the next command's \`claimed\` event (what the run holds the watcher up). Gap: its last reply → the next run's first request (the two together). Tail: its last reply → its \`finished\` event (everything it writes: its memory, its pictures and artifact made durable, its last commit; written beside the next run's calls, once that run has started its first, so it holds up no call).`,
    '',
    '| mode | runs | before the first call p50 | p95 | after the last call p50 | p95 | gap p50 | p95 | tail p50 | p95 |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...[...byMode].map(([mode, v]) => {
      const cells = ['heads', 'afters', 'gaps', 'tails'].flatMap((k) => [fmt(percentile(v[k], 50)), fmt(percentile(v[k], 95))]);
      return `| ${mode} | ${v.heads.length} | ${cells.join(' | ')} |`;
    }),
    '',
    HAND_WRITTEN,
    '',
    await handWritten(),
  ].join('\n');
  console.log(body);
  await writeSection('Issue 24: concurrent runs with route limits', body);
}
