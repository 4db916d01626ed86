import { stripVTControlCharacters } from 'node:util';
import { type Command, Option } from 'commander';
import { parseCount } from './concurrency-option.js';
import type { RunListing } from '../compose/use-cases.js';
import { loadWorkspaceConfig } from '../config.js';
import { DURATION_UNITS, parseDurationMs } from '../domain/durations.js';
import { ExitError } from '../domain/errors.js';
import { SHOWN_RUN_STATUSES } from '../domain/run-liveness.js';
import { renderTranscript } from '../domain/transcript.js';
import { runCalls, totalUsage } from '../domain/usage.js';
import { WORKSPACE_OPTION, type Io } from './io.js';
import { openWorkspaceAt } from './open-workspace.js';
import { chalkFor } from './style.js';

const LISTED_STATUSES = SHOWN_RUN_STATUSES;

interface RunsFlags {
  readonly status?: string;
  readonly since?: string;
  readonly json?: boolean;
  readonly limit: number;
  readonly workspace?: string;
}

/** `maestro runs`: every run of the workspace, invalid ones too, newest first. */
export function registerRuns(program: Command, io: Io): void {
  program
    .command('runs')
    .description('list every run (invalid ones too): status, reason, task, model, calls, tokens, cost')
    .option('--status <list>', `only these statuses, comma-separated (${LISTED_STATUSES.join(', ')})`)
    .option('--since <when>', 'only runs started since a time (ISO date or time) or within a duration (10s, 30m, 12h, 7d, 2w)')
    .option('-n, --limit <count>', 'at most this many runs (0: all)', parseCount, 50)
    .option('--json', 'one JSON array of runs')
    .option(...WORKSPACE_OPTION)
    .addHelpText('after', '\nRead one run in full with "maestro show <run_id>".')
    .action(async (opts: RunsFlags) => {
      const statuses = opts.status === undefined ? undefined : parseStatuses(opts.status);
      const since = opts.since === undefined ? undefined : parseSince(opts.since, new Date());
      const workspace = await openWorkspaceAt(io, opts.workspace);
      const config = await loadWorkspaceConfig(workspace.paths.config);
      const all = await workspace.runs.list(config.prices);
      const matching = all.filter((r) => (!statuses || statuses.has(r.status)) && (!since || r.started_at >= since.toISOString()));
      const runs = opts.limit > 0 ? matching.slice(0, opts.limit) : matching;
      // With none to list, a filter that left every run out says so: a hint to start a run is for an empty workspace.
      const filtered =
        all.length > 0
          ? `no runs match ${[opts.status && `--status ${opts.status}`, opts.since && `--since ${opts.since}`].filter(Boolean).join(' ')} (${all.length} run(s) in all)\n`
          : undefined;
      io.stdout.write(opts.json ? `${JSON.stringify(runs, null, 2)}\n` : runs.length === 0 && filtered ? filtered : formatRuns(runs, io));
      // A list cut short says so, and how to see the rest (the JSON array stays a plain array).
      if (!opts.json && runs.length < matching.length)
        io.stdout.write(`${matching.length - runs.length} older run(s) not shown: maestro runs -n 0 lists them all\n`);
    });
}

/** `maestro show <run_id>`: one run's transcript in the terminal. */
export function registerShow(program: Command, io: Io): void {
  program
    .command('show')
    .description('one run in full: the transcript, knowledge requests, verdicts, the decision trail and the outcome')
    .argument('<run_id>', 'the run (see "maestro runs")')
    .addOption(new Option('--raw', 'print the Markdown as it is, not rendered for a terminal').conflicts('json'))
    .option('--json', 'print the run as one JSON object: its status, outcome and orchestration result (seed 001), not the transcript')
    .option(...WORKSPACE_OPTION)
    .action(async (runId: string, opts: { raw?: boolean; json?: boolean; workspace?: string }) => {
      const workspace = await openWorkspaceAt(io, opts.workspace);
      const { paths } = workspace;
      const state = /^[A-Za-z0-9_.-]+$/.test(runId) ? await workspace.runs.read(runId) : undefined;
      if (!state) {
        const known = (await workspace.runs.list({})).find((r) => r.run_id === runId);
        // A checkpoint that is there but does not read: a file to look at (exit 1), not a run that never had one.
        if (known?.checkpoint_unreadable !== undefined)
          throw new ExitError(
            1,
            `maestro show: run ${runId}'s checkpoint cannot be read (${known.checkpoint_unreadable}); look with: ${known.next_step}`,
          );
        throw new ExitError(
          2,
          known
            ? known.status === 'unknown' && known.next_step
              ? `maestro show: run ${runId} has no transcript: it died before its first checkpoint; run its command again with: ${known.next_step}`
              : `maestro show: run ${runId} has no transcript: it ended ${known.status}${known.reason_code ? ` (${known.reason_code})` : ''} before any checkpoint was kept; its audit log: maestro audit show ${runId}`
            : `maestro show: there is no run "${runId}" in ${paths.root} (list them with "maestro runs")`,
          'refused',
        );
      }
      const shown = await workspace.runs.shown(state);
      const prices = (await loadWorkspaceConfig(paths.config).catch(() => undefined))?.prices ?? {};
      if (opts.json) {
        const orchestration = (await workspace.runs.orchestration(runId)) ?? null;
        const { run_id, created_at, plan } = state;
        const { unpriced: _, ...usage } = totalUsage(runCalls(state), prices);
        const view = {
          run_id,
          status: shown.status,
          created_at,
          mode: plan?.mode ?? null,
          summary: state.summary ?? null,
          floor: state.floor ?? null,
          usage: { ...usage, cost_usd: usage.cost_usd ?? null },
          orchestration,
        };
        io.stdout.write(`${JSON.stringify(view, null, 2)}\n`);
        return;
      }
      const markdown = renderTranscript(state, shown.status, { prices });
      io.stdout.write(opts.raw ? markdown : await renderForTerminal(markdown, io));
    });
}

function parseStatuses(list: string): Set<string> {
  const wanted = list
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const unknown = wanted.filter((s) => !(LISTED_STATUSES as readonly string[]).includes(s));
  if (wanted.length === 0 || unknown.length > 0) {
    throw new ExitError(
      2,
      `maestro runs: --status takes ${LISTED_STATUSES.join(', ')} (comma-separated)${unknown.length > 0 ? `, not ${unknown.map((s) => `"${s}"`).join(', ')}` : ''}`,
    );
  }
  return new Set(wanted);
}

/** `--since`: a duration back from now (`10s`, `30m`, `12h`, `7d`, `2w`: durations.ts) or an ISO date or time. */
export function parseSince(text: string, now: Date): Date {
  const ms = parseDurationMs(text);
  if (ms !== undefined) return new Date(now.getTime() - ms);
  const date = /^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(text.trim()) ? new Date(text.trim()) : new Date(Number.NaN);
  if (Number.isNaN(date.getTime()))
    throw new ExitError(
      2,
      `maestro runs: --since takes a duration (10s, 30m, 12h, 7d, 2w; units: ${DURATION_UNITS}) or a date such as 2026-11-01, not "${text}"`,
    );
  return date;
}

/** Statuses that wait for something (a process, a person, a resume) rather than having ended. */
const WAITING = new Set(['running', 'paused', 'interrupted', 'continued']);

function formatRuns(runs: readonly RunListing[], io: Io): string {
  if (runs.length === 0)
    return 'no runs match (run one with "maestro run <command.json>", or drop it into commands/ for "maestro watch")\n';
  const c = chalkFor(io);
  const badge = (s: string): string => (s === 'completed' ? c.green(s) : WAITING.has(s.trim()) ? c.yellow(s) : c.red(s));
  const lines = runs.map((r) => {
    const usage =
      r.calls > 0
        ? ` · ${r.calls} calls, ${r.prompt_tokens}+${r.completion_tokens} tokens${r.cost_usd ? `, $${r.cost_usd.toFixed(4)}` : ''}`
        : '';
    const what =
      r.task ??
      (r.status === 'invalid'
        ? '(the command file was not valid)'
        : r.checkpoint_unreadable !== undefined
          ? `(its checkpoint cannot be read: ${r.checkpoint_unreadable}; it may be waiting for a person) — look with: ${r.next_step}`
          : '(no checkpoint)');
    const next =
      r.status === 'interrupted' && r.next_step
        ? `
    nobody is running it — ${r.requeued ? `queued again: the next free worker resumes it, or now: ${r.next_step}` : `resume with: ${r.next_step}`}`
        : r.status === 'continued' && r.next_step
          ? `
    a person chose continue; the next "maestro watch" resumes it, or now: ${r.next_step}`
          : r.status === 'unknown' && r.next_step
            ? `
    it died before its first checkpoint; its command is kept — run it again with: ${r.next_step}`
            : '';
    const redacted = r.redacted.length > 0 ? ` · redacted: ${r.redacted.join(', ')}` : '';
    const model = r.model ? ` · ${r.model}` : '';
    return `${c.dim(r.run_id)} ${badge(r.status.padEnd(11))} ${r.reason_code ?? ''}
    ${what}${redacted}${model}${usage}${next}`;
  });
  return `${lines.join('\n')}\n${c.dim(`${runs.length} run(s), newest first · maestro show <run_id> reads one`)}\n`;
}

/** Markdown for a terminal (marked + marked-terminal, loaded only here); plain when colour is off. */
async function renderForTerminal(markdown: string, io: Io): Promise<string> {
  const [{ Marked }, { markedTerminal }] = await Promise.all([import('marked'), import('marked-terminal')]);
  const width = io.stdout.isTTY ? Math.max(40, Math.min((io.stdout as { columns?: number }).columns ?? 100, 120)) : 100;
  const marked = new Marked();
  marked.use(markedTerminal({ width, reflowText: true, tab: 2 }) as Parameters<typeof marked.use>[0]);
  const rendered = await marked.parse(markdown);
  return chalkFor(io).level === 0 ? stripVTControlCharacters(rendered) : rendered;
}
