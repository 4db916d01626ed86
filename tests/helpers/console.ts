import type { ConsoleBackend } from '../../src/compose/console.js';
import { ConsoleAccess, type ConsolePerson } from '../../src/cli/ui/access.js';
import { personWithToken } from '../../src/cli/ui/people.js';
import { consoleServer, type ConsoleServerOptions } from '../../src/cli/ui/server.js';

/** The console's HTTP surface in-process, with one tab signed in (as the page's script does it). */
export async function signedInConsole(
  backend: ConsoleBackend,
  options: { host: string; token: string; name?: string; people?: readonly ConsolePerson[]; extra?: Partial<ConsoleServerOptions> },
) {
  const origin = `http://${options.host}`;
  const people = options.people ?? [personWithToken(options.name ?? 'tester', options.token, Date.now() + 3_600_000)];
  const access = new ConsoleAccess({ people: async () => people, sessionTtlMs: 3_600_000, now: Date.now });
  const server = consoleServer({ backend, access, hosts: () => [options.host], ...options.extra });
  const signIn = async (token: string) =>
    server.request(`${origin}/session`, {
      method: 'POST',
      body: JSON.stringify({ token }),
      headers: { host: options.host, origin, 'content-type': 'application/json' },
    });
  const session = ((await (await signIn(options.token)).json()) as { session: string }).session;
  const auth = { host: options.host, authorization: `Bearer ${session}` };
  const get = (p: string, headers: Record<string, string> = {}) => server.request(`${origin}${p}`, { headers: { ...auth, ...headers } });
  const post = (p: string, form: Record<string, string> | [string, string][], headers: Record<string, string> = {}) =>
    server.request(`${origin}${p}`, {
      method: 'POST',
      body: new URLSearchParams(form),
      headers: { ...auth, origin, 'content-type': 'application/x-www-form-urlencoded', ...headers },
    });
  return { server, access, session, auth, origin, get, post, signIn };
}
