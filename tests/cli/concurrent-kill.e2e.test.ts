import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { dropCommand, listDir, readAuditLogs, task, useWatchScope, waitFor, watch } from '../helpers/watch-workspace.js';

// `maestro watch --concurrency 3`, killed (-9) while several runs are in flight, then started again:
// every command ends once, and persona memory and audit logs hold each run exactly once. The suite's
// size is small; a soak runs it bigger: MAESTRO_SOAK_CONC_COMMANDS=60 MAESTRO_SOAK_CONC_KILLS=10.
const COMMANDS = Number(process.env.MAESTRO_SOAK_CONC_COMMANDS ?? 6);
const KILLS = Number(process.env.MAESTRO_SOAK_CONC_KILLS ?? 1);
const { workspace, started } = useWatchScope();

/** Every passage a persona keeps (archive, then session file; archived summaries aside), by run id, as `from|text`. */
async function memoryByRun(ws: string, persona: string): Promise<Map<string, string[]>> {
  const dir = path.join(ws, 'session_states');
  const archive = await readFile(path.join(dir, 'archive', `${persona}_history.jsonl`), 'utf8').catch(() => '');
  const session = JSON.parse(await readFile(path.join(dir, `${persona}_session.json`), 'utf8')) as {
    runs: string[];
    passages: { run_id: string; from: string; text: string }[];
  };
  expect(new Set(session.runs).size).toBe(session.runs.length);
  const passages = [
    ...archive
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { run_id: string; from: string; text: string })
      .filter((p) => p.from !== 'summary'),
    ...session.passages,
  ];
  const byRun = new Map<string, string[]>();
  for (const p of passages) byRun.set(p.run_id, [...(byRun.get(p.run_id) ?? []), `${p.from}|${p.text}`]);
  return byRun;
}

describe('concurrent runs, killed mid-way', () => {
  it(`${COMMANDS} commands at --concurrency 3, ${KILLS} kill -9 with runs in flight: each run once in memory and in the audit logs`, async () => {
    const ws = await workspace();
    for (let i = 1; i <= COMMANDS; i++) {
      await dropCommand(ws, `${String(i).padStart(3, '0')}.json`, task(`Review rollout step ${i} of the billing migration`));
    }
    const env = { MAESTRO_OFFLINE_DELAY_MS: '30' };
    for (let k = 0; k < KILLS; k++) {
      const w = started(watch(ws, ['--concurrency', '3'], env));
      // Killed once runs overlap: at least two claimed and not finished (after one has ended, past the first).
      const seenBefore = () => w.events.filter((e) => e.kind === 'finished').length;
      await waitFor(
        'runs in flight together',
        () => {
          const claimed = w.events.filter((e) => e.kind === 'claimed').length;
          return claimed - seenBefore() >= 2 && (k > 0 || seenBefore() >= 1) ? true : undefined;
        },
        60_000,
      );
      w.kill('SIGKILL');
      await w.exited;
    }
    const last = started(watch(ws, ['--once', '--concurrency', '3'], env));
    expect((await last.exited).code).toBe(0);
    expect(await listDir(path.join(ws, 'commands'))).toEqual([]);
    expect(await listDir(path.join(ws, '.maestro', 'inflight'))).toEqual([]);

    const logs = await readAuditLogs(ws);
    expect(logs.size).toBe(COMMANDS);
    for (const [runId, lines] of logs) {
      for (const once of ['COMMAND_RECEIVED', 'SESSIONS_SAVED', 'RUN_FINISHED', 'ARTIFACT_WRITTEN']) {
        expect(
          lines.filter((l) => l.event === once),
          `${runId}: ${once}`,
        ).toHaveLength(1);
      }
    }
    // Each persona holds every run, each passage once (a run's passages are distinct: saved twice, it would hold each twice).
    const personas = (await readdir(path.join(ws, 'session_states'))).filter((f) => f.endsWith('_session.json'));
    expect(personas.length).toBeGreaterThan(0);
    for (const file of personas) {
      const byRun = await memoryByRun(ws, file.replace(/_session\.json$/, ''));
      expect([...byRun.keys()].sort(), file).toEqual([...logs.keys()].sort());
      for (const [runId, passages] of byRun) expect(new Set(passages).size, `${file}: ${runId}`).toBe(passages.length);
    }
  }, 180_000);
});
