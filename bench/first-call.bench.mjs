// `npm run bench -- first-call`: from spawning `maestro run` to its first model call, and its peak
// RSS. Issue 13 asks for ≤ 300 ms on the offline model and ≤ 130 MiB. Four cases, each on a fresh
// `maestro init` workspace: the offline model (the first call is when the progress line "… speaking"
// reaches stderr: it is printed as the step starts, right before the call), the offline model on the
// workspace's second run (history to bound: the tokenizer may be needed), and an openai route to a
// local server that answers at once (the server notes the first request). Peak RSS is the child's
// maxRSS (getrusage of the reaped process, via `/usr/bin/time` when there is one).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { CLI, instantContent, machine, percentile, writeSection } from './report.mjs';

const REPS = Number(process.env.BENCH_REPS ?? 9);
const TIME = existsSync('/usr/bin/time') ? '/usr/bin/time' : undefined;

/** Spawns `maestro run` in `ws`; resolves with spawn → first "speaking" line, spawn → exit, and peak RSS (MiB) when measurable. */
async function runOnce(ws, onFirst) {
  const rssFile = path.join(ws, '.rss');
  const argv = TIME ? [TIME, '-f', '%M', '-o', rssFile, process.execPath, CLI] : [process.execPath, CLI];
  const t0 = performance.now();
  let first;
  const child = spawn(argv[0], [...argv.slice(1), 'run', 'examples/review-migration.json'], {
    cwd: ws,
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, NO_COLOR: '1' },
  });
  child.stderr.setEncoding('utf8').on('data', (d) => {
    if (first === undefined && /speaking/.test(d)) first = performance.now() - t0;
  });
  const code = await new Promise((r) => child.on('exit', r));
  const total = performance.now() - t0;
  if (code !== 0) throw new Error(`maestro run exited ${code}`);
  const rss = TIME ? Number((await readFile(rssFile, 'utf8')).trim().split('\n').at(-1)) / 1024 : NaN;
  return { first: onFirst?.() ?? first, total, rss };
}

async function fresh() {
  const ws = await mkdtemp(path.join(os.tmpdir(), 'maestro-bench-first-'));
  spawnSync(process.execPath, [CLI, 'init', ws], { stdio: 'ignore' });
  return ws;
}

export default async function bench() {
  let t0 = 0;
  let served;
  let firstRequest;
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      firstRequest ??= performance.now() - t0;
      const json = JSON.parse(body);
      const content = instantContent(json, 'A short reply.');
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id: `c${++served}`,
          object: 'chat.completion',
          created: 0,
          model: json.model,
          choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content } }],
          usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
        }),
      );
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${server.address().port}/v1`;

  const cases = { offline: [], second: [], openai: [] };
  // Interleaved, so a busy moment of the machine falls on every case alike.
  for (let i = 0; i < REPS; i++) {
    const a = await fresh();
    cases.offline.push(await runOnce(a));
    cases.second.push(await runOnce(a));
    await rm(a, { recursive: true, force: true });

    const b = await fresh();
    await writeFile(
      path.join(b, 'maestro.config.json'),
      JSON.stringify({ default_route: 'local', routes: { local: { provider: 'openai', model: 'bench', base_url: url, max_retries: 0 } } }),
    );
    served = 0;
    firstRequest = undefined;
    t0 = performance.now();
    cases.openai.push(await runOnce(b, () => firstRequest));
    await rm(b, { recursive: true, force: true });
  }
  server.close();
  const med = (xs) =>
    percentile(
      [...xs].filter((x) => Number.isFinite(x)).sort((x, y) => x - y),
      50,
    );
  const p95 = (xs) =>
    percentile(
      [...xs].filter((x) => Number.isFinite(x)).sort((x, y) => x - y),
      95,
    );
  const row = (name, rs) =>
    `| ${name} | ${med(rs.map((r) => r.first)).toFixed(0)} ms | ${p95(rs.map((r) => r.first)).toFixed(0)} ms | ${med(rs.map((r) => r.total)).toFixed(0)} ms | ${med(rs.map((r) => r.rss)).toFixed(0)} MiB | ${Math.max(...rs.map((r) => r.rss)).toFixed(0)} MiB |`;
  const body = [
    `Machine: ${machine()}`,
    `Command: \`npm run bench -- first-call\` (bench/first-call.bench.mjs): ${REPS} × \`maestro run examples/review-migration.json\` (13 model calls) per case, interleaved, each on a fresh \`maestro init\` workspace. First call: on the offline model, when the progress line of the first step reaches stderr (printed right before the call); on the openai route, when a local server that answers at once receives the first request. Peak RSS: the process's maxRSS (\`/usr/bin/time -f %M\`).`,
    '',
    '| case | spawn → first call (median) | p95 | spawn → exit (median) | peak RSS (median) | peak RSS (max) |',
    '|---|---:|---:|---:|---:|---:|',
    row('offline model, first run in a workspace', cases.offline),
    row('offline model, second run (history to bound)', cases.second),
    row('openai route, local instant server', cases.openai),
  ].join('\n');
  console.log(body);
  await writeSection('maestro run: spawn to the first model call', body);
}
