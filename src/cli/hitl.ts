import type { Command } from 'commander';
import { resumeHere, runLiveness } from '../compose/resume.js';
import { decidePause, HitlRefusedError } from '../app/hitl.js';
import { conflictFingerprint } from '../app/loop-policy.js';
import { resolveWorkspace } from '../config.js';
import { ExitError } from '../domain/errors.js';
import { pausesFor } from '../domain/loop-policy/workspace-loop.js';
import type { App } from '../compose/app.js';
import { WORKSPACE_OPTION, type Io } from './io.js';
import { reportOutcome, withRunContext } from './run.js';
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
      const app = await (await import('../compose/app.js')).createApp({
        workspace: resolveWorkspace(opts.workspace, io.env, io.cwd),
        env: io.env,
      });
      const rows = await pausedRuns(app);
      if (opts.json) {
        io.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
        return;
      }
      writeList(rows, io);
    });
}

/** One paused run as `hitl list` shows it. */
export interface PausedRow {
  run_id: string;
  pause_id: string;
  age_seconds: number;
  layer: string;
  reason_code: string;
  task_digest: string;
  conflict_pauses: number;
}

/** The workspace's paused runs, in the ledger's order; a run whose checkpoint does not read is left out of the list. */
export async function pausedRuns(app: App): Promise<PausedRow[]> {
  const loop = await app.deps.loopPolicy.read();
  const now = app.deps.clock.now().getTime();
  const rows = [];
  for (const id of await app.deps.ledger.list()) {
    const state = await app.deps.ledger.load(id).catch(() => undefined);
    if (state?.status !== 'paused' || !state.pause) continue;
    rows.push({
      run_id: state.run_id,
      pause_id: state.pause.pause_id,
      age_seconds: Math.round((now - Date.parse(state.pause.requested_at)) / 1000),
      layer: state.pause.layer,
      reason_code: state.pause.reason_code,
      task_digest: state.task_sha256.slice(0, 12),
      conflict_pauses: pausesFor(loop, conflictFingerprint(state, app.deps.sha256)),
    });
  }
  return rows;
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
    .option('--note <text>', 'why, kept with the decision (not in the audit log)')
    .option('--pause <pause_id>', 'bind the decision to this pause; refused if the run has moved on')
    .option(
      '--run',
      'after continue, resume the run here in the foreground (otherwise a running watcher, or with an engine a free worker, picks it up)',
    )
    .option('--json', 'with --run: print the run outcome as one JSON object; with --all: what was decided, as JSON')
    .option(...WORKSPACE_OPTION)
    .addHelpText(
      'after',
      [
        '',
        'A decision on a run that is not paused, a stale pause, a sealed run, or anything but continue|stop is refused (exit 2) and changes nothing.',
        'With --all, each run is decided as `decide` would (under its lock); the runs refused are listed, and the exit is 2 if any was.',
      ].join('\n'),
    )
    .action(async (first: string | undefined, second: string | undefined, opts: DecideFlags) => {
      if (opts.all) {
        if (first === undefined || second !== undefined || opts.pause || opts.run) {
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
  const app = await (await import('../compose/app.js')).createApp({
    workspace,
    env: io.env,
    tracing: { onNotice: (message) => io.stderr.write(`maestro: ${message}\n`) },
  });
  // A run a live process executes (`maestro run`, a watcher, or with an engine a worker) is its; one nobody
  // runs may still be stopped. Asked under the run's lock, so nobody can take it up in between.
  const isOwned = (): Promise<boolean> => runLiveness(app).isHeld(runId);
  let result;
  try {
    result = await decidePause(
      {
        runId,
        decision: options.decision,
        ...(opts.note !== undefined ? { note: opts.note } : {}),
        ...(opts.pause ? { pauseId: opts.pause } : {}),
        isOwned,
        by: cliAuthor(),
      },
      // With an engine, a stop's artifact goes to the engine and the intake writes it into its workspace.
      app.engine ? app.engine.depsForRun(runId) : app.deps,
    );
  } catch (error) {
    if (error instanceof HitlRefusedError) throw new ExitError(2, `maestro: refused: ${error.message}`);
    throw error;
  } finally {
    // The decision's records are all written: their spans leave now (a no-op when tracing is off).
    await app.telemetry.shutdown();
  }
  if (result.decision === 'stop') {
    const code = reportOutcome(io, opts, result.outcome);
    if (code !== 4) throw new ExitError(code);
    return;
  }
  await goOn({ io, app, runId, opts, workspace });
}

/** After a continue: where the run goes on (a watcher, the engine's workers), or, with --run, the run resumed here. */
async function goOn(options: { io: Io; app: App; runId: string; opts: DecideFlags; workspace: string }): Promise<void> {
  const { io, app, runId, opts } = options;
  const c = chalkFor(io);
  if (!opts.run) {
    io.stdout.write(
      app.engine
        ? `${c.green('✔')} continue recorded for ${runId}: queued in the engine for whichever worker is free\n`
        : `${c.green('✔')} continue recorded for ${runId}. A running \`maestro watch\` resumes it; or resume it now: maestro run --resume ${runId}\n`,
    );
    return;
  }
  const code = await withRunContext(io, opts, options.workspace, async (runApp, run) => {
    run.id = runId;
    return resumeHere(runApp, runId);
  });
  if (code !== 0) throw new ExitError(code);
}

/** The paused runs as a table, and how to decide. */
function writeList(rows: readonly PausedRow[], io: Io): void {
  if (rows.length === 0) {
    io.stdout.write('No run is paused for a person.\n');
    return;
  }
  const c = chalkFor(io);
  io.stdout.write(
    `${c.bold('RUN ID                    AGE      LAYER         REASON                                  TASK          PAUSES')}\n`,
  );
  for (const r of rows) {
    io.stdout.write(
      `${r.run_id.padEnd(26)}${formatAge(r.age_seconds).padEnd(9)}${r.layer.padEnd(14)}${r.reason_code.padEnd(40)}${r.task_digest.padEnd(14)}${r.conflict_pauses}\n`,
    );
  }
  io.stdout.write(`\nDecide with: maestro hitl decide <run_id> continue|stop [--note TEXT]\n`);
}

function formatAge(seconds: number): string {
  if (seconds < 90) return `${seconds}s`;
  if (seconds < 5400) return `${Math.round(seconds / 60)}m`;
  if (seconds < 172_800) return `${Math.round(seconds / 3600)}h`;
  return `${Math.round(seconds / 86_400)}d`;
}
