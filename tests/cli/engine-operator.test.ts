import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { engineWorkspace } from '../../bench/pg-cluster.mjs';
import { runCli } from '../fakes/cli.js';
import { useEngine } from '../helpers/engine.js';

// Issue 27: the engine's commands as an operator uses them, in-process through `main(argv, io)`.
const { database, workspace } = useEngine();

async function query<R extends pg.QueryResultRow>(url: string, sql: string, params: unknown[] = []): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(sql, params)).rows;
  } finally {
    await client.end();
  }
}

/** A database whose commits are acknowledged before they are durable (set for the database only). */
async function asyncCommit(url: string): Promise<void> {
  const name = new URL(url).pathname.slice(1);
  await query(url, `ALTER DATABASE "${name}" SET synchronous_commit = off`);
}

describe('exactly-once needs durable commits', () => {
  it('a worker and an intake refuse an engine with synchronous_commit off, and take nothing', async () => {
    const url = await database();
    const ws = workspace(await engineWorkspace(url));
    await asyncCommit(url);
    for (const command of [
      ['worker', '--once'],
      ['watch', '--once'],
    ]) {
      const r = await runCli([...command, '--workspace', ws]);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(new RegExp(`maestro ${command[0]}: the engine at .* has synchronous_commit = off`));
      expect(r.stderr).toContain('--allow-async-commit');
    }
    expect(await query(url, 'SELECT 1 FROM maestro_workers')).toEqual([]);
  });

  it('with --allow-async-commit they start and warn loudly on stderr', async () => {
    const url = await database();
    const ws = workspace(await engineWorkspace(url));
    await asyncCommit(url);
    const r = await runCli(['worker', '--once', '--allow-async-commit', '--workspace', ws]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/maestro worker: WARNING: .*synchronous_commit = off.*exactly-once is NOT guaranteed/);
  });

  it('an engine with synchronous_commit on (local counts: the local WAL is flushed) starts without a word about it', async () => {
    const url = await database();
    const ws = workspace(await engineWorkspace(url));
    const name = new URL(url).pathname.slice(1);
    await query(url, `ALTER DATABASE "${name}" SET synchronous_commit = local`);
    const r = await runCli(['worker', '--once', '--workspace', ws]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toContain('synchronous_commit');
  });
});
