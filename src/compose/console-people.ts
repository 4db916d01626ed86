import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { writeFileAtomically } from '../adapters/fs/atomic-file.js';
import { loadWorkspaceConfig } from '../config.js';
import { type ConsolePeopleFile, parseConsolePeople } from '../domain/console-settings.js';
import { InvalidInputError } from '../domain/errors.js';

/** What adding a person did: the file written, and whether an earlier token of theirs stopped working. */
export interface PersonAdded {
  readonly file: string;
  readonly replaced: boolean;
}

/**
 * Adds a person (or with `replace`, gives them a new token) in the workspace's tokens file
 * (`ui.tokens_file`), which keeps each token as its SHA-256. The file is written whole, for its
 * owner alone (0600); a running console reads it again at its next request.
 */
export async function addConsolePerson(options: {
  readonly workspace: string;
  readonly person: ConsolePeopleFile['people'][number];
  readonly replace: boolean;
}): Promise<PersonAdded> {
  const configFile = path.join(options.workspace, 'maestro.config.json');
  const configured = (await loadWorkspaceConfig(configFile)).ui.tokens_file;
  if (configured === undefined) {
    throw new InvalidInputError(configFile, [
      'ui.tokens_file: not set; name the file that keeps the people, e.g. "ui": {"tokens_file": "maestro.people.json"}',
    ]);
  }
  const file = path.resolve(options.workspace, configured);
  const text = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw new InvalidInputError(file, [`cannot be read (${error.message})`], { cause: error });
  });
  const parsed = text === undefined ? { ok: true as const, value: { people: [] } } : parseConsolePeople(JSON.parse(text));
  if (!parsed.ok) throw new InvalidInputError(file, parsed.issues);
  const same = (p: { name: string }) => p.name.toLowerCase() === options.person.name.toLowerCase();
  const replaced = parsed.value.people.some(same);
  if (replaced && !options.replace) {
    throw new InvalidInputError(file, [
      `${options.person.name} is listed already; --replace gives them a new token (the old one stops working)`,
    ]);
  }
  const people = [...parsed.value.people.filter((p) => !same(p)), options.person];
  const next = parseConsolePeople({ people });
  if (!next.ok) throw new InvalidInputError(file, next.issues);
  await writeFileAtomically(file, `${JSON.stringify(next.value, null, 2)}\n`, { mode: 0o600 });
  return { file, replaced };
}
