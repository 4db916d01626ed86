import type { Command } from 'commander';
import type { RouteOutage, WorkspaceStatus } from '../compose/use-cases.js';
import { screenStrings } from '../domain/screen-text.js';
import { parseCount } from './concurrency-option.js';
import { WORKSPACE_OPTION, type Io } from './io.js';
import { openWorkspaceAt } from './open-workspace.js';
import { chalkFor } from './style.js';

export function registerStatus(program: Command, io: Io): void {
  program
    .command('status')
    .description('is a watcher running here; what is queued, in flight, paused for a person; the last runs')
    .option('--json', 'print one JSON object')
    .option('-n, --recent <count>', 'how many recent runs to list (0: all)', parseCount, 10)
    .option(...WORKSPACE_OPTION)
    .action(async (opts: { json?: boolean; recent: number; workspace?: string }) => {
      const workspace = await openWorkspaceAt(io, opts.workspace);
      // -n 0 lists them all, as `runs -n 0` does.
      const recent = opts.recent === 0 ? Number.POSITIVE_INFINITY : opts.recent;
      const base = await workspace.status({ recent });
      // Routes the watcher's breaker holds as down, with the commands and paused runs that wait for them.
      const routes_down = await workspace.routesDown(base.queued.map((q) => q.file)).catch(() => []);
      // Everything shown is screened: a queued file's name, a run's source or message may hold a secret.
      const status = screenStrings({ ...base, routes_down });
      // With an engine, the cluster too: its workers, its queue, every paused run wherever it ran, and
      // its recent runs (the workspace's files hold none of a worker's runs), newest first.
      const cluster = await workspace.cluster(recent);
      const engine = cluster ? screenStrings(cluster) : undefined;
      if (opts.json) io.stdout.write(`${JSON.stringify(engine ? { ...status, engine } : status, null, 2)}\n`);
      else io.stdout.write(formatStatus(status, io) + (engine ? (await import('./status-engine.js')).formatEngineStatus(engine, io) : ''));
    });
}

export function formatStatus(s: WorkspaceStatus & { routes_down?: readonly RouteOutage[] }, io: Io): string {
  const c = chalkFor(io);
  const lines: string[] = [`workspace  ${s.workspace}`];
  lines.push(...watcherLines(s.watchers, c));
  lines.push(
    `queued     ${s.queued.length}${
      s.queued.length > 0
        ? `: ${s.queued
            .slice(0, 10)
            .map((q) => q.file)
            .join(', ')}${s.queued.length > 10 ? ', …' : ''}`
        : ''
    }`,
  );
  lines.push(`in flight  ${s.inflight.length}`);
  for (const f of s.inflight) {
    const owner =
      f.engine !== undefined
        ? inEngineText(f)
        : f.owner_alive
          ? `running in pid ${f.owner_pid}`
          : `its watcher is gone — the next "maestro watch" resumes it, or now: maestro run --resume ${f.run_id}`;
    lines.push(`  ${c.dim(f.run_id)} ${f.source} · ${f.steps_done} step(s) done · ${owner}`);
    for (const w of f.waiting) {
      lines.push(`    ${c.yellow('waiting')} ${w.persona}'s call, for route "${w.route}" (${w.limit}) since ${w.since}`);
    }
  }
  // Only when there are some: a run left running by a process that is gone is the exception.
  if (s.interrupted.length > 0) lines.push(`interrupted ${s.interrupted.length} (left running by a process that is gone)`);
  for (const r of s.interrupted) lines.push(...toResumeLines(r, c));
  if (s.continued.length > 0)
    lines.push(`continued  ${s.continued.length} (a person chose continue; the next "maestro watch" resumes each)`);
  for (const r of s.continued) lines.push(...toResumeLines(r, c));
  for (const r of s.routes_down ?? []) lines.push(...routeDownLines(r, s, c));
  lines.push(`paused     ${s.paused.length}`);
  for (const p of s.paused) {
    lines.push(`  ${c.dim(p.run_id)} ${p.source} · ${p.layer ?? '?'}: ${p.reason_code ?? '?'} — ${p.message.split('\n')[0]}`);
    lines.push(`    decide with: maestro hitl decide ${p.run_id} continue|stop`);
  }
  // A checkpoint that cannot be read may hide a run waiting for a person: named, never left out.
  if (s.unreadable_checkpoints.length > 0)
    lines.push(
      `unreadable ${c.red(String(s.unreadable_checkpoints.length))} (run checkpoints that cannot be read: any may be paused for a person)`,
    );
  for (const u of s.unreadable_checkpoints) lines.push(`  ${c.dim(u.run_id)} ${c.red(u.problem)} · look with: ${u.look}`);
  lines.push(`rejected   ${s.rejected}${s.rejected > 0 ? ' (in .maestro/rejected/, each with <name>.error.json)' : ''}`);
  lines.push(s.recent.length === 0 ? 'recent     no runs yet' : `recent     ${s.recent.length} (newest first)`);
  const badge = (status: string): string =>
    status === 'completed'
      ? c.green(status)
      : ['paused', 'running', 'interrupted', 'continued'].includes(status)
        ? c.yellow(status)
        : c.red(status);
  for (const r of s.recent) {
    const used = r.usage.calls > 0 ? ` · ${r.usage.calls} calls, ${r.usage.prompt_tokens}+${r.usage.completion_tokens} tokens` : '';
    lines.push(
      `  ${c.dim(r.run_id)} ${badge(r.status)} ${r.reason_code ?? ''} · ${r.source ?? 'no checkpoint, only its audit log (maestro audit show)'} · ${r.updated_at}${used}${r.artifact ? ` → ${r.artifact}` : ''}`,
    );
  }
  return `${lines.join('\n')}\n`;
}

/** An intake's claim of a run the engine has (or is about to have): what the engine says of the run. */
function inEngineText(f: WorkspaceStatus['inflight'][number]): string {
  const intake = f.owner_alive ? `the intake (pid ${f.owner_pid})` : 'the next "maestro watch"';
  const e = f.engine;
  if (!e) return `not in the engine yet — ${intake} submits it`;
  if (e.worker) return `running on worker ${e.worker}`;
  if (e.queue === 'queued' || e.queue === 'running') {
    const taken = 'the next free worker resumes it from its checkpoint';
    if (f.run_status === null) return 'queued in the engine for the next free worker';
    if (f.run_status === 'interrupted')
      return `interrupted in the engine: ${e.queue === 'queued' ? 'queued again' : 'its worker is gone'}, ${taken} (or now: maestro run --resume ${f.run_id})`;
    return `${f.run_status} in the engine: queued, ${taken}`;
  }
  return `${f.run_status ?? e.queue} in the engine: ${intake} writes it back`;
}

/** Who takes commands here; a process that took one run over (run --resume, the console) runs that run only. */
function watcherLines(watchers: WorkspaceStatus['watchers'], c: ReturnType<typeof chalkFor>): string[] {
  const live = watchers.filter((w) => w.alive && w.resuming === undefined);
  const stale = watchers.filter((w) => !w.alive);
  return [
    live.length > 0
      ? `watcher    ${c.green('running')} — ${live.map((w) => `pid ${w.pid} since ${w.started_at}${w.once ? ' (--once)' : ''}`).join(', ')}`
      : `watcher    ${c.yellow('not running')} (start one with "maestro watch")`,
    ...watchers
      .filter((w) => w.alive && w.resuming !== undefined)
      .map((w) => `           pid ${w.pid} is resuming run ${w.resuming} only (it takes no command from commands/)`),
    ...(stale.length > 0
      ? [
          `           ${stale.length} stale pid file(s) from watchers that did not stop cleanly: ${stale.map((w) => w.pid).join(', ')} (removed by the next "maestro watch")`,
        ]
      : []),
  ];
}

function toResumeLines(r: WorkspaceStatus['interrupted'][number], c: ReturnType<typeof chalkFor>): string[] {
  return [
    `  ${c.dim(r.run_id)} ${r.source} · ${r.steps_done} step(s) kept · last checkpoint ${r.updated_at}`,
    `    resume with: ${r.next_step}`,
  ];
}

/** A route that is down: since when, why, its probes, and what waits for it. */
function routeDownLines(r: RouteOutage, s: WorkspaceStatus, c: ReturnType<typeof chalkFor>): string[] {
  const live = s.watchers.some((w) => w.alive && w.pid === r.watcher_pid);
  const probing = live
    ? `probed ${r.probes} time(s), next at ${r.next_probe_at}`
    : `as last seen by watcher pid ${r.watcher_pid}, which is not running`;
  const paused = s.paused.filter((p) => p.outage_route === r.route);
  // Each count names its own: the queued commands by file, the paused runs by run id (and command).
  const named = (list: readonly string[]) => (list.length > 0 ? `: ${list.slice(0, 10).join(', ')}${list.length > 10 ? ', …' : ''}` : '');
  const waits = [
    `${r.queued.length} queued command(s)${named(r.queued)}`,
    `${paused.length} run(s) paused by its outage${named(paused.map((p) => `${p.run_id} (${p.source})`))}`,
  ];
  return [
    `route      ${c.red(`${r.route} DOWN`)} since ${r.since} (${r.failure}) · ${probing}`,
    `           ${r.message.split('\n')[0]}`,
    `           waiting for it: ${waits.join('; ')}`,
  ];
}
