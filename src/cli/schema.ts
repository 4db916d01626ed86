import type { Command } from 'commander';
import { commandFileJsonSchema } from '../domain/command-file.js';
import { configReferenceMarkdown, workspaceConfigJsonSchema } from '../domain/workspace-config.js';
import { ExitError } from '../domain/errors.js';
import { EVENT_CODES, REASON_CODES } from '../domain/codes.js';
import type { Io } from './io.js';

export function registerSchema(program: Command, io: Io): void {
  program
    .command('schema')
    .description("print the command file's JSON Schema (generated from the validator), for editors; --config for maestro.config.json")
    .option('--config', "the workspace config's (maestro.config.json) JSON Schema instead")
    .option('--markdown', 'with --config: every key, its type, default and meaning as a Markdown table')
    .option(
      '--codes',
      'every event and reason code the audit log, the artifact and the CLI use, with what it means (--json: as one object)',
    )
    .option('--json', 'with --codes: as one JSON object')
    .action((opts: { config?: boolean; markdown?: boolean; codes?: boolean; json?: boolean }) => {
      if (opts.markdown && !opts.config) throw new ExitError(2, 'maestro schema: --markdown goes with --config');
      if (opts.codes) {
        if (opts.json) io.stdout.write(`${JSON.stringify({ events: EVENT_CODES, reasons: REASON_CODES }, null, 2)}\n`);
        else {
          const table = (title: string, codes: Record<string, string>): string =>
            [
              `## ${title}`,
              '',
              '| code | meaning |',
              '|---|---|',
              ...Object.entries(codes).map(([c, m]) => `| \`${c}\` | ${m} |`),
              '',
            ].join('\n');
          io.stdout.write(`${table('Events', EVENT_CODES)}\n${table('Reasons', REASON_CODES)}`);
        }
        return;
      }
      if (opts.config)
        io.stdout.write(opts.markdown ? `${configReferenceMarkdown()}\n` : `${JSON.stringify(workspaceConfigJsonSchema(), null, 2)}\n`);
      else io.stdout.write(`${JSON.stringify(commandFileJsonSchema(), null, 2)}\n`);
    });
}
