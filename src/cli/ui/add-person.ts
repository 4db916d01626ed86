import { ExitError } from '../../domain/errors.js';
import { resolveWorkspace } from '../../config.js';
import type { Io } from '../io.js';
import { sha256Hex } from './access.js';
import { randomToken } from './people.js';

/** `maestro ui add-person NAME`: a new token for one person, printed once; the tokens file keeps its hash. */
export async function addPerson(io: Io, name: string, opts: { expires?: string; replace?: boolean; workspace?: string }): Promise<void> {
  if (opts.expires !== undefined && Number.isNaN(Date.parse(opts.expires))) {
    throw new ExitError(
      2,
      `maestro ui add-person: --expires takes an ISO date or time (2026-12-31, 2026-12-31T18:00:00Z), not "${opts.expires}"`,
    );
  }
  if (opts.expires !== undefined && Date.parse(opts.expires) <= Date.now()) {
    throw new ExitError(
      2,
      `maestro ui add-person: --expires ${opts.expires} is already past (it is ${new Date().toISOString()}): the token would never work; give a later date or time, or none`,
    );
  }
  const token = randomToken();
  const { addConsolePerson } = await import('../../compose/console.js');
  const person = { name, token_sha256: sha256Hex(token), ...(opts.expires !== undefined ? { expires: opts.expires } : {}) };
  const added = await addConsolePerson({
    workspace: resolveWorkspace(opts.workspace, io.env, io.cwd),
    person,
    replace: opts.replace === true,
  });
  io.stdout.write(
    [
      `${added.replaced ? 'New token' : 'Token'} for ${name}${opts.expires ? ` (until ${opts.expires})` : ''}, kept in ${added.file} as its hash:`,
      '',
      `  ${token}`,
      '',
      'Give it to them privately: it is shown this once. They sign in to the console with it, and each of their decisions records their name.',
      added.replaced ? 'Their earlier token no longer works.\n' : '',
    ].join('\n'),
  );
}
