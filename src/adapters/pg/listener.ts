import type pg from 'pg';
import type { PgEngine } from './engine.js';

/**
 * LISTENs on one channel over its own connection, reconnecting when the engine goes away (polling
 * covers the gap). `wait(ms)` resolves on the next notification or after `ms`.
 */
export class PgListener {
  #client: pg.Client | undefined;
  #connecting: Promise<void> | undefined;
  #waiters: (() => void)[] = [];
  /** A notification that came while nobody waited: the next wait returns at once. */
  #missed = false;
  #closed = false;

  constructor(
    private readonly engine: PgEngine,
    private readonly channel: string,
  ) {}

  async wait(ms: number): Promise<void> {
    if (!this.#client && !this.#connecting && !this.#closed)
      this.#connecting = this.#connect().finally(() => (this.#connecting = undefined));
    if (this.#missed) {
      this.#missed = false;
      return;
    }
    await new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.#waiters = this.#waiters.filter((w) => w !== done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.#waiters.push(done);
    });
  }

  async #connect(): Promise<void> {
    const client = this.engine.newClient(`maestro listen ${this.channel}`);
    const drop = (): void => {
      if (this.#client === client) this.#client = undefined;
      void client.end().catch(() => undefined);
    };
    client.on('error', drop);
    client.on('end', drop);
    client.on('notification', () => {
      if (this.#waiters.length === 0) this.#missed = true;
      for (const w of [...this.#waiters]) w();
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${this.channel}`);
      if (this.#closed) return drop();
      this.#client = client;
    } catch {
      drop(); // the engine is away: the caller polls, and the next wait tries again
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.#connecting;
    await this.#client?.end().catch(() => undefined);
    this.#client = undefined;
    for (const w of [...this.#waiters]) w();
  }
}
