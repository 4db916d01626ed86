import path from 'node:path';
import { Option, type Command } from 'commander';
import { ASK_MODE, type AskInput } from '../compose/use-cases.js';
import { resolveWorkspace } from '../config.js';
import { ARBITRATION_STRATEGIES } from '../domain/command-file.js';
import { ExitError } from '../domain/errors.js';
import { COMPOSITIONS, MODES, WEIGHTINGS } from '../domain/modes/settings.js';
import { WORKSPACE_OPTION, type Io } from './io.js';
import { withRunContext } from './run-context.js';
import { reportOutcome } from './run-outcome.js';

interface AskFlags {
  personas?: string;
  mode?: string;
  weighting?: AskInput['weighting'];
  composition?: AskInput['composition'];
  arbitration?: AskInput['arbitration'];
  rounds?: string;
  input?: string[];
  json?: boolean;
  follow?: boolean;
  workspace?: string;
  route?: string;
  model?: string;
}

/**
 * `maestro ask "…"`: seed 001's `orchestrate "task" --personas … --strategy …`, a council without a
 * command file. The question becomes the command a file would be and runs through the same pipeline
 * (validation, floor, gates, policy, audit log, artifact); the answer is the council's final proposal.
 */
export function registerAsk(program: Command, io: Io): void {
  program
    .command('ask')
    .description('ask the council one question in one line: the same pipeline as a command file; prints the answer')
    .argument('<question...>', 'what the council should answer or write (words are joined by spaces)')
    .option('--personas <ids>', 'the personas to ask, comma-separated, in speaking order (default: every persona by its order)')
    .addOption(
      new Option('--mode <mode>', `how the council deliberates (default: ${ASK_MODE}, seed 001's parallel_consensus)`).choices(MODES),
    )
    .addOption(new Option('--weighting <w>', 'weighted_average: what each persona is weighted by').choices(WEIGHTINGS))
    .addOption(new Option('--composition <c>', 'assessment modes: how the assessments are composed').choices(COMPOSITIONS))
    .addOption(new Option('--arbitration <a>', 'how the verdicts are arbitrated').choices(ARBITRATION_STRATEGIES))
    .option('--rounds <n>', 'deliberation rounds, 1-10 (round_robin)')
    .option(
      '--input <file>',
      'a file the council is given in its briefing (a path from here, inside the workspace); repeat it for more: --input a.md --input b.md',
      (file: string, earlier: string[] = []) => [...earlier, file],
    )
    .option('--json', 'print one JSON object: the fields of `run --json` and `answer` (null unless the run completed)')
    .option('--follow', 'show the council as it works (as `run --follow`), then the answer')
    .option(...WORKSPACE_OPTION)
    .option('--route <name>', 'use this model route for every persona, this time only')
    .option('--model <model>', 'use this model on the route in use')
    .addHelpText(
      'after',
      '\nExamples:\n  maestro ask --input docs/changes.md "Draft the release notes"\n  maestro ask "Compare the two plans" --input plan-a.md --input plan-b.md\n\nThe answer goes to stdout; the outcome, the artifact and the audit log to stderr.\nExit codes: as `maestro run` (0 completed, 2 invalid, 3 paused for a person, 4 stopped, 5 stopped by a guardrail, 130 interrupted).',
    )
    .action(async (words: string[], opts: AskFlags) => {
      const code = await askSubcommand(words.join(' '), opts, io);
      if (code !== 0) throw new ExitError(code);
    });
}

async function askSubcommand(question: string, opts: AskFlags, io: Io): Promise<number> {
  const workspace = resolveWorkspace(opts.workspace, io.env, io.cwd);
  const input = askInput(question, opts, { workspace, cwd: io.cwd });
  let answer: string | null = null;
  const run = async (app: Parameters<Parameters<typeof withRunContext>[3]>[0], at: { id: string }) => {
    at.id = app.newRunId();
    const asked = await app.ask(input, at.id);
    answer = asked.answer;
    return asked.outcome;
  };
  return withRunContext(io, opts, workspace, run, async (app, outcome) => {
    if (opts.json) {
      const orchestration = await app.orchestration(outcome.run_id);
      return reportOutcome(io, opts, outcome, { ...(orchestration === undefined ? {} : { orchestration }), answer });
    }
    if (answer !== null) io.stdout.write(`${answer.trimEnd()}\n`);
    // The outcome goes beside the answer, not into it: `maestro ask … > answer.md` keeps the answer alone.
    return reportOutcome({ ...io, stdout: io.stderr }, opts, outcome);
  });
}

/** The flags as the use case's input: personas split, rounds a number, input paths made workspace-relative. */
function askInput(question: string, opts: AskFlags, at: { workspace: string; cwd: string }): AskInput {
  const personas = opts.personas
    ?.split(',')
    .map((p) => p.trim())
    .filter((p) => p.length > 0);
  const twice = personas?.find((p, i) => personas.indexOf(p) !== i);
  if (twice !== undefined) throw new ExitError(2, `maestro ask: --personas names "${twice}" twice: name each persona once`);
  const rounds = opts.rounds === undefined ? undefined : Number(opts.rounds);
  if (rounds !== undefined && (!Number.isInteger(rounds) || rounds < 1 || rounds > 10))
    throw new ExitError(2, `maestro ask: --rounds must be a whole number from 1 to 10, not "${opts.rounds}"`);
  if (question.trim().length === 0) throw new ExitError(2, 'maestro ask: the question is empty: write what the council should answer');
  // A path is given from where the person stands; the command holds it from the workspace. One that
  // leaves the workspace is kept as it leaves, and refused by the same check as in a command file.
  const inputs = (opts.input ?? []).map((p) => path.relative(at.workspace, path.resolve(at.cwd, p)).split(path.sep).join('/'));
  return {
    question,
    ...(personas && personas.length > 0 ? { personas } : {}),
    ...(opts.mode ? { mode: opts.mode } : {}),
    ...(opts.weighting ? { weighting: opts.weighting } : {}),
    ...(opts.composition ? { composition: opts.composition } : {}),
    ...(opts.arbitration ? { arbitration: opts.arbitration } : {}),
    ...(rounds !== undefined ? { rounds } : {}),
    ...(inputs.length > 0 ? { inputs } : {}),
  };
}
