import type { Command } from 'commander';
import { resolveWorkspace } from '../config.js';
import { explainReason } from '../domain/codes.js';
import { ExitError } from '../domain/errors.js';
import type { RunState } from '../domain/run-state.js';
import type { ShowDetails } from '../compose/use-cases.js';
import { authorText } from './decision-author.js';
import { WORKSPACE_OPTION, type Io } from './io.js';
import { withoutCheckpoint } from './run-without-checkpoint.js';
import { chalkFor } from './style.js';

export function registerShow(hitl: Command, io: Io): void {
  hitl
    .command('show')
    .description('what paused a run and why, the plan if one was made, and what continue would do')
    .argument('<run_id>')
    .option('--json', 'print the details as JSON')
    .option(...WORKSPACE_OPTION)
    .action(async (runId: string, opts: { json?: boolean; workspace?: string }) => {
      const app = await (await import('../compose/use-cases.js')).openApp({
        workspace: resolveWorkspace(opts.workspace, io.env, io.cwd),
        env: io.env,
      });
      const shown = await app.pauseDetails(runId);
      if (!shown) {
        // A run `maestro runs` lists (it ended invalid, or before its first checkpoint) is said as what it is.
        const why = await withoutCheckpoint(io, opts.workspace, runId, 'nothing to show or decide');
        throw new ExitError(
          2,
          `maestro hitl show: ${why ?? `there is no run "${runId}" in this workspace (list them with "maestro runs")`}`,
          'refused',
        );
      }
      const { details, state } = shown;
      if (opts.json) {
        io.stdout.write(`${JSON.stringify(details, null, 2)}\n`);
        return;
      }
      io.stdout.write(renderShow(details, state, io));
    });
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
      ...(d.resumes_on_its_own ? [`${c.bold('On its own')} ${d.resumes_on_its_own}`] : []),
    );
  } else {
    const resume =
      d.status === 'continued'
        ? ` A person chose continue; the next "maestro watch" resumes it, or now: maestro run --resume ${d.run_id}.`
        : d.requeued
          ? ` It is queued again: the next free worker resumes it from its checkpoint, or now: maestro run --resume ${d.run_id}.`
          : '';
    lines.push(`${c.bold('Nothing to decide:')} the run is ${d.status}.${resume} ${state.summary ?? ''}`.trimEnd());
  }
  lines.push(
    `${c.bold('This conflict has paused')} ${d.conflict_pauses} time(s) in the current council session (a plan is asked for at 3; at 4 the conflict line is stopped).`,
  );
  if (d.plan) lines.push(c.bold('Plan proposed by the council:'), d.plan);
  if (d.draft) lines.push(`${c.bold('Draft artifact')} ${d.draft}`);
  for (const h of d.decisions) {
    const note = h.note ? ` — ${h.note}` : '';
    lines.push(c.dim(`decided ${h.decision} on ${h.pause_id} at ${h.decided_at} by ${authorText(h.by)}${note}`));
  }
  if (d.pause)
    lines.push(
      '',
      d.conflict_stopped
        ? `Decide: maestro hitl decide ${d.run_id} stop [--note TEXT]`
        : `Decide: maestro hitl decide ${d.run_id} continue|stop [--note TEXT]`,
    );
  return `${lines.join('\n')}\n`;
}
