import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** One person who may use the console: a name, the SHA-256 of their token, and when the token stops working. */
export interface ConsolePerson {
  readonly name: string;
  readonly tokenSha256: string;
  /** Milliseconds since the epoch; undefined: the token has no end of its own (a sign-in still lasts `sessionTtlMs`). */
  readonly expiresAt: number | undefined;
}

/** A signed-in browser tab: who, and until when (milliseconds since the epoch). */
export interface ConsoleSession {
  readonly id: string;
  readonly name: string;
  readonly expiresAt: number;
  /** The token it was traded for: a session ends with it (removed from the tokens file, or expired). */
  readonly tokenSha256: string;
}

/**
 * Who may use the console, and the tabs signed in. A person's token is never a credential a browser
 * keeps: a tab trades it once (`signIn`) for a session id that lives in that tab's storage, which the
 * browser keeps per origin (scheme, host and port), and that travels only in an `Authorization`
 * header the console's own script adds. No cookie: a cookie is sent to every port of a host, so any
 * local service a browser visits would receive it.
 */
export class ConsoleAccess {
  readonly #sessions = new Map<string, ConsoleSession>();

  constructor(
    private readonly options: {
      /** The people now (a tokens file is read again when it changes). */
      readonly people: () => Promise<readonly ConsolePerson[]>;
      /** How long a sign-in lasts (never past its token's own end). */
      readonly sessionTtlMs: number;
      readonly now: () => number;
      /** True while nobody can sign in whatever the token (the tokens file is broken). */
      readonly closed?: () => boolean;
    },
  ) {}

  /** A new session for the person whose live token this is; undefined for any other text. */
  async signIn(token: string): Promise<ConsoleSession | undefined> {
    const digest = Buffer.from(sha256Hex(token), 'hex');
    const now = this.options.now();
    // Every entry is compared, in constant time: how long a refusal takes says nothing of the tokens.
    let found: ConsolePerson | undefined;
    for (const person of await this.options.people()) {
      if (timingSafeEqual(digest, Buffer.from(person.tokenSha256, 'hex'))) found = person;
    }
    if (!found || !isLive(found, now)) return undefined;
    for (const [id, s] of this.#sessions) if (s.expiresAt <= now) this.#sessions.delete(id);
    const session = {
      id: randomBytes(32).toString('base64url'),
      name: found.name,
      expiresAt: Math.min(now + this.options.sessionTtlMs, found.expiresAt ?? Number.POSITIVE_INFINITY),
      tokenSha256: found.tokenSha256,
    };
    this.#sessions.set(session.id, session);
    return session;
  }

  /** Nobody can sign in now, whatever the token: a refusal says so rather than blame the token. */
  get closed(): boolean {
    return this.options.closed?.() ?? false;
  }

  /** The live session with this id; undefined when there is none, it has expired, or its person's token no longer opens the console. */
  async session(id: string | undefined): Promise<ConsoleSession | undefined> {
    const session = id === undefined ? undefined : this.#sessions.get(id);
    if (!session) return undefined;
    const now = this.options.now();
    const people = await this.options.people();
    const person = people.find((p) => p.tokenSha256 === session.tokenSha256 && p.name === session.name);
    if (session.expiresAt > now && person && isLive(person, now)) return session;
    this.#sessions.delete(session.id);
    return undefined;
  }

  signOut(id: string): void {
    this.#sessions.delete(id);
  }
}

function isLive(person: ConsolePerson, now: number): boolean {
  return person.expiresAt === undefined || person.expiresAt > now;
}

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** The session id an `Authorization: Bearer …` header carries. */
export function bearerOf(header: string | undefined): string | undefined {
  const match = /^Bearer ([A-Za-z0-9_-]{1,100})$/.exec(header ?? '');
  return match?.[1];
}
