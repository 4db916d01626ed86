// `npm run bench -- soak`: crash safety under load. Three `maestro watch` on one workspace (offline
// model), N commands dropped at once, and K times a random watcher killed with SIGKILL and started
// again at once. At the end: every command has its artifact and a completed run (as maestro reads the
// checkpoint), every audit log verifies (`maestro audit verify --all`), no model call is named twice in
// a log, and how many logs took records from a journal after a kill (the write-ahead path).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { CLI, ROOT, machine, writeSection } from './report.mjs';

const { readCheckpoint } = await import(pathToFileURL(path.join(ROOT, 'dist', 'adapters', 'run-journal.js')).href);

const N = Number(process.env.SOAK_COMMANDS ?? 300);
const KILLS = Number(process.env.SOAK_KILLS ?? 25);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export default async function bench() {
  const ws = await mkdtemp(path.join(os.tmpdir(), 'maestro-soak-'));
  spawnSync(process.execPath, [CLI, 'init', ws], { stdio: 'ignore' });
  const watchers = [];
  const start = (i) => (watchers[i] = spawn(process.execPath, [CLI, 'watch', '--workspace', ws], { stdio: 'ignore' }));
  for (let i = 0; i < 3; i++) start(i);
  await sleep(1500);
  const t0 = performance.now();
  for (let n = 0; n < N; n++) {
    const file = path.join(ws, `.c${n}.json`);
    await writeFile(
      file,
      JSON.stringify({
        task_description: `Soak task ${n}: review the rollout plan`,
        output_artifact_path: `outputs/soak-${n}.md`,
        config: { max_rounds: 1 },
      }),
    );
    await rename(file, path.join(ws, 'commands', `c-${n}.json`));
  }
  for (let kills = 0; kills < KILLS; kills++) {
    await sleep(150 + Math.random() * 300);
    const i = Math.floor(Math.random() * 3);
    const victim = watchers[i];
    victim.kill('SIGKILL');
    await new Promise((r) => (victim.exitCode !== null || victim.signalCode !== null ? r() : victim.on('exit', r)));
    start(i);
  }
  const artifacts = () =>
    existsSync(path.join(ws, 'outputs')) ? readdirSync(path.join(ws, 'outputs')).filter((f) => /^soak-\d+\.md$/.test(f)).length : 0;
  const runsDir = path.join(ws, '.maestro', 'runs');
  // Each run's status as maestro reads it: its journal when there is one, else state.json.
  const statusesNow = async () => {
    const statuses = {};
    for (const d of readdirSync(runsDir)) {
      const status = (await readCheckpoint(path.join(runsDir, d)))?.json?.status ?? 'none';
      statuses[status] = (statuses[status] ?? 0) + 1;
    }
    return statuses;
  };
  const deadline = Date.now() + Number(process.env.SOAK_WAIT_MS ?? 300_000);
  // Done when every command is gone from commands/ and every run has ended.
  while (
    (readdirSync(path.join(ws, 'commands')).some((f) => f.endsWith('.json')) || ((await statusesNow()).completed ?? 0) < N) &&
    Date.now() < deadline
  )
    await sleep(250);
  const seconds = (performance.now() - t0) / 1000;
  for (const w of watchers) w.kill('SIGTERM');
  await Promise.all(watchers.map((w) => new Promise((r) => (w.exitCode !== null || w.signalCode !== null ? r() : w.on('exit', r)))));

  const written = artifacts();
  const verify = spawnSync(process.execPath, [CLI, 'audit', 'verify', '--all', '--workspace', ws], { encoding: 'utf8' });
  // A run killed between its last journal line and the fold ends with its journal in place of state.json.
  const journals = readdirSync(runsDir).filter((d) => existsSync(path.join(runsDir, d, 'journal.jsonl'))).length;
  const statuses = await statusesNow();
  const auditDir = path.join(ws, '.maestro', 'audit');
  const count = { restored: 0, torn: 0, adopted: 0, modelCalls: 0, named_twice: 0 };
  for (const f of readdirSync(auditDir).filter((f) => f.endsWith('.jsonl'))) {
    const seen = new Set();
    for (const line of readFileSync(path.join(auditDir, f), 'utf8').trim().split('\n')) {
      const r = JSON.parse(line);
      if (r.reason_code === 'AUDIT_RECORDS_RESTORED_FROM_JOURNAL') count.restored++;
      if (r.reason_code === 'AUDIT_TORN_LINE_DROPPED') count.torn++;
      if (r.reason_code === 'AUDIT_HEAD_ADOPTED_FROM_LOG') count.adopted++;
      const step = r.event === 'MODEL_CALL' ? r.details?.step_id : undefined;
      if (step === undefined) continue;
      count.modelCalls++;
      if (seen.has(step)) count.named_twice++;
      seen.add(step);
    }
  }
  if (process.env.SOAK_KEEP) console.log(`workspace kept: ${ws}`);
  else await rm(ws, { recursive: true, force: true });
  const summary = verify.stdout.trim().split('\n').pop();
  const body = [
    `Machine: ${machine()}`,
    `Command: \`npm run bench -- soak\` (bench/soak.bench.mjs; SOAK_COMMANDS=${N}, SOAK_KILLS=${KILLS}): 3 \`maestro watch\` on one workspace, offline model, max_rounds 1; ${N} commands dropped at once; ${KILLS} times a random watcher killed with SIGKILL and started again at once.`,
    '',
    '| Measure | Result |',
    '|---|---|',
    `| artifacts written | ${written} of ${N} |`,
    `| runs by status | ${Object.entries(statuses)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')} |`,
    `| \`maestro audit verify --all\` | exit ${verify.status}: ${summary} |`,
    `| runs whose checkpoint is still their journal (killed after their last line, before the fold; read through it) | ${journals} |`,
    `| MODEL_CALL records / a step named twice in one log | ${count.modelCalls} / ${count.named_twice} |`,
    `| logs that took records from their journal after a kill (AUDIT_RECORDS_RESTORED_FROM_JOURNAL) | ${count.restored} |`,
    `| torn last lines cut / heads rebuilt from the log | ${count.torn} / ${count.adopted} |`,
    `| wall time, first drop → every run ended | ${seconds.toFixed(1)} s |`,
  ].join('\n');
  console.log(body);
  await writeSection('Soak: SIGKILL under load, nothing lost', body);
  const ok =
    written === N && verify.status === 0 && count.named_twice === 0 && statuses.completed === N && Object.keys(statuses).length === 1;
  if (!ok) process.exitCode = 1;
}
