// Orchestration overhead per model call: a 3-persona × 3-round run against a local chat-completions
// server that answers instantly, through the real openai SDK. Overhead = run wall time minus the
// time spent inside the model client's complete(), divided by the number of calls.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { completionBody, instantContent, machine, percentile, ROOT, writeSection } from './report.mjs';

const { createApp } = await import(path.join(ROOT, 'dist', 'compose', 'app.js'));
const { processCommand } = await import(path.join(ROOT, 'dist', 'app', 'process-command.js'));
const { scaffoldWorkspace } = await import(path.join(ROOT, 'dist', 'cli', 'init.js'));

function instantServer() {
  return new Promise((resolve) => {
    const server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        const json = JSON.parse(body);
        const content = instantContent(json, 'A short, useful reply from the council member.');
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(completionBody(json.model, content)));
      });
    });
    server.listen(0, '127.0.0.1', () => resolve(server));
  });
}

export default async function bench() {
  const server = await instantServer();
  const url = `http://127.0.0.1:${server.address().port}/v1`;
  const runs = 20;
  const overheads = [];
  const inside = [];
  let calls = 0;
  for (let i = 0; i < runs + 2; i++) {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'maestro-bench-openai-'));
    await scaffoldWorkspace(dir);
    await writeFile(
      path.join(dir, 'maestro.config.json'),
      JSON.stringify({ default_route: 'local', routes: { local: { provider: 'openai', model: 'bench', base_url: url, max_retries: 0 } } }),
    );
    const app = await createApp({ workspace: dir, env: {} });
    let clientMs = 0;
    let n = 0;
    const wrapLlm = (inner) => ({
      label: inner.label,
      rehearsal: inner.rehearsal,
      async complete(request, signal) {
        const t = performance.now();
        try {
          return await inner.complete(request, signal);
        } finally {
          clientMs += performance.now() - t;
          n++;
        }
      },
    });
    const text = JSON.stringify({
      task_description: 'Assess the migration plan and propose next steps',
      input_artifacts: ['examples/migration-plan.md'],
      output_artifact_path: 'outputs/bench.md',
      config: { max_rounds: 3 },
    });
    const t0 = performance.now();
    const outcome = await processCommand({ text, source: 'bench.json' }, { ...app.deps, wrapLlm });
    const wall = performance.now() - t0;
    if (outcome.status !== 'completed') throw new Error(`bench run ended ${outcome.status}: ${outcome.message}`);
    await rm(dir, { recursive: true, force: true });
    if (i < 2) continue; // warm-up
    calls = n;
    overheads.push((wall - clientMs) / n);
    inside.push(clientMs / n);
  }
  server.close();
  overheads.sort((a, b) => a - b);
  inside.sort((a, b) => a - b);
  const body = [
    `Machine: ${machine()}`,
    `Command: \`npm run bench -- openai\` (bench/openai.bench.mjs), ${runs} runs after 2 warm-ups, each a 3-persona × 3-round council (${calls} model calls) against a local chat-completions server on 127.0.0.1 that answers instantly, through the real openai SDK.`,
    '',
    '| per model call | p50 | p95 |',
    '|---|---|---|',
    `| orchestration overhead (outside the model client: prompts, knowledge, checkpoint + audit writes with fsync) | ${overheads[Math.floor(runs / 2)].toFixed(2)} ms | ${percentile(overheads, 95).toFixed(2)} ms |`,
    `| inside the model client (SDK + HTTP round trip to the instant server) | ${inside[Math.floor(runs / 2)].toFixed(2)} ms | ${percentile(inside, 95).toFixed(2)} ms |`,
  ].join('\n');
  console.log(body);
  await writeSection('Orchestration overhead per model call (openai provider)', body);
}
