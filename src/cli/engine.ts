import type { Command } from 'commander';
import { engineUrlOf as readEngineUrl, noEngine, openEngineAdmin } from '../compose/use-cases.js';
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
        io.stdout.write(
          `the engine at ${pg.label} is at schema version ${await pg.schemaVersion()}${applied.length === 0 ? ' (nothing to do)' : ''}\n`,
        );
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
        const version = await pg.schemaVersion();
        const setting = await pg.synchronousCommit();
        const durable = judgeCommitDurability(setting, false, pg.label).kind === 'durable';
        const out = {
          url: pg.label,
          schema_version: version,
          needed: pg.needed,
          ready: version === pg.needed,
          synchronous_commit: setting,
          durable,
        };
        if (opts.json) io.stdout.write(`${JSON.stringify(out)}\n`);
        else
          io.stdout.write(
            `engine ${out.url}: schema version ${version} (this maestro needs ${pg.needed})${out.ready ? '' : ' — run "maestro engine migrate"'}\n` +
              `synchronous_commit = ${setting}${durable ? '' : ': intake and workers refuse this engine (commits it acknowledges can be lost); set it on, or start them with --allow-async-commit'}\n`,
          );
        if (!out.ready) throw new ExitError(1);
      } finally {
        await pg.close();
      }
    });
}
