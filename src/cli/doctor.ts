import type { Command } from 'commander';
import { doctorWorkspace, type DoctorReport } from '../compose/use-cases.js';
import { resolveWorkspace } from '../config.js';
import { ExitError } from '../domain/errors.js';
import { WORKSPACE_OPTION, type Io } from './io.js';
import { chalkFor } from './style.js';

/**
 * `maestro doctor`: does every route in use work? One line a route, with what to fix, and one a persona
 * file that does not read (its routes cannot be known); exit 0 only when every route works and every persona reads.
 */
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
      '\nUnlike "maestro validate", this calls each endpoint: GET /models where offered, and one tiny structured chat call a route.\nExit codes: 0 every route works · 1 a route would not work, or a persona file does not read (the line says what to fix) · 2 usage.',
    )
    .action(async (opts: { json?: boolean; workspace?: string }) => {
      const report = await doctorWorkspace(resolveWorkspace(opts.workspace, io.env, io.cwd), io.env);
      if (opts.json) {
        // --json keeps its shape (an array, a route an entry) that scripts read; broken persona files go to stderr, as `hitl list --json` names unreadable checkpoints.
        io.stdout.write(`${JSON.stringify(report.routes, null, 2)}\n`);
        for (const p of report.personaProblems) io.stderr.write(`maestro doctor: ${personaLine(p)}\n`);
      } else io.stdout.write(formatReports(report, io));
      // A check that found a problem, as `audit verify` does: not a usage error (README, "Exit codes").
      if (report.routes.some((r) => !r.ok) || report.personaProblems.length > 0) throw new ExitError(1);
    });
}

function formatReports({ routes: reports, personaProblems }: DoctorReport, io: Io): string {
  const c = chalkFor(io);
  const width = Math.max(...reports.map((r) => r.route.length));
  const lines = reports.map((r) => {
    const what = r.provider === null ? '' : r.endpoint ? ` ${r.provider} "${r.model}" at ${r.endpoint}` : ` ${r.provider} "${r.model}"`;
    const mark = r.ok ? c.green('✔') : c.red('✘');
    return `${mark} ${r.route.padEnd(width)}${what} (${r.used_by.join(', ')}) — ${r.text}`;
  });
  for (const p of personaProblems) lines.push(`${c.red('✘')} ${personaLine(p)}`);
  const broken = reports.filter((r) => !r.ok).length;
  const routes = broken === 0 ? 'Every route in use works.' : `${broken} of ${reports.length} route(s) would not work.`;
  if (personaProblems.length === 0) lines.push(routes);
  else
    lines.push(
      `${personaProblems.length} persona problem(s): the routes a broken persona file names are not checked, and run, validate and watch refuse until it is fixed. ${broken === 0 ? 'Every other route in use works.' : routes}`,
    );
  return `${lines.join('\n')}\n`;
}

function personaLine(p: DoctorReport['personaProblems'][number]): string {
  return `${p.file} — ${p.issues.join('; ')}`;
}
