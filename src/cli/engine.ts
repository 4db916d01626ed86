import type { Command } from 'commander';
import { type EngineAdmin, engineUrlOf as readEngineUrl, noEngine, openEngineAdmin } from '../compose/use-cases.js';
import { resolveWorkspace } from '../config.js';
import { judgeCommitDurability } from '../domain/engine-durability.js';
import { ExitError } from '../domain/errors.js';
import { WORKSPACE_OPTION, type Io } from './io.js';
import { chalkFor } from './style.js';

/** The engine URL of a workspace (config or MAESTRO_ENGINE_URL), or exit 2 saying how to set one. */
export async function engineUrlOf(io: Io, workspace: string | undefined, what: string): Promise<string> {
  const url = await readEngineUrl(resolveWorkspace(workspace, io.env, io.cwd), io.env);
  if (!url) throw noEngine(what);
  return url;
}

/** `maestro engine migrate|status`: the PostgreSQL engine's schema. */
export function registerEngine(program: Command, io: Io): void {
  const engine = program.command('engine').description('the PostgreSQL engine that workers on many machines share (see "maestro worker")');

  engine
    .command('migrate')
    .description("create or upgrade the engine's tables (versioned migrations; safe to run again, and from several machines at once)")
    .option(...WORKSPACE_OPTION)
    .action(async (opts: { workspace?: string }) => {
      const url = await engineUrlOf(io, opts.workspace, 'engine migrate');
      const pg = await openEngineAdmin(url, 'maestro migrate');
      try {
        const applied = await pg.migrate();
        const c = chalkFor(io);
        for (const m of applied) io.stdout.write(`${c.green('✔')} migration ${m.version}: ${m.name}\n`);
        const version = await pg.schemaVersion();
        // A schema from a newer maestro is not "nothing to do": this maestro cannot use it.
        const newer = version > pg.needed ? `, newer than this maestro (it needs ${pg.needed}): upgrade maestro` : '';
        const idle = applied.length === 0 && !newer ? ' (nothing to do)' : '';
        io.stdout.write(`the engine at ${pg.label} is at schema version ${version}${newer}${idle}\n`);
        if (newer) throw new ExitError(1);
      } finally {
        await pg.close();
      }
    });

  engine
    .command('status')
    .description("the engine's schema version and whether this maestro can use it")
    .option('--json', 'print as JSON')
    .option(...WORKSPACE_OPTION)
    .action(async (opts: { workspace?: string; json?: boolean }) => {
      const url = await engineUrlOf(io, opts.workspace, 'engine status');
      const pg = await openEngineAdmin(url, 'maestro status');
      try {
        const out = await readiness(pg);
        if (opts.json) io.stdout.write(`${JSON.stringify(out.report)}\n`);
        else io.stdout.write(out.lines.map((l) => `${l}\n`).join(''));
        // Not ready: what the intake and the workers would refuse (README: "engine status: not ready" exits 1).
        if (!out.report.ready) throw new ExitError(1);
      } finally {
        await pg.close();
      }
    });
}

/**
 * Whether the intake and workers of this maestro can use the engine: its schema is the one this
 * maestro needs (older: migrate; newer: upgrade maestro), none of its tables is missing, and its
 * commits are durable (`synchronous_commit`); with the lines that say so.
 */
async function readiness(pg: EngineAdmin): Promise<{ report: Record<string, unknown> & { ready: boolean }; lines: string[] }> {
  const version = await pg.schemaVersion();
  const missing = version > 0 ? await pg.missingTables() : { tables: [], fix: '' };
  const setting = await pg.synchronousCommit();
  const durable = judgeCommitDurability(setting, false, pg.label).kind === 'durable';
  const schemaOk = version === pg.needed && missing.tables.length === 0;
  const fix =
    version < pg.needed
      ? ' — run "maestro engine migrate"'
      : version > pg.needed
        ? ' — newer than this maestro: upgrade maestro'
        : missing.tables.length > 0
          ? ` — not ready: ${missing.fix}`
          : '';
  const lines = [
    `engine ${pg.label}: schema version ${version} (this maestro needs ${pg.needed})${fix}`,
    `synchronous_commit = ${setting}${durable ? '' : ': intake and workers refuse this engine (commits it acknowledges can be lost); set it on, or start them with --allow-async-commit'}`,
  ];
  const report = {
    url: pg.label,
    schema_version: version,
    needed: pg.needed,
    ready: schemaOk && durable,
    missing_tables: missing.tables,
    synchronous_commit: setting,
    durable,
  };
  return { report, lines };
}
