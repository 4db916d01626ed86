import type { Command } from 'commander';
import { doctorWorkspace, type RouteReport } from '../compose/use-cases.js';
import { resolveWorkspace } from '../config.js';
import { ExitError } from '../domain/errors.js';
import { WORKSPACE_OPTION, type Io } from './io.js';
import { chalkFor } from './style.js';

/** `maestro doctor`: does every route in use work? One line a route, with what to fix; exit 0 only when all do. */
export function registerDoctor(program: Command, io: Io): void {
  program
    .command('doctor')
    .description(
      'check every route in use (fallbacks too) against its endpoint: it answers, the key is accepted, the model exists, json_mode works',
    )
    .option('--json', 'one JSON array, a route an entry')
    .option(...WORKSPACE_OPTION)
    .addHelpText(
      'after',
      '\nUnlike "maestro validate", this calls each endpoint: GET /models where offered, and one tiny structured chat call a route.\nExit codes: 0 every route works · 1 a route would not work (the line says what to fix) · 2 usage.',
    )
    .action(async (opts: { json?: boolean; workspace?: string }) => {
      const reports = await doctorWorkspace(resolveWorkspace(opts.workspace, io.env, io.cwd), io.env);
      io.stdout.write(opts.json ? `${JSON.stringify(reports, null, 2)}\n` : formatReports(reports, io));
      // A check that found a problem, as `audit verify` does: not a usage error (README, "Exit codes").
      if (reports.some((r) => !r.ok)) throw new ExitError(1);
    });
}

function formatReports(reports: readonly RouteReport[], io: Io): string {
  const c = chalkFor(io);
  const width = Math.max(...reports.map((r) => r.route.length));
  const lines = reports.map((r) => {
    const what = r.provider === null ? '' : r.endpoint ? ` ${r.provider} "${r.model}" at ${r.endpoint}` : ` ${r.provider} "${r.model}"`;
    const mark = r.ok ? c.green('✔') : c.red('✘');
    return `${mark} ${r.route.padEnd(width)}${what} (${r.used_by.join(', ')}) — ${r.text}`;
  });
  const broken = reports.filter((r) => !r.ok).length;
  lines.push(broken === 0 ? 'Every route in use works.' : `${broken} of ${reports.length} route(s) would not work.`);
  return `${lines.join('\n')}\n`;
}
