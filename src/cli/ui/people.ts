import { randomBytes } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { ExitError } from '../../domain/errors.js';
import { type ConsolePeopleFile, parseConsolePeople } from '../../domain/console-settings.js';
import { type ConsolePerson, sha256Hex } from './access.js';

/** A token a person sets must be hard to guess: as long as the one the console draws by itself (in effect). */
const MIN_TOKEN = 24;
/** The smallest number of distinct characters a token set by a person has (a random one has about 20). */
const MIN_TOKEN_VARIETY = 8;

/** A token drawn at random: what the console prints when nobody set one, and what `add-person` hands out. */
export function randomToken(): string {
  return randomBytes(24).toString('base64url');
}

/**
 * Why a token a person set would guard the console poorly, if it would: too short, made of too few
 * characters (`aaaa…`, a pattern repeated, only spaces), or holding what the printed address would
 * mangle (anything outside letters, digits, `-`, `_`, `.` and `~`).
 */
export function tokenProblem(token: string): string | undefined {
  if (token.length < MIN_TOKEN) return `needs at least ${MIN_TOKEN} characters`;
  if (!/^[A-Za-z0-9._~-]+$/.test(token)) return 'takes only letters, digits, -, _, . and ~ (it goes into an address)';
  if (new Set(token).size < MIN_TOKEN_VARIETY) return `needs at least ${MIN_TOKEN_VARIETY} different characters (it is easy to guess)`;
  return undefined;
}

/** The token in `--token-file`: refused when other users may read the file, or when it guards poorly. */
export async function readTokenFile(file: string): Promise<string> {
  const info = await stat(file).catch((error: Error) => {
    throw new ExitError(2, `maestro ui: --token-file ${file} cannot be read (${error.message})`);
  });
  if (process.platform !== 'win32' && (info.mode & 0o077) !== 0) {
    throw new ExitError(2, `maestro ui: other users can read --token-file ${file}; make it yours alone: chmod 600 ${file}`);
  }
  const token = (await readFile(file, 'utf8')).trim();
  const problem = tokenProblem(token);
  if (problem) throw new ExitError(2, `maestro ui: the token in ${file} ${problem}`);
  return token;
}

/**
 * The people of a tokens file, read again whenever the file changes (someone added, or removed, is
 * so at their next request). A file that others may write, or that does not read, lets nobody in
 * (fail closed) and says why once.
 */
export class TokensFile {
  #stamp = '';
  #people: readonly ConsolePerson[] = [];

  constructor(
    private readonly file: string,
    private readonly onProblem: (message: string) => void,
  ) {}

  /** Read once at start: a problem then stops the console with its message. */
  async open(): Promise<this> {
    const problem = await this.#load();
    if (problem) throw new ExitError(2, `maestro ui: ${problem}`);
    return this;
  }

  /** The file now lets nobody in (it does not read, or others may change it): said at sign-in, never a mistyped token. */
  get broken(): boolean {
    return this.#stamp === 'broken';
  }

  async people(): Promise<readonly ConsolePerson[]> {
    const problem = await this.#load();
    if (problem) {
      if (this.#people.length > 0 || this.#stamp !== 'broken')
        this.onProblem(`maestro ui: ${problem}; nobody can sign in until it is fixed`);
      this.#people = [];
      this.#stamp = 'broken';
    }
    return this.#people;
  }

  async #load(): Promise<string | undefined> {
    try {
      const info = await stat(this.file);
      const stamp = `${info.mtimeMs}:${info.size}:${info.mode}`;
      if (stamp === this.#stamp) return undefined;
      if (process.platform !== 'win32' && (info.mode & 0o022) !== 0) {
        return `other users can change the tokens file ${this.file}: chmod 600 ${this.file}`;
      }
      const parsed = parseConsolePeople(JSON.parse(await readFile(this.file, 'utf8')));
      if (!parsed.ok) return `the tokens file ${this.file} is not valid: ${parsed.issues.join('; ')}`;
      this.#people = peopleOf(parsed.value);
      this.#stamp = stamp;
      return undefined;
    } catch (error) {
      return `the tokens file ${this.file} cannot be read (${(error as Error).message})`;
    }
  }
}

function peopleOf(file: ConsolePeopleFile): ConsolePerson[] {
  return file.people.map((p) => ({
    name: p.name,
    tokenSha256: p.token_sha256,
    // A date alone ends as that day starts (UTC).
    expiresAt: p.expires === undefined ? undefined : Date.parse(p.expires),
  }));
}

/** One person with this token, until `expiresAt`: the console's own token (printed, or set with --token-file). */
export function personWithToken(name: string, token: string, expiresAt: number): ConsolePerson {
  return { name, tokenSha256: sha256Hex(token), expiresAt };
}
