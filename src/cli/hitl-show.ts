import type { Command } from 'commander';
import type { App } from '../compose/app.js';
import { shownRun } from '../compose/resume.js';
import { describeContinue } from '../app/hitl.js';
import { conflictFingerprint } from '../app/loop-policy.js';
import { resolveWorkspace } from '../config.js';
import { explainReason } from '../domain/codes.js';
import { ExitError } from '../domain/errors.js';
import { openPause } from '../domain/hitl-decision.js';
import { pausesFor } from '../domain/loop-policy/workspace-loop.js';
import type { RunState } from '../domain/run-state.js';
import { authorText } from './decision-author.js';
import { WORKSPACE_OPTION, type Io } from './io.js';
import { chalkFor } from './style.js';

export function registerShow(hitl: Command, io: Io): void {
  hitl
    .command('show')
    .description('what paused a run and why, the plan if one was made, and what continue would do')
    .argument('<run_id>')
    .option('--json', 'print the details as JSON')
    .option(...WORKSPACE_OPTION)
    .action(async (runId: string, opts: { json?: boolean; workspace?: string }) => {
      const app = await (await import('../compose/app.js')).createApp({
        workspace: resolveWorkspace(opts.workspace, io.env, io.cwd),
        env: io.env,
      });
      const state = await app.deps.ledger.load(runId);
      if (!state) throw new ExitError(2, `maestro: there is no run "${runId}" in this workspace`);
      const details = await showDetails({ app, runId, state });
      if (opts.json) {
        io.stdout.write(`${JSON.stringify(details, null, 2)}\n`);
        return;
      }
      io.stdout.write(renderShow(details, state, io));
    });
}

/**
 * What `hitl show` tells of a run: its pause while it is open (a decided or ended one is history, never
 * offered again), what continue would do, the plan and draft, the decisions so far and who took them.
 */
export async function showDetails(options: { app: App; runId: string; state: RunState }): Promise<ShowDetails> {
  const { app, state } = options;
  const hitlText = await app.deps.ledger.readFile(options.runId, 'hitl.json').catch(() => undefined);
  const hitlFile = readJsonObject(hitlText);
  const loop = await app.deps.loopPolicy.read();
  const pause = openPause(state);
  return {
    run_id: state.run_id,
    status: (await shownRun(app, state)).status,
    // The task as the checkpoint keeps it (screened), and what was taken out of it: categories, never values.
    task: state.command.task_description,
    redacted: state.command_redacted ?? [],
    pause: pause ?? null,
    continue_would: pause ? describeContinue(pause.layer, pause.reason_code) : null,
    plan: pause ? (state.loop_plan ?? null) : null,
    draft: pause ? ((hitlFile.draft as string | null | undefined) ?? null) : null,
    conflict_pauses: pausesFor(loop, conflictFingerprint(state, app.deps.sha256)),
    decisions: state.hitl,
    sealed: state.decision?.sealed ?? false,
  };
}

export interface ShowDetails {
  run_id: string;
  status: string;
  task: string;
  redacted: string[];
  /** The pause a person may decide now; null when there is none (not paused, or its pause was decided). */
  pause: RunState['pause'] | null;
  continue_would: string | null;
  plan: string | null;
  draft: string | null;
  conflict_pauses: number;
  decisions: RunState['hitl'];
  sealed: boolean;
}

function renderShow(d: ShowDetails, state: RunState, io: Io): string {
  const c = chalkFor(io);
  const lines = [
    `${c.bold('Run')} ${d.run_id} — ${d.status}${d.sealed ? c.red(' (sealed: cannot be continued)') : ''}`,
    `${c.bold('Task')} ${d.task.length > 300 ? `${d.task.slice(0, 299)}…` : d.task}`,
  ];
  if (d.redacted.length > 0) {
    const why = 'what was found, never its value: maestro keeps and shows the command screened';
    lines.push(`${c.bold('Redacted')} ${d.redacted.join(', ')} (${why})`);
  }
  if (d.pause) {
    lines.push(
      `${c.bold('Paused')} at ${d.pause.requested_at} by the ${d.pause.layer} layer: ${c.yellow(d.pause.reason_code)} (${explainReason(d.pause.reason_code)})`,
      `${c.bold('Why')} ${d.pause.message}`,
      `${c.bold('Continue would')} ${d.continue_would ?? ''}`,
      `${c.bold('Stop would')} end the run as STOPPED, with an artifact that records the stop`,
    );
  } else lines.push(`${c.bold('Nothing to decide:')} the run is ${d.status}. ${state.summary ?? ''}`.trimEnd());
  lines.push(
    `${c.bold('This conflict has paused')} ${d.conflict_pauses} time(s) in the current council session (a plan is asked for at 3; at 4 the conflict line is stopped).`,
  );
  if (d.plan) lines.push(c.bold('Plan proposed by the council:'), d.plan);
  if (d.draft) lines.push(`${c.bold('Draft artifact')} ${d.draft}`);
  for (const h of d.decisions) {
    const note = h.note ? ` — ${h.note}` : '';
    lines.push(c.dim(`decided ${h.decision} on ${h.pause_id} at ${h.decided_at} by ${authorText(h.by)}${note}`));
  }
  if (d.pause) lines.push('', `Decide: maestro hitl decide ${d.run_id} continue|stop [--note TEXT]`);
  return `${lines.join('\n')}\n`;
}

/** A kept JSON file as an object; nothing when it is missing or does not read (it only adds details). */
function readJsonObject(text: string | undefined): Record<string, unknown> {
  try {
    const json = text === undefined ? undefined : (JSON.parse(text) as unknown);
    return json !== null && typeof json === 'object' ? (json as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
