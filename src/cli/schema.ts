import type { Command } from 'commander';
import { commandFileJsonSchema } from '../domain/command-file.js';
import type { Io } from './io.js';

export function registerSchema(program: Command, io: Io): void {
  program
    .command('schema')
    .description("print the command file's JSON Schema (generated from the validator), for editors")
    .action(() => {
      io.stdout.write(`${JSON.stringify(commandFileJsonSchema(), null, 2)}\n`);
    });
}
