// `npm run bench -- watch-heap`: does a long-lived watcher's heap stay flat over many runs against a
// real endpoint? One app (as `maestro watch` wires it) runs 1,000 one-round councils against a
// chat-completions server on 127.0.0.1 through the real openai SDK, every run under the same
// long-lived stop signal the watch loop passes down. The heap is sampled after a forced GC every 100
// runs; growth is measured from the first sample (after warm-up) to the last.
// MAESTRO_BENCH_RUNS=200 shortens it for a smoke check.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { getEventListeners } from 'node:events';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import v8 from 'node:v8';
import vm from 'node:vm';
import { completionBody, instantContent, machine, ROOT, writeSection } from './report.mjs';

const { createApp } = await import(path.join(ROOT, 'dist', 'compose', 'app.js'));
const { processCommand } = await import(path.join(ROOT, 'dist', 'app', 'process-command.js'));
const { scaffoldWorkspace } = await import(path.join(ROOT, 'dist', 'cli', 'init.js'));

const RUNS = Number(process.env.MAESTRO_BENCH_RUNS ?? 1000);
const EVERY = Math.max(10, Math.floor(RUNS / 10));

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc');

function instantServer() {
  return new Promise((resolve) => {
    const server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        const json = JSON.parse(body);
        const content = instantContent(json, 'A short, useful reply.');
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(completionBody(json.model, content)));
      });
    });
    server.listen(0, '127.0.0.1', () => resolve(server));
  });
}

function heapMiB() {
  gc();
  gc();
  return process.memoryUsage().heapUsed / 2 ** 20;
}

export default async function bench() {
  const server = await instantServer();
  const url = `http://127.0.0.1:${server.address().port}/v1`;
  const dir = await mkdtemp(path.join(os.tmpdir(), 'maestro-bench-heap-'));
  await scaffoldWorkspace(dir);
  await writeFile(
    path.join(dir, 'maestro.config.json'),
    JSON.stringify({
      default_route: 'local',
      routes: { local: { provider: 'openai', model: 'bench', base_url: url, max_retries: 0 } },
      history: { keep_runs: 5 },
    }),
  );
  const stop = new AbortController(); // the watcher's stop signal: one for its whole life
  const app = await createApp({ workspace: dir, env: {}, signal: stop.signal });
  const deps = { ...app.deps, signal: stop.signal };
  const text = JSON.stringify({
    task_description: 'Assess the rollout plan and list the risks',
    config: { max_rounds: 1, personas: ['coordinator'] },
  });
  const samples = [];
  const started = performance.now();
  for (let i = 1; i <= RUNS; i++) {
    const outcome = await processCommand({ text, source: `bench-${i}.json` }, deps);
    if (outcome.status !== 'completed') throw new Error(`bench run ${i} ended ${outcome.status}: ${outcome.message}`);
    if (i % EVERY === 0) samples.push({ runs: i, heap: heapMiB() });
  }
  const leftover = getEventListeners(stop.signal, 'abort').length;
  const seconds = (performance.now() - started) / 1000;
  server.close();
  await rm(dir, { recursive: true, force: true });
  const first = samples[0];
  const last = samples.at(-1);
  const growth = ((last.heap - first.heap) / first.heap) * 100;
  const body = [
    `Machine: ${machine()}`,
    `Command: \`npm run bench -- watch-heap\` (bench/watch-heap.bench.mjs): ${RUNS} one-persona, one-round runs (3 model calls each) in one process under one long-lived stop signal, as \`maestro watch\` runs them, against a chat-completions server on 127.0.0.1 through the real openai SDK; heap used after a forced GC every ${EVERY} runs. ${seconds.toFixed(0)} s in all.`,
    '',
    '| runs | heap used (MiB) |',
    '|---|---|',
    ...samples.map((s) => `| ${s.runs} | ${s.heap.toFixed(2)} |`),
    '',
    `Abort listeners left on the stop signal after the last run: ${leftover}.`,
    `Growth from run ${first.runs} to run ${last.runs}: ${growth >= 0 ? '+' : ''}${growth.toFixed(1)} % (${(((last.heap - first.heap) / (last.runs - first.runs)) * 100).toFixed(3)} MiB per 100 runs). Target: within ±5 %.`,
  ].join('\n');
  console.log(body);
  if (RUNS >= 1000) await writeSection("The watcher's heap over many runs (openai provider)", body);
}
