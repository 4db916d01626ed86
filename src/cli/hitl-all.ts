import { type DecidedRun, HitlRefusedError } from '../compose/use-cases.js';
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
  const refused = result.runs.filter((r) => 'refused' in r).length;
  if (opts.json) io.stdout.write(`${JSON.stringify({ reason: result.reason, runs: result.runs.map(view) }, null, 2)}\n`);
  else writeDecided(io, result.reason, result.runs, app.continuedBy === 'worker');
  if (refused > 0) throw new ExitError(2);
}

/** One decided run as JSON: its decision and status, or why it was refused. */
function view(r: DecidedRun): Record<string, unknown> {
  const base = { run_id: r.run_id, source: r.source, pause_id: r.pause_id };
  if ('refused' in r) return { ...base, refused: r.refused };
  return r.result.decision === 'stop'
    ? { ...base, decision: 'stop', status: r.result.outcome.status }
    : { ...base, decision: 'continue', status: 'queued to resume' };
}

function writeDecided(io: Io, reason: string, runs: readonly DecidedRun[], engine: boolean): void {
  const c = chalkFor(io);
  const lines = [`${runs.length} run(s) paused for ${reason}:`];
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
