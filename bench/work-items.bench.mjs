// `npm run bench -- work-items`: 8 work items on the offline model with 200 ms of latency per call
// (MAESTRO_OFFLINE_DELAY_MS), run one after another and at once (`parallel_items`, concurrency 4
// and 8), each `maestro run` spawned as a user would in a fresh `maestro init` workspace.
import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { CLI, machine, percentile, writeSection } from './report.mjs';

const ITEMS = 8;
const DELAY_MS = 200;
const REPEAT = 5;
const AGENTS = ['coordinator', 'strategist', 'auditor'];

function command(config) {
  return {
    task_description: 'Plan the billing-report migration',
    output_artifact_path: 'outputs/items.md',
    facts: { deadline: '2026-03-01' },
    work_items: Array.from({ length: ITEMS }, (_, i) => ({
      id: `item-${i + 1}`,
      assigned_agent: AGENTS[i % AGENTS.length],
      goal: `Work out part ${i + 1} of the migration`,
      inputs: { part: i + 1 },
    })),
    config,
  };
}

async function once(config) {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'maestro-bench-items-'));
  try {
    spawnSync(process.execPath, [CLI, 'init', dir], { stdio: 'ignore' });
    await writeFile(path.join(dir, 'items.json'), JSON.stringify(command(config)));
    const t = performance.now();
    const r = spawnSync(process.execPath, [CLI, 'run', 'items.json'], {
      cwd: dir,
      encoding: 'utf8',
      env: { ...process.env, NO_COLOR: '1', MAESTRO_OFFLINE_DELAY_MS: String(DELAY_MS) },
    });
    const total = performance.now() - t;
    if (r.status !== 0) throw new Error(`maestro run exited ${r.status}: ${r.stderr}`);
    const artifact = await readFile(path.join(dir, 'outputs', 'items.md'), 'utf8');
    const m = /Items: (\d+) calls, ([\d.]+) s of model time in ([\d.]+) s of wall time/.exec(artifact);
    if (!m) throw new Error('the artifact has no item timing line');
    return { total, items: Number(m[3]) * 1000, calls: Number(/\| Model calls \| (\d+) \|/.exec(artifact)?.[1]) };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export default async function bench() {
  const variants = [
    ['sequential (in order)', {}],
    ['`parallel_items`, concurrency 4 (default)', { parallel_items: true }],
    ['`parallel_items`, concurrency 8', { parallel_items: true, concurrency: 8 }],
  ];
  const rows = [];
  for (const [name, config] of variants) {
    const totals = [];
    const items = [];
    let calls = 0;
    for (let i = 0; i < REPEAT; i++) {
      const r = await once(config);
      totals.push(r.total);
      items.push(r.items);
      calls = r.calls;
    }
    totals.sort((a, b) => a - b);
    items.sort((a, b) => a - b);
    rows.push(
      `| ${name} | ${percentile(items, 50).toFixed(0)} ms | ${percentile(totals, 50).toFixed(0)} ms | ${percentile(totals, 95).toFixed(0)} ms | ${calls} |`,
    );
    console.log(rows.at(-1));
  }
  const body = [
    `Machine: ${machine()}`,
    `Command: \`npm run bench -- work-items\` (bench/work-items.bench.mjs): ${REPEAT} × \`maestro run\` per variant, spawned in a fresh \`maestro init\` workspace, a command with ${ITEMS} work items over the three default personas, the offline model with \`MAESTRO_OFFLINE_DELAY_MS=${DELAY_MS}\` (every call waits ${DELAY_MS} ms). The items' wall time is the artifact's own (first item started → last item finished); the run's includes start-up, gates, the three agents' verdicts on the merge (at once with \`parallel_items\`, in order without) and writing the artifact.`,
    '',
    '| variant | items, wall (median) | whole run (median) | whole run (p95) | model calls |',
    '|---|---:|---:|---:|---:|',
    ...rows,
  ].join('\n');
  console.log(body);
  await writeSection(`Work items: sequential vs parallel_items (${ITEMS} items, ${DELAY_MS} ms per call)`, body);
}
