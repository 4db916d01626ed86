import type pg from 'pg';
import type { PgEngine } from './engine.js';

/**
 * LISTENs on one channel over its own connection, reconnecting when the engine goes away (the
 * caller's polling covers the gap). `listen(wake)` calls `wake` on each notification; called again,
 * it connects again if the connection was lost.
 */
export class PgListener {
  #client: pg.Client | undefined;
  #connecting: Promise<void> | undefined;
  #wake: () => void = () => undefined;
  #closed = false;

  constructor(
    private readonly engine: PgEngine,
    private readonly channel: string,
  ) {}

  listen(wake: () => void): void {
    this.#wake = wake;
    if (!this.#client && !this.#connecting && !this.#closed)
      this.#connecting = this.#connect().finally(() => (this.#connecting = undefined));
  }

  async #connect(): Promise<void> {
    const client = this.engine.newClient(`maestro listen ${this.channel}`);
    const drop = (): void => {
      if (this.#client === client) this.#client = undefined;
      void client.end().catch(() => undefined);
    };
    client.on('error', drop);
    client.on('end', drop);
    client.on('notification', () => this.#wake());
    try {
      await client.connect();
      await client.query(`LISTEN ${this.channel}`);
      if (this.#closed) return drop();
      this.#client = client;
    } catch {
      drop(); // the engine is away: the caller polls, and the next listen tries again
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.#connecting;
    await this.#client?.end().catch(() => undefined);
    this.#client = undefined;
  }
}
