import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PgEngine } from '../../src/adapters/pg/engine.js';
import { PgRunHolds } from '../../src/adapters/pg/run-holds.js';
import { RunHeldError } from '../../src/domain/errors.js';
import { runCli, spawnCli } from '../fakes/cli.js';
import { engineWorkspace, query, useEngine } from '../helpers/engine.js';

// Issue 23, point 5, with an engine: decisions taken on any machine exclude each other in PostgreSQL.
const { database, workspace } = useEngine();

async function decisionsIn(url: string, runId: string): Promise<number> {
  const rows = await query<{ line: string }>(url, 'SELECT line FROM maestro_audit WHERE run_id = $1 ORDER BY seq', [runId]);
  return rows.filter((r) => (JSON.parse(r.line) as { event: string }).event === 'HITL_DECIDED').length;
}

describe('deciding a pause kept in the engine', () => {
  it('two `hitl decide` processes at once: exactly one decides; a stop after a queued continue is refused', async () => {
    const url = await database();
    const ws = workspace(await engineWorkspace(url));
    await writeFile(
      path.join(ws, 'ghost.json'),
      JSON.stringify({ task_description: 'Review the plan', config: { max_rounds: 1, personas: ['coordinator', 'ghost'] } }),
    );
    const pairs = [
      ['continue', 'stop'],
      ['stop', 'stop'],
      ['continue', 'continue'],
      ['stop', 'continue'],
    ];
    const ids: string[] = [];
    for (const _ of pairs) {
      const paused = await runCli(['run', 'ghost.json', '--json'], { cwd: ws });
      expect(paused.code).toBe(3);
      ids.push(JSON.parse(paused.stdout).run_id as string);
    }
    // The four races go at once, each on a run of its own: the two processes of a pair race each other
    // as before, and the file does not wait for the four in turn.
    const raced = await Promise.all(
      pairs.map((pair, i) => Promise.all(pair.map((d) => spawnCli(['hitl', 'decide', ids[i]!, d], { cwd: ws, timeoutMs: 60_000 })))),
    );
    for (const [i, pair] of pairs.entries()) {
      const id = ids[i]!;
      const results = raced[i]!;
      // One refused (2); the other went through: 0, or 4 for a stop (stopped by a person).
      const won = results.findIndex((r) => r.code !== 2);
      expect(results.filter((r) => r.code === 2)).toHaveLength(1);
      expect(results[won]?.code).toBe(pair[won] === 'stop' ? 4 : 0);
      expect(results.find((r) => r.code === 2)!.stderr).toMatch(
        /refused: .*(already decided|another maestro process is deciding or resuming run)/,
      );
      expect(await decisionsIn(url, id)).toBe(1);
      if (pair[won] === 'continue') {
        // The continue waits in the engine's queue for a worker: a later stop is refused.
        const stop = await runCli(['hitl', 'decide', id, 'stop'], { cwd: ws });
        expect(stop.code).toBe(2);
        expect(stop.stderr).toContain('already decided');
        expect(await decisionsIn(url, id)).toBe(1);
      }
    }
  }, 120_000);

  it('the run hold is one session at a time, waits when asked, and is let go when its holder goes', async () => {
    const url = await database();
    const engine = PgEngine.open(url);
    const holds = new PgRunHolds(engine);
    try {
      const first = await holds.hold('run-a');
      await expect(holds.hold('run-a')).rejects.toThrow(RunHeldError);
      const other = await holds.hold('run-b');
      await other.release();
      // A waiting hold is taken once the first is let go (whenever that is within its wait).
      const waiting = holds.hold('run-a', { waitMs: 30_000 });
      await first.release();
      await (await waiting).release();
      // A holder whose connection dies (its process was killed) no longer holds the run.
      await holds.hold('run-c');
      await query(
        url,
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'maestro run hold' AND datname = current_database()`,
      );
      await (await holds.hold('run-c', { waitMs: 30_000 })).release();
      // A process that would run a run another one runs is refused at once; a decision still waits for it.
      const running = await holds.hold('run-d', { span: 'run' });
      await expect(holds.hold('run-d', { waitMs: 30_000, span: 'run' })).rejects.toThrow(RunHeldError);
      const deciding = holds.hold('run-d', { waitMs: 30_000 });
      await running.release();
      await (await deciding).release();
    } finally {
      await engine.close();
    }
  }, 60_000);
});
