export interface EmbeddedPostgres {
  /** Connects as the superuser `maestro` (trust, loopback only) to the database `maestro`. */
  readonly url: string;
  readonly port: number;
  readonly pid: number | undefined;
  /** Another empty database on the same server; its URL. */
  createDatabase(name: string): Promise<string>;
  /** Stops the server (fast shutdown) and starts it again on the same port and data. */
  restart(downMs?: number): Promise<void>;
  /** Stops the server and deletes its data. */
  stop(): Promise<void>;
}

export function startEmbeddedPostgres(options?: { port?: number; database?: string; maxConnections?: number }): Promise<EmbeddedPostgres>;
export const HELPER: string;
export function freePort(): Promise<number>;
/** The suite's one PostgreSQL, with a fresh database of this file's as `url`; undefined outside the suite. */
export function sharedEmbeddedPostgres(): Promise<EmbeddedPostgres | undefined>;
/** The suite's shared PostgreSQL when there is one, else one of this file's own. */
export function testPostgres(options?: { port?: number; database?: string; maxConnections?: number }): Promise<EmbeddedPostgres>;
