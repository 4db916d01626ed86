import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, type CliResult } from '../fakes/cli.js';
import { engineWorkspace, query, useEngine } from '../helpers/engine.js';

// An engine that can be reached but not used as it is: a login it refuses, a database it lacks, a
// table dropped by hand, a schema newer than this maestro, commits that are not durable. Each is one
// line naming the engine (never its password), exit 1: never "internal error", never a hang.
const { database, workspace } = useEngine();

/** The workspace's config pointed at `url` (the config's engine URL wins over MAESTRO_ENGINE_URL). */
async function pointAt(ws: string, url: string): Promise<void> {
  const file = path.join(ws, 'maestro.config.json');
  const config = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
  await writeFile(file, JSON.stringify({ ...config, engine: { url } }));
}

const COMMANDS = [['engine', 'status'], ['status'], ['runs', '--json'], ['worker', '--once'], ['watch', '--once']];

function expectOneLine(r: CliResult, what: RegExp): void {
  expect(r.code, r.stderr).toBe(1);
  expect(r.stderr).not.toContain('internal error');
  expect(r.stderr).not.toContain('s3cret');
  expect(r.stderr.trim().split('\n'), r.stderr).toHaveLength(1);
  expect(r.stderr).toMatch(/the engine at postgres:\/\/.*127\.0\.0\.1/);
  expect(r.stderr).toMatch(what);
}

describe('an engine that refuses the login or has no such database', () => {
  it('every command says so in one line naming the engine, password hidden, exit 1 (--json: the same message)', async () => {
    const url = await database();
    const ws = workspace(await engineWorkspace(url));
    const noRole = new URL(url);
    noRole.username = 'nobody_here';
    noRole.password = 's3cret';
    const noDatabase = new URL(url);
    noDatabase.pathname = '/no_such_database';
    for (const [bad, what] of [
      [noRole.toString(), /refuses this login.*nobody_here/],
      [noDatabase.toString(), /no_such_database/],
    ] as const) {
      await pointAt(ws, bad);
      for (const args of COMMANDS) {
        const r = await runCli([...args, '--workspace', ws], { timeoutMs: 20_000 });
        expectOneLine(r, what);
        if (args.includes('--json'))
          expect(JSON.parse(r.stdout)).toMatchObject({ status: 'error', exit_code: 1, message: expect.stringMatching(what) });
      }
    }
  }, 120_000);
});

describe('an engine whose schema is not what this maestro needs', () => {
  it('a table dropped by hand: not ready (engine status exit 1), and a worker refuses it at once instead of reconnecting forever', async () => {
    const url = await database();
    const ws = workspace(await engineWorkspace(url));
    await query(url, 'DROP TABLE maestro_queue CASCADE');
    const status = await runCli(['engine', 'status', '--json', '--workspace', ws]);
    expect(status.code, status.stderr).toBe(1);
    expect(JSON.parse(status.stdout)).toMatchObject({ ready: false, missing_tables: ['maestro_queue'] });
    expect((await runCli(['engine', 'status', '--workspace', ws])).stdout).toContain('maestro_queue');
    for (const args of [['worker', '--once'], ['status']]) {
      const r = await runCli([...args, '--workspace', ws], { timeoutMs: 20_000 });
      expectOneLine(r, /maestro_queue/);
      expect(r.stderr).not.toContain('connection to the engine is lost');
    }
  }, 60_000);

  it('a schema newer than this maestro: engine status says to upgrade maestro, not to migrate, exit 1', async () => {
    const url = await database();
    const ws = workspace(await engineWorkspace(url));
    await query(url, "INSERT INTO maestro_migrations (version, name) VALUES (99, 'from a newer maestro')");
    const r = await runCli(['engine', 'status', '--workspace', ws]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('upgrade maestro');
    expect(r.stdout).not.toContain('engine migrate');
    const migrate = await runCli(['engine', 'migrate', '--workspace', ws]);
    expect(migrate.code).toBe(1);
    expect(migrate.stdout).toContain('upgrade maestro');
    expect(migrate.stdout).not.toContain('nothing to do');
  });

  it('synchronous_commit off: engine status says not ready, exit 1, as the intake and workers refuse it', async () => {
    const url = await database();
    const ws = workspace(await engineWorkspace(url));
    await query(url, `ALTER DATABASE "${new URL(url).pathname.slice(1)}" SET synchronous_commit = off`);
    const r = await runCli(['engine', 'status', '--json', '--workspace', ws]);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ ready: false, durable: false });
  });
});
