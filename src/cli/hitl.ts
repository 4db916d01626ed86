import type { Command } from 'commander';
import { HitlRefusedError, type PausedList, RunNotResumableError, type UseCases } from '../compose/use-cases.js';
import { resolveWorkspace } from '../config.js';
import { unreadableSentence } from '../domain/unreadable-checkpoint.js';
import { ExitError, RunHeldError } from '../domain/errors.js';
import { buildOutcome } from '../domain/run-machine.js';
import { withoutCheckpoint } from './run-without-checkpoint.js';
import { WORKSPACE_OPTION, type Io } from './io.js';
import { withRunContext } from './run-context.js';
import { reportOutcome } from './run-outcome.js';
import { chalkFor } from './style.js';
import { cliAuthor } from './decision-author.js';
import { registerShow } from './hitl-show.js';

/** `maestro hitl list|show|decide`: the runs paused for a person, and their decisions. */
export function registerHitl(program: Command, io: Io): void {
  const hitl = program.command('hitl').description('see and resolve runs paused for a person (human in the loop)');
  registerList(hitl, io);
  registerShow(hitl, io);
  registerDecide(hitl, io);
}

function registerList(hitl: Command, io: Io): void {
  hitl
    .command('list')
    .description('paused runs: run id, age, layer, reason, task digest, how often this conflict paused')
    .option('--json', 'print the list as JSON')
    .option(...WORKSPACE_OPTION)
    .action(async (opts: { json?: boolean; workspace?: string }) => {
      const app = await (await import('../compose/use-cases.js')).openApp({
        workspace: resolveWorkspace(opts.workspace, io.env, io.cwd),
        env: io.env,
      });
      const list = await app.paused();
      // --json keeps its shape (the paused runs, an array); runs whose checkpoint cannot be read are said on stderr, exit 1.
      if (opts.json) io.stdout.write(`${JSON.stringify(list.paused, null, 2)}\n`);
      else writeList(list, io);
      // A checkpoint that cannot be read is a file to look at (exit 1, as `audit show` with lines that are not records).
      const unreadable = list.unreadable_checkpoints;
      if (unreadable.length > 0)
        throw new ExitError(
          1,
          `maestro hitl list: ${unreadable.length} run checkpoint(s) cannot be read, so whether they wait for a person is not known: ${unreadable.map((u) => `${u.run_id} (${u.problem})`).join(', ')}; look with: maestro hitl show <run_id>`,
        );
    });
}

export interface DecideFlags {
  all?: boolean;
  reason?: string;
  note?: string;
  pause?: string;
  run?: boolean;
  json?: boolean;
  workspace?: string;
}

function registerDecide(hitl: Command, io: Io): void {
  hitl
    .command('decide')
    .description('resolve the current pause of a run (or, with --all, of every run paused for one reason): continue or stop')
    .argument('[run_id]', 'the run (left out with --all)')
    .argument('[decision]', 'exactly "continue" or "stop"')
    .option('--all', 'decide every run paused for the same reason (name it with --reason when paused runs differ)')
    .option('--reason <code>', 'with --all: only runs paused for this reason code')
    .option('--note <text>', 'why, kept with the decision (not in the audit log; at most 2,000 characters)')
    .option('--pause <pause_id>', 'bind the decision to this pause; refused if the run has moved on')
    .option(
      '--run',
      'after continue, resume the run here in the foreground (otherwise a running watcher, or with an engine a free worker, picks it up)',
    )
    .option(
      '--json',
      'one JSON object: the run outcome (stop, or continue with --run), the continue recorded, or with --all what was decided',
    )
    .option(...WORKSPACE_OPTION)
    .addHelpText(
      'after',
      [
        '',
        'Exit: 0 continue recorded (or, with --run, the run completed), 4 stop (the run ends stopped by a person); with --run, as `run`.',
        'A decision on a run that is not paused, a stale pause, a sealed run, or anything but continue|stop is refused (exit 2) and changes nothing.',
        'With --all, each run is decided as `decide` would (holding the run while it decides) and listed; the exit is 2 if any was refused,',
        "else 1 if a run's checkpoint cannot be read (named, not decided: look with maestro hitl show <run_id>), else as one decision: 4 stop, 0 continue.",
      ].join('\n'),
    )
    .action(async (first: string | undefined, second: string | undefined, opts: DecideFlags) => {
      if (opts.all) {
        // A decision that is not one is a usage error, said once, before any run is looked at.
        // "decide <run_id> continue --all": a run id where --all takes none.
        if (second !== undefined)
          throw new ExitError(2, 'maestro hitl decide --all takes no run id: maestro hitl decide --all [--reason CODE] continue|stop');
        if (first !== undefined && first !== 'continue' && first !== 'stop')
          throw new ExitError(2, `maestro hitl decide --all: the decision is exactly "continue" or "stop", not "${first}"`);
        if (first === undefined || opts.pause || opts.run) {
          throw new ExitError(2, 'maestro: usage: maestro hitl decide --all [--reason CODE] continue|stop (no run id, --pause or --run)');
        }
        return (await import('./hitl-all.js')).decideEvery({ io, decision: first, opts });
      }
      if (opts.reason) throw new ExitError(2, 'maestro: --reason goes with --all');
      if (first === undefined || second === undefined) throw new ExitError(2, 'maestro: usage: maestro hitl decide <run_id> continue|stop');
      return decide({ io, runId: first, decision: second, opts });
    });
}

/** `hitl decide`: the decision recorded (or refused, exit 2), then a stop's outcome, where a continue goes, or the run resumed here. */
async function decide(options: { io: Io; runId: string; decision: string; opts: DecideFlags }): Promise<void> {
  const { io, runId, opts } = options;
  const workspace = resolveWorkspace(opts.workspace, io.env, io.cwd);
  const app = await (await import('../compose/use-cases.js')).openApp({
    workspace,
    env: io.env,
    tracing: { onNotice: (message) => io.stderr.write(`maestro: ${message}\n`) },
  });
  let result;
  try {
    result = await app.decide({
      runId,
      decision: options.decision,
      ...(opts.note !== undefined ? { note: opts.note } : {}),
      ...(opts.pause ? { pauseId: opts.pause } : {}),
      by: cliAuthor(),
    });
  } catch (error) {
    if (error instanceof HitlRefusedError)
      throw new ExitError(2, `maestro: refused: ${await noRunWhy(io, opts, runId, error.message)}`, 'refused');
    throw error;
  } finally {
    // The decision's records are all written: their spans leave now (a no-op when tracing is off).
    await app.close();
  }
  if (result.decision === 'stop') {
    // The run ends stopped by a person: exit 4, as every ending `stopped` (README, exit codes).
    const code = reportOutcome(io, opts, result.outcome);
    if (code !== 0) throw new ExitError(code);
    return;
  }
  await goOn({ io, app, runId, opts, workspace });
}

/** A refusal for "no run" of a run `maestro runs` lists (invalid, ended before its first checkpoint) says what it is. */
async function noRunWhy(io: Io, opts: DecideFlags, runId: string, message: string): Promise<string> {
  if (!message.startsWith('there is no run')) return message;
  return (await withoutCheckpoint(io, opts.workspace, runId, 'nothing to decide')) ?? message;
}

/** After a continue: where the run goes on (a watcher, the engine's workers), or, with --run, the run resumed here. */
async function goOn(options: { io: Io; app: UseCases; runId: string; opts: DecideFlags; workspace: string }): Promise<void> {
  const { io, app, runId, opts } = options;
  const c = chalkFor(io);
  if (!opts.run) {
    if (opts.json) {
      const where =
        app.continuedBy === 'worker' ? 'the engine: whichever worker is free' : 'a running `maestro watch`, or maestro run --resume';
      io.stdout.write(`${JSON.stringify({ run_id: runId, decision: 'continue', status: 'queued', resumed_by: where })}\n`);
      return;
    }
    io.stdout.write(
      app.continuedBy === 'worker'
        ? `${c.green('✔')} continue recorded for ${runId}: queued in the engine for whichever worker is free\n`
        : `${c.green('✔')} continue recorded for ${runId}. A running \`maestro watch\` resumes it; or resume it now: maestro run --resume ${runId}\n`,
    );
    return;
  }
  // Another process (a free worker, a watcher) took the run up between the decision and this resume:
  // the decision stands and that process resumes it, so this is the continue's success (exit 0,
  // status `queued`, as without --run), not a refusal: something did change.
  let elsewhere: string | undefined;
  const code = await withRunContext(
    io,
    opts,
    options.workspace,
    async (runApp, run) => {
      run.id = runId;
      return runApp.resume(runId, cliAuthor()).catch((error: unknown) => {
        if (!(error instanceof RunNotResumableError || error instanceof RunHeldError)) throw error;
        elsewhere = error.message.replace(/; nothing changed$/, '');
        return buildOutcome({ runId, status: 'paused', decision: { decision: '', reason_code: '' }, auditLog: '', message: elsewhere });
      });
    },
    async (runApp, outcome) => {
      if (elsewhere === undefined) {
        const orchestration = opts.json ? await runApp.orchestration(outcome.run_id) : undefined;
        return reportOutcome(io, opts, outcome, orchestration === undefined ? {} : { orchestration });
      }
      writeTakenElsewhere(io, opts, runId, elsewhere, app.continuedBy);
      return 0;
    },
  );
  if (code !== 0) throw new ExitError(code);
}

/** `decide … continue --run` whose run another process took up first: the continue is recorded, and that process resumes it. */
function writeTakenElsewhere(io: Io, opts: DecideFlags, runId: string, why: string, by: UseCases['continuedBy']): void {
  const where = by === 'worker' ? 'the engine: the worker that took it' : 'the process that took it';
  const message = `the continue is recorded; another process took the run up first and resumes it (this one did not): ${why}`;
  if (opts.json)
    io.stdout.write(`${JSON.stringify({ run_id: runId, decision: 'continue', status: 'queued', resumed_by: where, message })}\n`);
  else io.stdout.write(`${chalkFor(io).green('✔')} continue recorded for ${runId}: ${message}\n`);
}

/** The paused runs as a table, and how to decide; then the runs whose checkpoint cannot be read. */
function writeList(list: PausedList, io: Io): void {
  const c = chalkFor(io);
  const rows = list.paused;
  const unreadable = list.unreadable_checkpoints.map((u) => `${c.red('✘')} ${unreadableSentence(u)}\n`).join('');
  if (rows.length === 0) {
    io.stdout.write(
      unreadable ? `No run with a readable checkpoint is paused for a person.\n${unreadable}` : 'No run is paused for a person.\n',
    );
    return;
  }
  io.stdout.write(`${c.bold('RUN ID                    AGE      REASON                                  PAUSES  FILE — TASK')}\n`);
  for (const r of rows) {
    const stopped = r.conflict_stopped ? c.red(' (conflict line stopped: stop only)') : '';
    io.stdout.write(
      `${r.run_id.padEnd(26)}${formatAge(r.age_seconds).padEnd(9)}${r.reason_code.padEnd(40)}${String(r.conflict_pauses).padEnd(8)}${r.source} — ${r.task}${stopped}\n`,
    );
  }
  io.stdout.write(`${unreadable}\nDecide with: maestro hitl decide <run_id> continue|stop [--note TEXT]\n`);
}

function formatAge(seconds: number): string {
  if (seconds < 90) return `${seconds}s`;
  if (seconds < 5400) return `${Math.round(seconds / 60)}m`;
  if (seconds < 172_800) return `${Math.round(seconds / 3600)}h`;
  return `${Math.round(seconds / 86_400)}d`;
}
