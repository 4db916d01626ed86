import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Command } from 'commander';
import { FsPersonaStore } from '../adapters/fs-persona-store.js';
import { checkOutputPath, lexicalWorkspacePath } from '../adapters/fs-knowledge-base.js';
import { WorkspacePaths } from '../adapters/workspace-paths.js';
import { resolveWorkspace } from '../config.js';
import { findPersonaProblems, parseCommandText } from '../domain/command-file.js';
import { ExitError } from '../domain/errors.js';
import { WORKSPACE_OPTION, type Io } from './io.js';
import { chalkFor } from './style.js';

export function registerValidate(program: Command, io: Io): void {
  program
    .command('validate')
    .description('check a command file without running it: schema, personas, paths')
    .argument('<command.json>', 'the command file to check')
    .option(...WORKSPACE_OPTION)
    .addHelpText('after', '\nPrints every problem as "path: message". Exit codes: 0 valid · 2 invalid.')
    .action(async (file: string, opts: { workspace?: string }) => {
      const problems = await validateCommandFile(path.resolve(io.cwd, file), resolveWorkspace(opts.workspace, io.env, io.cwd));
      const c = chalkFor(io);
      if (problems.length > 0) {
        io.stderr.write(`${c.red('✖')} ${file} is not valid:\n${problems.map((p) => `  ${p}`).join('\n')}\n`);
        throw new ExitError(2);
      }
      io.stdout.write(`${c.green('✔')} ${file} is a valid command file\n`);
    });
}

/** Every problem with a command file as `path: message`; empty when it would be accepted. */
export async function validateCommandFile(file: string, workspace: string): Promise<string[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    return [`(file): cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`];
  }
  const parsed = parseCommandText(text);
  if (!parsed.ok) return parsed.issues;
  const command = parsed.value;
  const paths = new WorkspacePaths(workspace);
  const problems: string[] = [];

  const { personas, problems: personaProblems } = await new FsPersonaStore(paths.personas).loadAll();
  for (const p of personaProblems) problems.push(...p.issues.map((i) => `${p.file}: ${i}`));
  const known = new Set(personas.map((p) => p.id));
  // The same persona check as a run's meaning gate (speakers, synthesizer, supervisor, reviewer, work items' agents).
  for (const p of findPersonaProblems(command, known)) {
    problems.push(`${p.field}: ${p.message}${p.kind === 'unknown' ? ` in ${paths.relative(paths.personas) || 'personas'}/` : ''}`);
  }
  if (command.output_artifact_path) {
    const out = await checkOutputPath(paths.root, command.output_artifact_path, command.input_artifacts);
    if (!out.ok) problems.push(`output_artifact_path: ${out.reason}`);
  }
  command.input_artifacts.forEach((p, i) => {
    const lexical = lexicalWorkspacePath(paths.root, p);
    if (!lexical.ok) problems.push(`input_artifacts.${i}: ${lexical.reason}`);
  });
  return problems;
}
