// `npm run bench -- soak`: crash safety under load. Three `maestro watch` on one workspace (offline
// model), N commands dropped at once, and K times a random watcher killed with SIGKILL and started
// again at once. At the end: every command has its artifact and a completed run (as maestro reads the
// checkpoint), every audit log verifies (`maestro audit verify --all`), no model call is named twice in
// a log, every completed run's messages in each persona's memory (session file + archive) exactly once,
// and how many logs took records from a journal after a kill (the write-ahead path).
// SOAK_CONCURRENCY=N runs each watcher with `--concurrency N` (its own section of BENCHMARKS.md).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { CLI, ROOT, machine, writeSection } from './report.mjs';

const { readCheckpoint, journalAuditLines } = await import(pathToFileURL(path.join(ROOT, 'dist', 'adapters', 'fs', 'run-journal.js')).href);

const N = Number(process.env.SOAK_COMMANDS ?? 300);
const KILLS = Number(process.env.SOAK_KILLS ?? 25);
const CONCURRENCY = Number(process.env.SOAK_CONCURRENCY ?? 1);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export default async function bench() {
  const ws = await mkdtemp(path.join(os.tmpdir(), 'maestro-soak-'));
  spawnSync(process.execPath, [CLI, 'init', ws], { stdio: 'ignore' });
  const watchers = [];
  const start = (i) =>
    (watchers[i] = spawn(
      process.execPath,
      [CLI, 'watch', '--workspace', ws, ...(CONCURRENCY > 1 ? ['--concurrency', String(CONCURRENCY)] : [])],
      {
        stdio: 'ignore',
      },
    ));
  for (let i = 0; i < 3; i++) start(i);
  await sleep(1500);
  const t0 = performance.now();
  for (let n = 0; n < N; n++) {
    const file = path.join(ws, `.c${n}.json`);
    await writeFile(
      file,
      JSON.stringify({
        task_description: `Review rollout plan ${n} of the soak`,
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
      // A checkpoint maestro refuses to read is counted as such (and fails the soak), not a crash of the bench.
      const status =
        (await readCheckpoint(path.join(runsDir, d)).catch(() => ({ json: { status: 'unreadable' } })))?.json?.status ?? 'none';
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
  const memory = await memoryOnce(ws, runsDir, auditDir);
  if (process.env.SOAK_KEEP) console.log(`workspace kept: ${ws}`);
  else await rm(ws, { recursive: true, force: true });
  const summary = verify.stdout.trim().split('\n').pop();
  const body = [
    `Machine: ${machine()}`,
    `Command: \`npm run bench -- soak\` (bench/soak.bench.mjs; SOAK_COMMANDS=${N}, SOAK_KILLS=${KILLS}): 3 \`maestro watch${CONCURRENCY > 1 ? ` --concurrency ${CONCURRENCY}` : ''}\` on one workspace, offline model, max_rounds 1; ${N} commands dropped at once; ${KILLS} times a random watcher killed with SIGKILL and started again at once.`,
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
    `| persona memory (session files + archives): runs saved / missing / saved twice / messages twice | ${memory.saved} / ${memory.missing} / ${memory.twice} / ${memory.messagesTwice} |`,
    `| logs that took records from their journal after a kill (AUDIT_RECORDS_RESTORED_FROM_JOURNAL) | ${count.restored} |`,
    `| torn last lines cut / heads rebuilt from the log | ${count.torn} / ${count.adopted} |`,
    `| wall time, first drop → every run ended | ${seconds.toFixed(1)} s |`,
    '',
    `Load average (1 min) when the soak ended: ${os.loadavg()[0].toFixed(1)} (the wall time moves with what else the machine runs).`,
  ].join('\n');
  console.log(body);
  await writeSection(`Soak: SIGKILL under load, nothing lost${CONCURRENCY > 1 ? ` (--concurrency ${CONCURRENCY})` : ''}`, body);
  const ok =
    written === N &&
    verify.status === 0 &&
    count.named_twice === 0 &&
    statuses.completed === N &&
    Object.keys(statuses).length === 1 &&
    memory.missing === 0 &&
    memory.twice === 0 &&
    memory.messagesTwice === 0 &&
    memory.saved === N;
  if (!ok) process.exitCode = 1;
}

/**
 * Every completed run's messages in each persona's memory exactly once: for each run whose log says
 * SESSIONS_SAVED, each persona it names holds (in its session file and its archive together) two
 * messages per step that persona took in the run, no more, no fewer; no message is there twice.
 */
export async function memoryOnce(ws, runsDir, auditDir) {
  const dir = path.join(ws, 'session_states');
  // Memory as maestro keeps it (session state version 3): per persona, the runs whose passages it
  // holds (`runs`, never twice), their passages, and runs moved to the archive (passages, one a line).
  const held = new Map(); // persona -> run -> where it is held ('state' | 'archive')
  const seen = new Set();
  let messagesTwice = 0;
  const hold = (persona, runId, where) => {
    const runs = held.get(persona) ?? new Map();
    const places = runs.get(runId) ?? new Set();
    places.add(where);
    runs.set(runId, places);
    held.set(persona, runs);
  };
  const passage = (persona, p, where) => {
    const key = JSON.stringify([persona, p.run_id, p.from, p.text]);
    if (seen.has(key)) messagesTwice++;
    seen.add(key);
    hold(persona, p.run_id, where);
  };
  for (const f of readdirSync(dir).filter((f) => f.endsWith('_session.json'))) {
    const persona = f.slice(0, -'_session.json'.length);
    const state = JSON.parse(readFileSync(path.join(dir, f), 'utf8'));
    if (new Set(state.runs).size !== state.runs.length) messagesTwice++;
    for (const runId of state.runs) hold(persona, runId, 'state');
    for (const p of state.passages) passage(persona, p, 'state');
    const archive = path.join(dir, 'archive', `${persona}_history.jsonl`);
    if (!existsSync(archive)) continue;
    for (const line of readFileSync(archive, 'utf8').split('\n').filter(Boolean)) passage(persona, JSON.parse(line), 'archive');
  }
  const result = { saved: 0, missing: 0, twice: 0, messagesTwice };
  for (const d of readdirSync(runsDir)) {
    // The log as maestro reads it: with the records its journal holds ahead of it (a run killed before the fold).
    const log = path.join(auditDir, `${d}.jsonl`);
    const journal = path.join(runsDir, d, 'journal.jsonl');
    const lines = [
      ...(existsSync(log) ? readFileSync(log, 'utf8').split('\n') : []),
      ...(existsSync(journal) ? journalAuditLines(readFileSync(journal, 'utf8')) : []),
    ].filter((l) => l.trim());
    const savedRecord = lines.map((l) => JSON.parse(l)).find((r) => r.event === 'SESSIONS_SAVED');
    if (!savedRecord) continue;
    result.saved++;
    // Each persona the record names holds the run once: in its state or in its archive, not in both.
    for (const persona of savedRecord.details.personas) {
      const places = held.get(persona)?.get(d);
      if (!places) result.missing++;
      else if (places.size > 1) result.twice++;
    }
  }
  return result;
}
