import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { createHash } from 'node:crypto';
import type { Command } from 'commander';
import { openEval, runEval } from '../compose/use-cases.js';
import { resolveWorkspace } from '../config.js';
import { ExitError, InvalidInputError } from '../domain/errors.js';
import { reportMarkdown } from '../domain/eval/markdown.js';
import type { EvalProgress } from '../domain/eval/ports.js';
import { armsFor } from '../domain/eval/report.js';
import { EVAL_MODES, EvalMode } from '../domain/eval/results.js';
import { arithmeticSet, basicsSet, parseUserSet, type EvalItem } from '../domain/eval/task-sets.js';
import { WORKSPACE_OPTION, type Io } from './io.js';

interface EvalFlags {
  set: string;
  items?: string;
  seed: string;
  route?: string;
  model?: string;
  modes: string;
  samples?: string;
  rounds?: string;
  concurrency: string;
  name?: string;
  fresh?: boolean;
  json?: boolean;
  workspace?: string;
}

/** `maestro eval`: measures the council against one call and majority voting, at equal numbers of model calls. */
export function registerEval(program: Command, io: Io): void {
  program
    .command('eval')
    .description('measure the council against a single call and majority voting, at equal numbers of model calls')
    .requiredOption(
      '--set <set>',
      '"arithmetic" (seeded a+b*c+d-e*f), "basics" (bundled short answers) or a JSONL file of {"question","answer"}',
    )
    .option('--items <n>', 'how many items (arithmetic: default 100; a file or basics: default all)')
    .option('--seed <n>', 'seed of the arithmetic set', '1')
    .option(
      '--route <name>',
      'the model route of every call (single calls and every persona); default: single calls on the workspace default_route, personas on their own routes',
    )
    .option('--model <model>', 'the model of that route for this eval')
    .option(
      '--modes <list>',
      `council modes to compare, comma-separated (or "none"): any of ${EvalMode.options.join(', ')}`,
      EVAL_MODES.join(','),
    )
    .option('--samples <list>', 'extra self-consistency arms with these numbers of samples, comma-separated (e.g. 5,9)')
    .option('--rounds <n>', 'council rounds (default: the workspace max_rounds)')
    .option('--concurrency <n>', 'items in flight at once (each route keeps its own limits)', '2')
    .option(
      '--name <name>',
      'name of the eval (its folder .maestro/eval/<name>); default: made from the settings, so the same command resumes',
    )
    .option('--fresh', 'start the eval over, dropping the results it has')
    .option('--json', 'print the JSON report instead of the table')
    .option(...WORKSPACE_OPTION)
    .addHelpText(
      'after',
      "\nResults are kept as they finish in .maestro/eval/<name>/; a cancelled eval goes on where it stopped when run again.\nCouncil runs happen in .maestro/eval/<name>/scratch with persona memory and the loop policy off: the workspace's runs, memory and loop policy are untouched.",
    )
    .action(async (opts: EvalFlags) => {
      const code = await evalSubcommand(opts, io);
      if (code !== 0) throw new ExitError(code);
    });
}

/** A positive whole number from a flag, or a clear refusal. */
function count(flag: string, value: string | undefined, max: number): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > max)
    throw new InvalidInputError(flag, [`must be a whole number from 1 to ${max} (got "${value}")`]);
  return n;
}

async function loadItems(opts: EvalFlags, io: Io): Promise<{ items: EvalItem[]; set: string }> {
  const limit = count('--items', opts.items, 100_000);
  if (opts.set === 'arithmetic') {
    const seed = Number(opts.seed);
    if (!Number.isInteger(seed) || seed < 0) throw new InvalidInputError('--seed', [`must be a whole number ≥ 0 (got "${opts.seed}")`]);
    return { items: arithmeticSet(limit ?? 100, seed), set: `arithmetic (seed ${seed})` };
  }
  if (opts.set === 'basics') return { items: basicsSet(limit), set: 'basics (bundled, Apache-2.0)' };
  const file = path.resolve(io.cwd, opts.set);
  const text = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    throw new InvalidInputError(file, [
      error.code === 'ENOENT' ? 'no such file (--set takes "arithmetic", "basics" or a JSONL file)' : error.message,
    ]);
  });
  const parsed = parseUserSet(text);
  if (!parsed.ok) throw new InvalidInputError(file, parsed.issues);
  return { items: limit === undefined ? parsed.items : parsed.items.slice(0, limit), set: path.basename(file) };
}

function parseModes(list: string): EvalMode[] {
  if (list.trim() === 'none') return [];
  const modes = list
    .split(',')
    .map((m) => m.trim())
    .filter((m) => m !== '');
  const bad = modes.filter((m) => !EvalMode.safeParse(m).success);
  if (bad.length > 0)
    throw new InvalidInputError('--modes', [`unknown mode(s) ${bad.join(', ')}; choose from ${EvalMode.options.join(', ')} (or "none")`]);
  return [...new Set(modes)] as EvalMode[];
}

/** Everything the flags say, checked: the items, the arms, and the spec that names (and guards) the eval's folder. */
async function planEval(opts: EvalFlags, io: Io) {
  const { items, set } = await loadItems(opts, io);
  const modes = parseModes(opts.modes);
  const samples = (opts.samples ?? '')
    .split(',')
    .filter((s) => s.trim() !== '')
    .map((s) => count('--samples', s.trim(), 64) as number);
  const rounds = count('--rounds', opts.rounds, 10);
  const concurrency = count('--concurrency', opts.concurrency, 64) as number;
  const builtIn = opts.set === 'arithmetic' || opts.set === 'basics';
  const spec = {
    set: builtIn ? opts.set : path.resolve(io.cwd, opts.set),
    items: items.map((i) => i.id),
    seed: opts.set === 'arithmetic' ? Number(opts.seed) : undefined,
    route: opts.route ?? null,
    model: opts.model ?? null,
    modes,
    samples,
    rounds: rounds ?? null,
  };
  const digest = createHash('sha256').update(JSON.stringify(spec)).digest('hex').slice(0, 10);
  const name = opts.name ?? `${builtIn ? opts.set : 'file'}-${digest}`;
  if (!/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/.test(name))
    throw new InvalidInputError('--name', ['must be letters, digits, ., - and _ (at most 64)']);
  return { items, set, arms: armsFor(modes, samples), spec, name, rounds, concurrency };
}

async function evalSubcommand(opts: EvalFlags, io: Io): Promise<number> {
  const plan = await planEval(opts, io);
  const opened = await openEval({
    workspace: resolveWorkspace(opts.workspace, io.env, io.cwd),
    env: io.env,
    ...(opts.route ? { route: opts.route } : {}),
    ...(opts.model ? { model: opts.model } : {}),
    name: plan.name,
    spec: plan.spec,
    fresh: opts.fresh === true,
    ...(plan.rounds ? { rounds: plan.rounds } : {}),
  });
  const controller = new AbortController();
  const onSignal = (): void => {
    if (!controller.signal.aborted) return controller.abort(new Error('interrupted'));
    // A second signal leaves at once, by the signal's own default action (what finished is on disk).
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    process.kill(process.pid, 'SIGINT');
  };
  // `on`, not `once` (see run.ts): a `once` listener is gone before it runs, and signal-exit (a
  // library's exit hook) then sees no listener of ours and kills the process before anything is said.
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    const report = await runEval({
      items: plan.items,
      arms: plan.arms,
      caller: opened.caller,
      store: opened.folder,
      concurrency: plan.concurrency,
      onProgress: progressBar(io),
      onNotice: (m) => io.stderr.write(`maestro eval: ${m}\n`),
      signal: controller.signal,
    });
    const heading = { set: plan.set, model: opened.label, rehearsal: opened.rehearsal };
    const markdown = reportMarkdown(report, heading);
    const json = { name: plan.name, ...heading, folder: opened.folder.dir, ...report };
    await opened.folder.writeReport(json, markdown);
    io.stdout.write(opts.json ? `${JSON.stringify(json, null, 2)}\n` : markdown);
    if (!opts.json) io.stdout.write(`\nReport: ${opened.folder.reportMarkdown} (JSON: ${opened.folder.reportJson})\n`);
    return 0;
  } catch (error) {
    if (!controller.signal.aborted) throw error;
    io.stderr.write(
      `\nmaestro eval: interrupted; the results so far are kept in ${opened.folder.dir}. Run the same command again to go on.\n`,
    );
    return 130;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

/** A progress bar on stderr: redrawn in place on a terminal, a line per tenth otherwise. */
function progressBar(io: Io): (p: EvalProgress) => void {
  const tty = io.stderr.isTTY === true && !io.env.CI;
  let lastTenth = -1;
  return (p) => {
    const width = 30;
    const filled = p.total === 0 ? width : Math.round((p.done / p.total) * width);
    const line = `eval [${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${p.done}/${p.total} items · ${p.calls} calls`;
    if (tty) {
      io.stderr.write(`\r${line}${p.done === p.total ? '\n' : ''}`);
      return;
    }
    const tenth = p.total === 0 ? 10 : Math.floor((p.done / p.total) * 10);
    if (tenth === lastTenth) return;
    lastTenth = tenth;
    io.stderr.write(`${line}\n`);
  };
}
