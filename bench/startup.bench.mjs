// How long the CLI takes to start (`maestro --version`) and to run the example on the offline
// model end to end (`maestro run examples/review-migration.json`), as a user would run them.
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { CLI, machine, percentile, writeSection } from './report.mjs';

function time(args, cwd) {
  const t = performance.now();
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd, env: { ...process.env, NO_COLOR: '1' }, encoding: 'utf8' });
  const ms = performance.now() - t;
  if (r.status !== 0) throw new Error(`maestro ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return ms;
}

export default async function bench() {
  const version = [];
  for (let i = 0; i < 15; i++) version.push(time(['--version'], os.tmpdir()));
  const runs = [];
  for (let i = 0; i < 9; i++) {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'maestro-bench-start-'));
    time(['init', dir], os.tmpdir());
    runs.push(time(['run', 'examples/review-migration.json'], dir));
    await rm(dir, { recursive: true, force: true });
  }
  version.sort((a, b) => a - b);
  runs.sort((a, b) => a - b);
  const body = [
    `Machine: ${machine()}`,
    'Command: `npm run bench -- startup` (bench/startup.bench.mjs): the built CLI spawned as a user would, 15 × `maestro --version`, 9 × `maestro run examples/review-migration.json` in a fresh `maestro init` workspace (3 personas × 3 rounds, 13 offline-model calls).',
    '',
    '| command | median | p95 |',
    '|---|---|---|',
    `| \`maestro --version\` (start-up) | ${percentile(version, 50).toFixed(0)} ms | ${percentile(version, 95).toFixed(0)} ms |`,
    `| \`maestro run\` on the example, offline model | ${percentile(runs, 50).toFixed(0)} ms | ${percentile(runs, 95).toFixed(0)} ms |`,
  ].join('\n');
  console.log(body);
  await writeSection('CLI start-up and the example run', body);
}
