import { RunHeldError } from '../../src/domain/errors.js';
import type { DecisionInbox, RunHold, RunHolds } from '../../src/domain/ports.js';
import {
  compareReadyFiles,
  type Claim,
  type ClaimStore,
  type CommandInbox,
  type ReadyFile,
  type Rejection,
} from '../../src/domain/queue.js';

/** `continue` decisions in memory: posted once, taken by exactly one claimer. */
export class InMemoryDecisionInbox implements DecisionInbox {
  readonly posted = new Map<string, { pause_id: string; decided_at: string }>();
  readonly #claimed = new Set<string>();

  async post(runId: string, decision: { pause_id: string; decided_at: string }): Promise<void> {
    this.posted.set(runId, decision);
    this.#claimed.delete(runId);
  }

  async claim(runId: string): Promise<boolean> {
    if (!this.posted.has(runId) || this.#claimed.has(runId)) return false;
    this.#claimed.add(runId);
    return true;
  }

  async pending(): Promise<string[]> {
    return [...this.posted.keys()].filter((id) => !this.#claimed.has(id)).sort();
  }
}

/** A `commands/` folder in memory: files dropped are ready at once, oldest first. */
export class InMemoryCommandInbox implements CommandInbox {
  readonly #ready: ReadyFile[] = [];
  #onReady: (() => void) | undefined;
  #clock = 0;
  closed = false;

  /** A command file arrives (its text goes to the claim store, which reads claimed files). */
  drop(name: string): void {
    this.#ready.push({ name, mtimeMs: this.#clock++ });
    this.#ready.sort(compareReadyFiles);
    this.#onReady?.();
  }

  async start(onReady: () => void): Promise<void> {
    this.#onReady = onReady;
  }

  take(): ReadyFile | undefined {
    return this.#ready.shift();
  }

  putBack(file: ReadyFile): void {
    this.#ready.push(file);
    this.#ready.sort(compareReadyFiles);
  }

  get pending(): number {
    return 0;
  }

  get ready(): number {
    return this.#ready.length;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.#onReady = undefined;
  }
}

/**
 * `.maestro/inflight/` in memory: a dropped command's text by file name, claims by run id, and where
 * each claim ended (released, or rejected with its reason).
 */
export class InMemoryClaimStore implements ClaimStore {
  /** Command texts by file name, as they are in `commands/`. */
  readonly texts = new Map<string, string>();
  readonly claims = new Map<string, Claim>();
  readonly released: string[] = [];
  readonly rejected = new Map<string, Rejection>();
  readonly failures = new Map<string, string[]>();
  /** Claims a watcher that died left behind, handed to the next `recoverOrphans`. */
  orphans: Claim[] = [];

  constructor(private readonly now: () => string = () => '2026-01-01T00:00:00.000Z') {}

  async claim(file: ReadyFile, runId: string): Promise<Claim | undefined> {
    const claim: Claim = { runId, source: file.name, claimedAt: this.now(), recovered: false, kind: 'command' };
    this.claims.set(runId, claim);
    return claim;
  }

  async claimDecision(_file: ReadyFile, runId: string, source: string): Promise<Claim | undefined> {
    const claim: Claim = { runId, source, claimedAt: this.now(), recovered: false, kind: 'decision' };
    this.claims.set(runId, claim);
    return claim;
  }

  async recoverOrphans(): Promise<{ recovered: Claim[]; ownedByOthers: number }> {
    const recovered = this.orphans.map((c) => ({ ...c, recovered: true }));
    this.orphans = [];
    for (const c of recovered) this.claims.set(c.runId, c);
    return { recovered, ownedByOthers: 0 };
  }

  async read(claim: Claim): Promise<string> {
    // As in .maestro/inflight/: a claim let go (written back, rejected) has no file left to read.
    if (this.released.includes(claim.runId) || this.rejected.has(claim.runId))
      throw new Error(`ENOENT: no such file or directory, open '.maestro/inflight/${claim.runId}.json'`);
    const text = this.texts.get(claim.source);
    if (text === undefined) throw new Error(`${claim.source} is gone`);
    return text;
  }

  async release(claim: Claim): Promise<void> {
    this.claims.delete(claim.runId);
    this.released.push(claim.runId);
  }

  async reject(claim: Claim, rejection: Rejection, options: { readonly as?: string } = {}): Promise<string | null> {
    this.claims.delete(claim.runId);
    this.rejected.set(claim.runId, rejection);
    return `.maestro/rejected/${options.as ?? claim.source}`;
  }

  async recordFailure(claim: Claim, reason: string): Promise<string[]> {
    const reasons = [...(this.failures.get(claim.runId) ?? []), reason];
    this.failures.set(claim.runId, reasons);
    return reasons;
  }
}

/** Runs' holds in memory: one holder per run at a time, as the files' and the engine's holds keep it. */
export class InMemoryRunHolds implements RunHolds {
  readonly #held = new Set<string>();

  async hold(runId: string): Promise<RunHold> {
    if (this.#held.has(runId)) throw new RunHeldError(runId);
    this.#held.add(runId);
    return { release: async () => void this.#held.delete(runId) };
  }
}
