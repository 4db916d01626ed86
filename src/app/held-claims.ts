import type { IntakeQueue } from '../domain/ports.js';
import type { Claim } from '../domain/queue.js';

/**
 * The claims an intake holds in `.maestro/inflight/` that the engine accepted, until their runs are
 * written back; checked against the engine on a timer (default every 30 s) and at once when it comes
 * back. One the engine no longer has (it lost an acknowledged commit, or was restored from a backup)
 * is let go of here, said once, and submitted again by the intake (the engine ignores a run id it has).
 */
export class HeldClaims {
  readonly #held = new Map<string, Claim>();
  readonly #o: { readonly queue: Pick<IntakeQueue, 'known'>; readonly everyMs: number; readonly now: () => number };
  #checkedAt: number;
  #soon = false;

  constructor(options: { readonly queue: Pick<IntakeQueue, 'known'>; readonly everyMs?: number; readonly now?: () => number }) {
    this.#o = { queue: options.queue, everyMs: options.everyMs ?? 30_000, now: options.now ?? Date.now };
    this.#checkedAt = this.#o.now();
  }

  hold(claim: Claim): void {
    this.#held.set(claim.runId, claim);
  }

  release(runId: string): void {
    this.#held.delete(runId);
  }

  /** Check at the next look (the engine is back). */
  checkSoon(): void {
    this.#soon = true;
  }

  /** The held claims the engine no longer has, when a check is due (none otherwise); each is let go of. */
  async lost(): Promise<Claim[]> {
    if (!this.#soon && this.#o.now() - this.#checkedAt < this.#o.everyMs) return [];
    this.#soon = false;
    this.#checkedAt = this.#o.now();
    const held = [...this.#held.values()];
    if (held.length === 0) return [];
    const known = await this.#o.queue.known(held.map((c) => c.runId));
    const lost = held.filter((c) => !known.has(c.runId) && this.#held.get(c.runId) === c);
    for (const claim of lost) this.#held.delete(claim.runId);
    return lost;
  }
}
