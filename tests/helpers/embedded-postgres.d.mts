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
