import type { WorkClaim, WorkerSession } from '../../src/app/worker-loop.js';

/** A worker's engine session in memory: claims come from `queue`; `lose` breaks it as a lost connection would. */
export class FakeSession implements WorkerSession<WorkClaim> {
  readonly id = 'worker-1';
  alive = true;
  readonly requeued: string[] = [];
  readonly lost: Promise<string>;
  #lose: (why: string) => void = () => undefined;

  constructor(readonly queue: WorkClaim[]) {
    this.lost = new Promise((resolve) => (this.#lose = resolve));
  }

  async claimNext(): Promise<WorkClaim | undefined> {
    return this.queue.shift();
  }

  /** No notifications: the worker looks again every `pollMs`. */
  onWork(): void {}

  async requeue(claim: WorkClaim): Promise<void> {
    this.requeued.push(claim.runId);
  }

  async setCurrent(): Promise<void> {}

  async close(): Promise<void> {
    this.alive = false;
  }

  /** The engine went away (its connection broke). */
  lose(why: string): void {
    this.alive = false;
    this.#lose(why);
  }
}

export const workClaim = (runId: string): WorkClaim => ({
  runId,
  source: `${runId}.json`,
  claimedAt: '2026-01-01T00:00:00.000Z',
  recovered: false,
  kind: 'command',
  epoch: 1,
  inputHashes: {},
});
