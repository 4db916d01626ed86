import type { Command } from 'commander';
import { OutcomeRefusedError } from '../compose/use-cases.js';
import { resolveWorkspace } from '../config.js';
import { ExitError } from '../domain/errors.js';
import { corruptSessionNotice } from '../domain/session-state.js';
import { WORKSPACE_OPTION, type Io } from './io.js';
import { cliAuthor } from './decision-author.js';
import { withoutCheckpoint } from './run-without-checkpoint.js';
import { chalkFor } from './style.js';

/**
 * `maestro outcome <run_id> right|wrong [--note TEXT]`: a person confirms whether a run's outcome
 * was right. Each persona's verdict in that run joins its record of confirmed outcomes, which the
 * next runs weigh by (`by_priors`, `bayesian_fusion`); nothing else ever teaches them.
 */
export function registerOutcome(program: Command, io: Io): void {
  program
    .command('outcome')
    .description("confirm whether a run's outcome was right: each persona's verdict in it joins its record (by_priors, bayesian_fusion)")
    .argument('<run_id>', 'a run the council arbitrated (completed, paused or stopped after its verdicts)')
    .argument('<right|wrong>', "what the council's outcome turned out to be")
    .option('--note <text>', 'why (kept, screened, with each persona’s record; at most 500 characters)')
    .option('--json', 'print the result as one JSON object')
    .option(...WORKSPACE_OPTION)
    .addHelpText(
      'after',
      '\nConfirming a run again replaces its earlier confirmation. Exit codes: 0 recorded · 2 refused (nothing changed).',
    )
    .action(async (runId: string, outcome: string, opts: { note?: string; json?: boolean; workspace?: string }) => {
      const app = await (await import('../compose/use-cases.js')).openApp({
        workspace: resolveWorkspace(opts.workspace, io.env, io.cwd),
        env: io.env,
      });
      try {
        const note = opts.note !== undefined ? { note: opts.note } : {};
        const result = await app.confirmOutcome({ runId, outcome, ...note, by: cliAuthor() });
        for (const s of result.sessions_recovered)
          io.stderr.write(`maestro outcome: ${corruptSessionNotice(s.persona, { movedTo: s.moved_to, problem: s.problem })}\n`);
        if (opts.json) {
          io.stdout.write(`${JSON.stringify(result)}\n`);
          return;
        }
        const c = chalkFor(io);
        io.stdout.write(`${c.bold(`run ${result.run_id}`)}: the council's ${result.final_action} was ${result.outcome}\n`);
        for (const p of result.personas)
          io.stdout.write(
            `  ${p.persona.padEnd(16)} said ${p.said.padEnd(11)} ${p.right ? c.green('right') : c.red('wrong')} · reliability ${p.before.toFixed(3)} → ${p.after.toFixed(3)}\n`,
          );
        if (result.personas.length === 0) io.stdout.write('  No persona gave a readable verdict in that run: nothing joined a record.\n');
      } catch (error) {
        if (!(error instanceof OutcomeRefusedError)) throw error;
        // A run `maestro runs` lists (it ended invalid, or before its first checkpoint) is said as what it is.
        const why = error.message.startsWith('there is no run')
          ? await withoutCheckpoint(io, opts.workspace, runId, 'no council outcome to confirm')
          : undefined;
        throw new ExitError(2, `maestro outcome: ${why ?? error.message}; nothing changed`, 'refused');
      }
    });
}
