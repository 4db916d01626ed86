import { type DecideAllResult, type DecidedRun, HitlRefusedError } from '../compose/use-cases.js';
import { unreadableSentence } from '../domain/unreadable-checkpoint.js';
import { resolveWorkspace } from '../config.js';
import { ExitError } from '../domain/errors.js';
import type { Io } from './io.js';
import { chalkFor } from './style.js';
import { cliAuthor } from './decision-author.js';

/** The flags of `hitl decide` that `--all` reads. */
interface AllFlags {
  readonly reason?: string;
  readonly note?: string;
  readonly json?: boolean;
  readonly workspace?: string;
}

/** `maestro hitl decide --all [--reason CODE] continue|stop`: one decision for every run paused for one reason, listed run by run. */
export async function decideEvery(options: { io: Io; decision: string; opts: AllFlags }): Promise<void> {
  const { io, opts } = options;
  const app = await (await import('../compose/use-cases.js')).openApp({
    workspace: resolveWorkspace(opts.workspace, io.env, io.cwd),
    env: io.env,
    tracing: { onNotice: (message) => io.stderr.write(`maestro: ${message}\n`) },
  });
  let result;
  try {
    result = await app.decideAll({
      decision: options.decision,
      ...(opts.reason !== undefined ? { reason: opts.reason } : {}),
      ...(opts.note !== undefined ? { note: opts.note } : {}),
      by: cliAuthor(),
    });
  } catch (error) {
    if (error instanceof HitlRefusedError) throw new ExitError(2, `maestro: refused: ${error.message}`, 'refused');
    throw error;
  } finally {
    await app.close();
  }
  const unreadable = result.unreadable_checkpoints;
  if (opts.json)
    io.stdout.write(
      `${JSON.stringify({ reason: result.reason, runs: result.runs.map(view), unreadable_checkpoints: unreadable }, null, 2)}\n`,
    );
  else writeDecided(io, result, app.continuedBy === 'worker');
  const code = exitCode(options.decision, result);
  if (code !== 0)
    throw new ExitError(
      code,
      code === 1
        ? `maestro hitl decide --all: ${unreadable.length} run checkpoint(s) cannot be read, so they were not decided: ${unreadable.map((u) => u.run_id).join(', ')}; look with: maestro hitl show <run_id>`
        : '',
    );
}

/**
 * As `decide` exits, run by run (the README's exit codes): 2 when a run was refused, 1 when a
 * checkpoint could not be read (a file to look at; its run was not decided), else 4 for stop (the
 * runs end stopped by a person) and 0 for continue.
 */
function exitCode(decision: string, result: DecideAllResult): number {
  if (result.runs.some((r) => 'refused' in r)) return 2;
  if (result.unreadable_checkpoints.length > 0) return 1;
  return decision === 'stop' ? 4 : 0;
}

/** One decided run as JSON: its decision and status, or why it was refused. */
function view(r: DecidedRun): Record<string, unknown> {
  const base = { run_id: r.run_id, source: r.source, pause_id: r.pause_id };
  if ('refused' in r) return { ...base, refused: r.refused };
  return r.result.decision === 'stop'
    ? { ...base, decision: 'stop', status: r.result.outcome.status }
    : { ...base, decision: 'continue', status: 'queued to resume' };
}

function writeDecided(io: Io, result: DecideAllResult, engine: boolean): void {
  const c = chalkFor(io);
  const runs = result.runs;
  const lines = [`${runs.length} run(s) paused for ${result.reason}:`];
  for (const u of result.unreadable_checkpoints) lines.push(`  ${c.red('✘')} not decided: ${unreadableSentence(u)}`);
  for (const r of runs) {
    if ('refused' in r) lines.push(`  ${c.red('✘')} ${r.run_id} ${r.source} — refused: ${r.refused}`);
    else if (r.result.decision === 'stop') {
      lines.push(`  ${c.green('✔')} stop     ${r.run_id} ${r.source} — ${r.result.outcome.status}`);
    } else lines.push(`  ${c.green('✔')} continue ${r.run_id} ${r.source}`);
  }
  if (runs.some((r) => !('refused' in r) && r.result.decision === 'continue')) {
    lines.push(
      engine
        ? 'The continued runs are queued in the engine for whichever worker is free.'
        : 'A running `maestro watch` resumes the continued runs; or resume one now: maestro run --resume <run_id>',
    );
  }
  io.stdout.write(`${lines.join('\n')}\n`);
}
