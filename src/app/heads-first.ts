/**
 * Who goes first on a watcher's thread and disk: a run on its way to its first model call (its
 * head: claimed, checkpoint and audit log opened, gates, memory read), or the writes an earlier run
 * left for after its slot was freed (its tail: its memory saved, its pictures and artifact made
 * durable, its last commit). Heads go first: a tail's writes begin once no head is under way, so the
 * next run's first request never queues behind them for a core, the thread pool or the disk. Tails
 * wait at most `maxWaitMs` (a stream of heads at `--concurrency N` never starves them), and what
 * they write, and when the run counts as finished, does not change: only their order does.
 */
export class HeadsFirst {
  /** Runs claimed whose first call has not started yet. */
  readonly #heads = new Set<string>();
  /** Heads whose first request is being handed over. */
  readonly #leaving = new Set<string>();
  /** A claim may be on its way (the loop is looking for work): it counts as a head until it is known. */
  #claiming = false;
  #waiting: (() => void)[] = [];
  #checking = false;

  constructor(
    private readonly maxWaitMs = 250,
    /**
     * Resolves once the request a run has just begun has left (the model client's own signal; by
     * default at once): a head is done when its first request is on its way, not when it is built.
     */
    private readonly requestSent: () => Promise<void> = () => Promise.resolve(),
  ) {}

  /** The loop is (or is no longer) looking for the next command to claim. */
  claiming(on: boolean): void {
    this.#claiming = on;
    if (!on) this.#check();
  }

  /** A run was claimed: its head begins. */
  begin(runId: string): void {
    this.#heads.add(runId);
  }

  /** The run's first call is starting: its head is done once that request has left. */
  started(runId: string): void {
    if (!this.#heads.has(runId) || this.#leaving.has(runId)) return;
    this.#leaving.add(runId);
    void this.requestSent().then(() => this.end(runId));
  }

  /** The run's head is done (its first request has left, or the run is over without one). */
  end(runId: string): void {
    this.#leaving.delete(runId);
    if (this.#heads.delete(runId)) this.#check();
  }

  /** Resolves once no head is under way (looked at on the event loop's next turn), or after `maxWaitMs`. */
  quiet(): Promise<void> {
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const done = (): void => {
        clearTimeout(timer);
        resolve();
      };
      timer = setTimeout(() => {
        this.#waiting = this.#waiting.filter((w) => w !== done);
        resolve();
      }, this.maxWaitMs);
      timer.unref?.();
      this.#waiting.push(done);
      this.#check();
    });
  }

  /**
   * Lets the tails go when no head is under way, looked at on the next turn: a run freeing its slot
   * wakes the loop, which claims the next command in the same turn or starts looking for one.
   */
  #check(): void {
    if (this.#checking || this.#waiting.length === 0) return;
    this.#checking = true;
    setImmediate(() => {
      this.#checking = false;
      if (this.#claiming || this.#heads.size > 0) return;
      const waiting = this.#waiting;
      this.#waiting = [];
      for (const go of waiting) go();
    });
  }
}
