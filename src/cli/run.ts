import { createReadStream } from 'node:fs';
import { realpath } from 'node:fs/promises';
import path from 'node:path';
import type { Command } from 'commander';
import { resolveWorkspace } from '../config.js';
import { MAX_COMMAND_BYTES } from '../domain/command-file.js';
import { ExitError } from '../domain/errors.js';
import { WORKSPACE_OPTION, type Io } from './io.js';
import { withRunContext } from './run-context.js';
import { noRun, reportOutcome, type ShownOutcome } from './run-outcome.js';
import { cliAuthor } from './decision-author.js';

export function registerRun(program: Command, io: Io): void {
  program
    .command('run')
    .description('run one command file now, in the foreground')
    .argument('[command.json]', 'the command file (it is read, never modified or deleted); - reads it from standard input')
    .option('--resume <run_id>', 'resume an interrupted run, or one a person chose to continue, from its checkpoint')
    .option(
      '--json',
      'print one JSON object {run_id, status, decision, reason_code, artifact, audit_log} on stdout (with --follow: one JSON object per event, the outcome last)',
    )
    .option(
      '--follow',
      'show the council as it works: each reply as it arrives, knowledge requests, verdicts, arbitration (screened like everything kept)',
    )
    .option(...WORKSPACE_OPTION)
    .option('--route <name>', 'use this model route (from maestro.config.json) for every persona, this time only')
    .option(
      '--model <model>',
      'use this model on the route in use; on the offline route it means an OpenAI-compatible endpoint ($OPENAI_BASE_URL, $OPENAI_API_KEY)',
    )
    .option('--record <file>', 'save every model exchange of this run as a cassette (requests digested, replies kept, secrets redacted)')
    .option('--replay <file>', 'answer every model call from a cassette: no network, the same artifact')
    .addHelpText(
      'after',
      '\nExit codes: 0 completed · 1 error (the environment, or a bug) · 2 invalid or refused · 3 paused for a person · 4 stopped · 5 stopped by a guardrail · 130 interrupted',
    )
    .action(async (file: string | undefined, opts: RunFlags) => {
      const code = await runSubcommand(file, opts, io);
      if (code !== 0) throw new ExitError(code);
    });
}

interface RunFlags {
  json?: boolean;
  follow?: boolean;
  record?: string;
  replay?: string;
  resume?: string;
  workspace?: string;
  route?: string;
  model?: string;
}

async function runSubcommand(file: string | undefined, opts: RunFlags, io: Io): Promise<number> {
  if ((file === undefined) === (opts.resume === undefined)) {
    return reportOutcome(io, opts, noRun('invalid', 'maestro run: give either a command file (or - for stdin) or --resume <run_id>'));
  }
  // "run --resume --json": the option took the next flag for its run id.
  if (opts.resume?.startsWith('-')) {
    const asked = { ...opts, json: opts.json || opts.resume === '--json' };
    return reportOutcome(
      io,
      asked,
      noRun('invalid', `maestro run: --resume needs a run id before "${opts.resume}" (maestro runs lists them)`),
    );
  }
  if (opts.record && opts.replay) {
    return reportOutcome(
      io,
      opts,
      noRun('invalid', 'maestro run: --record and --replay do not go together: a replay makes no model call to record'),
    );
  }
  const workspace = resolveWorkspace(opts.workspace, io.env, io.cwd);
  const read = file === undefined ? { text: '', source: '' } : await readCommand(file, workspace, io);
  if ('refused' in read) return reportOutcome(io, opts, read.refused);
  return withRunContext(io, opts, workspace, async (app, run) => {
    if (opts.resume !== undefined) {
      run.id = opts.resume;
      return app.resume(opts.resume, cliAuthor());
    }
    run.id = app.newRunId();
    return app.run({ text: read.text, source: read.source, runId: run.id });
  });
}

/** The command file's text (`-`: standard input), or why it is refused before any run. */
async function readCommand(file: string, workspace: string, io: Io): Promise<{ text: string; source: string } | { refused: ShownOutcome }> {
  if (file === '-') return capped(await readAll(io.stdin ?? process.stdin), 'stdin', file);
  const commandPath = path.resolve(io.cwd, file);
  // A file in the drop folder belongs to the watcher: running it here as well would run it twice. Through a link
  // to the folder or to the file too: what is compared is where the file really is.
  const drop = path.join(workspace, 'commands');
  const [real, realDrop] = await Promise.all([realpath(commandPath).catch(() => commandPath), realpath(drop).catch(() => drop)]);
  if (path.dirname(commandPath) === drop || path.dirname(real) === realDrop) {
    const why =
      `maestro run: ${file} is in the drop folder that \`maestro watch\` serves, so a watcher would run it again. ` +
      'Process the folder with `maestro watch --once`, or run a copy kept outside commands/.';
    return { refused: noRun('refused', why) };
  }
  try {
    return capped(await readAll(createReadStream(commandPath, { end: MAX_COMMAND_BYTES })), path.basename(commandPath), file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const reason = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'is a folder' : (error as Error).message;
    return { refused: noRun('invalid', `cannot read ${file}: ${reason}`) };
  }
}

/** The text, or its refusal when it is longer than a command file may be (as the watcher refuses one). */
function capped(bytes: Buffer, source: string, file: string): { text: string; source: string } | { refused: ShownOutcome } {
  if (bytes.length <= MAX_COMMAND_BYTES) return { text: bytes.toString('utf8'), source };
  return { refused: noRun('invalid', `${file}: a command file may be at most ${MAX_COMMAND_BYTES} bytes; this one is longer`) };
}

/** At most one byte past the limit of what a stream holds (a stream past it is not read to its end). */
async function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    chunks.push(buffer);
    size += buffer.length;
    if (size > MAX_COMMAND_BYTES) break;
  }
  return Buffer.concat(chunks);
}
