import type { Command } from 'commander';
import { commandFileJsonSchema } from '../domain/command-file.js';
import { configReferenceMarkdown, workspaceConfigJsonSchema } from '../domain/workspace-config.js';
import { ExitError } from '../domain/errors.js';
import type { Io } from './io.js';

export function registerSchema(program: Command, io: Io): void {
  program
    .command('schema')
    .description("print the command file's JSON Schema (generated from the validator), for editors; --config for maestro.config.json")
    .option('--config', "the workspace config's (maestro.config.json) JSON Schema instead")
    .option('--markdown', 'with --config: every key, its type, default and meaning as a Markdown table')
    .action((opts: { config?: boolean; markdown?: boolean }) => {
      if (opts.markdown && !opts.config) throw new ExitError(2, 'maestro schema: --markdown goes with --config');
      if (opts.config) io.stdout.write(opts.markdown ? `${configReferenceMarkdown()}\n` : `${JSON.stringify(workspaceConfigJsonSchema(), null, 2)}\n`);
      else io.stdout.write(`${JSON.stringify(commandFileJsonSchema(), null, 2)}\n`);
    });
}
