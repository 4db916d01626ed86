// `npm run bench -- modes`: issue 11's two figures.
// 1. Wall time of one run in `parallel` vs `round_robin` mode, 5 personas, every model call taking
//    200 ms (the offline model behind a fixed delay), interleaved, in process as the watcher runs it.
// 2. The cost of COMPOSE + ARBITRATE for 50 personas' assessments, per strategy (CPU only).
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { ROOT, machine, percentile, writeSection } from './report.mjs';

const dist = (p) => import(path.join(ROOT, 'dist', p));
const { createApp } = await dist('compose/app.js');
const { processCommand } = await dist('app/process-command.js');
const { scaffoldWorkspace } = await dist('cli/init.js');
const { OfflineLlmClient } = await dist('adapters/model/offline-llm-client.js');
const { DelayedLlmClient } = await dist('adapters/model/delayed-llm-client.js');
const { composeAssessments } = await dist('domain/composition.js');
const { arbitrate } = await dist('domain/arbitration.js');
const { VECTORS, assessmentVerdict } = await dist('domain/assessment.js');

const LATENCY_MS = 200;
const REPS = Number(process.env.MAESTRO_BENCH_REPS ?? 5);
const PERSONAS = ['coordinator', 'strategist', 'auditor', 'economist', 'operator'];

async function workspace() {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'maestro-bench-modes-'));
  await scaffoldWorkspace(dir);
  for (const [id, order] of [
    ['economist', 4],
    ['operator', 5],
  ]) {
    await writeFile(
      path.join(dir, 'personas', `${id}.md`),
      `---\nid: ${id}\nname: ${id}\norder: ${order}\nfocus_domains: [${id}]\nprivileges: [READ_FILE]\nweight: 1\n---\nYou are the ${id}.\n`,
    );
  }
  return dir;
}

async function oneRun(mode) {
  const dir = await workspace();
  try {
    const llm = new DelayedLlmClient(new OfflineLlmClient(), LATENCY_MS);
    const app = await createApp({ workspace: dir, env: {}, llm });
    const config = mode === 'round_robin' ? { mode, personas: PERSONAS, max_rounds: 1 } : { mode, personas: PERSONAS, concurrency: 5 };
    const text = JSON.stringify({ task_description: 'Choose the cache for the billing service and list the risks', config });
    const started = performance.now();
    const outcome = await processCommand({ text, source: 'bench.json' }, app.deps);
    const ms = performance.now() - started;
    return { ms, calls: Number(/(\d+) model calls/.exec(outcome.message)?.[1] ?? NaN), status: outcome.status };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function assessments(n) {
  return Array.from({ length: n }, (_, i) => ({
    persona: `p${i}`,
    valid: true,
    action: i % 3 === 0 ? 'investigate' : 'proceed',
    confidence: 0.5 + ((i * 7) % 50) / 100,
    rationale: 'r',
    vectors: Object.fromEntries(VECTORS.map((v, j) => [v, { score: ((i * 13 + j * 5) % 100) / 100, rationale: 'x' }])),
  }));
}

export default async function bench() {
  await oneRun('parallel'); // warm-up: module loading, the first SVG
  const runs = { round_robin: [], parallel: [] };
  for (let i = 0; i < REPS; i++) {
    for (const mode of i % 2 === 0 ? ['round_robin', 'parallel'] : ['parallel', 'round_robin']) runs[mode].push(await oneRun(mode));
  }
  const median = (xs) =>
    percentile(
      [...xs].sort((a, b) => a - b),
      50,
    );
  const rr = median(runs.round_robin.map((r) => r.ms));
  const par = median(runs.parallel.map((r) => r.ms));

  const fifty = assessments(50);
  const verdicts = fifty.map(assessmentVerdict);
  const weights = Object.fromEntries(fifty.map((a) => [a.persona, 1]));
  const rows = [];
  for (const strategy of ['average', 'weighted_average', 'consensus_threshold', 'bayesian_fusion']) {
    const N = 2000;
    for (let i = 0; i < 200; i++) composeAssessments({ strategy, assessments: fifty });
    const t = performance.now();
    for (let i = 0; i < N; i++) {
      composeAssessments({ strategy, assessments: fifty, threshold: 0.25 });
      arbitrate({ strategy: 'confidence_weighted', verdicts, weights });
    }
    rows.push(`| ${strategy} + confidence_weighted | ${(((performance.now() - t) / N) * 1000).toFixed(1)} µs |`);
  }

  const body = [
    `Machine: ${machine()}; load average at the end ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(', ')} (other jobs shared the machine)`,
    'Command: `npm run bench -- modes` (bench/modes.bench.mjs).',
    '',
    `**One run, 5 personas, every model call ${LATENCY_MS} ms** (the offline model behind a fixed delay; in process as the watcher runs it; ${REPS} runs of each, interleaved, after a warm-up; medians):`,
    '',
    '| mode | model calls | wall time | |',
    '|---|---:|---:|---|',
    `| round_robin (max_rounds 1: 5 turns, 5 verdicts, 1 synthesis) | ${runs.round_robin[0]?.calls} | ${(rr / 1000).toFixed(2)} s | one call at a time |`,
    `| parallel (5 assessments at once, then the synthesis) | ${runs.parallel[0]?.calls} | ${(par / 1000).toFixed(2)} s | ${(rr / par).toFixed(1)}× faster |`,
    '',
    `The parallel floor is two model latencies (${(2 * LATENCY_MS) / 1000} s: the assessments together, then the synthesis); what is above it is the engine (checkpoints, audit records, the heat map).`,
    '',
    '**COMPOSE + ARBITRATE for 50 personas** (CPU only, 2,000 iterations after 200 warm-up; per iteration):',
    '',
    '| strategy | time |',
    '|---|---:|',
    ...rows,
  ].join('\n');
  console.log(body);
  await writeSection('Deliberation modes: parallel vs round_robin, and the cost of COMPOSE + ARBITRATE', body);
}
