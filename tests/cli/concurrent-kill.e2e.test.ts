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

/** Every message a persona keeps (archive, then session file), by run id. */
async function memoryByRun(ws: string, persona: string): Promise<Map<string, number>> {
  const dir = path.join(ws, 'session_states');
  const archive = await readFile(path.join(dir, 'archive', `${persona}_history.jsonl`), 'utf8').catch(() => '');
  const session = JSON.parse(await readFile(path.join(dir, `${persona}_session.json`), 'utf8')) as {
    runs: string[];
    messages: { run_id: string }[];
  };
  expect(new Set(session.runs).size).toBe(session.runs.length);
  const messages = [
    ...archive
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { run_id: string }),
    ...session.messages,
  ];
  const counts = new Map<string, number>();
  for (const m of messages) counts.set(m.run_id, (counts.get(m.run_id) ?? 0) + 1);
  return counts;
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
    // Each persona holds every run, each as many messages as any other run (a run saved twice would hold twice as many).
    const personas = (await readdir(path.join(ws, 'session_states'))).filter((f) => f.endsWith('_session.json'));
    expect(personas.length).toBeGreaterThan(0);
    for (const file of personas) {
      const counts = await memoryByRun(ws, file.replace(/_session\.json$/, ''));
      expect([...counts.keys()].sort(), file).toEqual([...logs.keys()].sort());
      expect(new Set(counts.values()).size, `${file}: ${JSON.stringify([...counts])}`).toBe(1);
    }
  }, 180_000);
});
