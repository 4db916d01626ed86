import { parseCommandText } from '../domain/command-file.js';
import { InvalidInputError } from '../domain/errors.js';
import { type ArtifactPlacement, artifactBase, artifactRunId, describePlacement, moveArtifactFiles } from '../domain/artifact-place.js';
import type { ArtifactWriter, Delivery, InputReader, IntakeQueue } from '../domain/ports.js';

export type { Delivery, IntakeQueue } from '../domain/ports.js';
import type { Claim, ClaimStore, CommandInbox, Rejection, WatchEvent } from '../domain/queue.js';
import { EngineLink, isEngineOutage } from './engine-link.js';
import { fingerprintInputs } from './verified-inputs.js';

export interface IntakeLoopOptions {
  readonly inbox: CommandInbox;
  /** `.maestro/inflight/`: a dropped file is claimed there until its run has ended, as without an engine. */
  readonly claims: ClaimStore;
  readonly queue: IntakeQueue;
  /** The workspace's sandboxed reader: the inputs' fingerprints travel with the command. */
  readonly inputs: InputReader;
  /** Writes artifacts into the workspace (checked again here). */
  readonly artifacts: ArtifactWriter;
  readonly newRunId: () => string;
  readonly onEvent: (event: WatchEvent) => void;
  readonly once: boolean;
  readonly pid: number;
  readonly workspace: string;
  /** How often undelivered runs are looked for without a notification (default 1 s). */
  readonly pollMs?: number;
  /** How often the claims in flight are checked against the engine (default 30 s; also at once when the engine is back). */
  readonly reconcileMs?: number;
  /** The longest pause between tries while the engine is away (default 15 s). */
  readonly maxRetryMs?: number;
  readonly now?: () => number;
}

/**
 * `maestro watch` on a workspace with an engine: the intake. Each file dropped into `commands/` is
 * claimed (renamed into `.maestro/inflight/`, as always), submitted to the engine under its run id
 * with the fingerprints of its inputs, and kept there until its run ends; then the artifact is
 * written into the workspace and the file removed (or moved to `rejected/` with the reason). The
 * workers run the commands. After a crash, claims left in flight are submitted again (a no-op for
 * the engine if it has them) and their results are written back. While it runs, the claims it holds
 * are checked against the engine on a timer and whenever the engine comes back: one the engine no
 * longer has (it lost an acknowledged commit, or was restored from a backup) is submitted again. An
 * engine that goes away is said once, and once when it is back; meanwhile commands wait claimed.
 */
export class IntakeLoop {
  readonly #o: IntakeLoopOptions;
  #stopping = false;
  #busy: Promise<void> = Promise.resolve();
  #again = false;
  #pumping = false;
  #wakeDelivery: (() => void) | undefined;
  readonly #recovered: Claim[] = [];
  #delivering: Promise<void> = Promise.resolve();
  #retry: NodeJS.Timeout | undefined;
  readonly #link: EngineLink;
  /** Claims in .maestro/inflight/ the engine accepted, until written back: what reconciliation checks. */
  readonly #held = new Map<string, Claim>();
  /** Claims the engine refused for a reason of their own (not an outage), said once each. */
  readonly #refusedSaid = new Set<string>();
  #reconciledAt: number;
  #reconcileNow = false;
  #deliverFailure: string | undefined;

  constructor(options: IntakeLoopOptions) {
    this.#o = options;
    this.#link = new EngineLink({
      notice: (message) => this.#notice(null, message),
      meanwhile: 'dropped commands wait claimed in .maestro/inflight/ and are submitted when it is back',
      baseMs: options.pollMs ?? 1000,
      maxMs: options.maxRetryMs ?? 15_000,
      ...(options.now ? { now: options.now } : {}),
    });
    this.#reconciledAt = this.#now();
  }

  async start(): Promise<void> {
    const { recovered } = await this.#o.claims.recoverOrphans();
    this.#recovered.push(...recovered);
    await this.#o.inbox.start(() => this.#wake());
    this.#o.onEvent({
      kind: 'started',
      state: 'AWAITING_COMMAND',
      pid: this.#o.pid,
      workspace: this.#o.workspace,
      once: this.#o.once,
      recovered: recovered.length,
      owned_by_others: 0,
    });
    this.#wake();
    this.#delivering = this.#deliverLoop();
  }

  /** Resolves when stopped: after `stop()`, or with `once` when every submitted run was written back. */
  get stopped(): Promise<void> {
    return this.#delivering;
  }

  async stop(): Promise<void> {
    this.#stopping = true;
    clearTimeout(this.#retry);
    this.#wakeDelivery?.();
    await this.#o.inbox.close();
    await this.#busy;
    await this.#delivering;
  }

  #wake(): void {
    this.#again = true;
    if (this.#pumping || this.#stopping) return;
    this.#pumping = true;
    this.#busy = this.#submitReady().finally(() => {
      this.#pumping = false;
      this.#wakeDelivery?.();
    });
  }

  async #submitReady(): Promise<void> {
    while (this.#again && !this.#stopping) {
      this.#again = false;
      for (const claim of this.#recovered.splice(0)) {
        if (this.#stopping || this.#link.down) this.#recovered.push(claim);
        else await this.#submit(claim);
      }
      // While the engine is away, new files stay in commands/ (unclaimed) until the next try.
      while (!this.#stopping && !this.#link.down) {
        const file = this.#o.inbox.take();
        if (!file) break;
        let claim: Claim | undefined;
        try {
          claim = await this.#o.claims.claim(file, this.#o.newRunId());
        } catch (error) {
          this.#notice(null, `could not claim commands/${file.name}: ${(error as Error).message}; it stays in commands/`);
        }
        if (claim) await this.#submit(claim);
      }
    }
  }

  /** Reads a claimed command and hands it to the engine; a file that cannot be read is rejected here. */
  async #submit(claim: Claim): Promise<void> {
    let body: string;
    try {
      body = await this.#o.claims.read(claim);
    } catch (error) {
      const issues = error instanceof InvalidInputError ? [...error.issues] : [`(root): could not be read (${(error as Error).message})`];
      const rejectedTo = await this.#o.claims
        .reject(claim, {
          status: 'invalid',
          reason_code: 'SPEC_INVALID_INPUT',
          message: `${claim.source} was refused unread`,
          issues,
          audit_log: null,
        })
        .catch(() => null);
      this.#finished({
        run_id: claim.runId,
        source: claim.source,
        status: 'invalid',
        decision: null,
        reason_code: 'SPEC_INVALID_INPUT',
        artifact: null,
        audit_log: null,
        rejected_to: rejectedTo,
        message: `${claim.source} was refused unread: ${issues.join('; ')}`,
      });
      return;
    }
    // An invalid command goes to the engine too: a worker validates it with the one use case and
    // records why in the audit log; it comes back here as rejected.
    const parsed = parseCommandText(body);
    const inputHashes = parsed.ok ? await fingerprintInputs(parsed.value.input_artifacts, this.#o.inputs) : {};
    try {
      const added = await this.#o.queue.submit({ runId: claim.runId, source: claim.source, body, inputHashes });
      if (this.#link.reached()) this.#reconcileNow = true;
      this.#held.set(claim.runId, claim);
      this.#refusedSaid.delete(claim.runId);
      this.#notice(claim.runId, `${claim.source}: ${added ? 'submitted to the engine' : 'already in the engine'} as run ${claim.runId}`);
    } catch (error) {
      this.#submitFailed(claim, error);
    }
  }

  /** It stays claimed in .maestro/inflight/ and is submitted again after a pause (or on the next start). */
  #submitFailed(claim: Claim, error: unknown): void {
    if (isEngineOutage(error)) this.#link.lost(error);
    else if (!this.#refusedSaid.has(claim.runId)) {
      this.#refusedSaid.add(claim.runId);
      this.#notice(
        claim.runId,
        `${claim.source}: could not be submitted (${(error as Error).message}); it stays in .maestro/inflight/ and is submitted again in a moment`,
      );
    }
    this.#recovered.push(claim);
    clearTimeout(this.#retry);
    this.#retry = setTimeout(() => this.#wake(), this.#link.pause());
  }

  /**
   * Submits again every claim this intake holds that the engine no longer has: it lost a submission it
   * had acknowledged (a crash while commits were asynchronous, a restore from a backup). Each loss is
   * submitted once; the engine ignores a run id it has.
   */
  async #reconcile(): Promise<void> {
    this.#reconcileNow = false;
    this.#reconciledAt = this.#now();
    const held = [...this.#held.values()];
    if (held.length === 0) return;
    const known = await this.#o.queue.known(held.map((c) => c.runId));
    const lost = held.filter((c) => !known.has(c.runId) && this.#held.get(c.runId) === c);
    for (const claim of lost) {
      this.#held.delete(claim.runId);
      this.#recovered.push(claim);
      this.#notice(
        claim.runId,
        `${claim.source}: the engine no longer has run ${claim.runId}, which it had accepted (lost in a database crash with asynchronous commits, or by a restore from a backup); submitting it again`,
      );
    }
    if (lost.length > 0) this.#wake();
  }

  #reconcileDue(): boolean {
    return this.#reconcileNow || this.#now() - this.#reconciledAt >= (this.#o.reconcileMs ?? 30_000);
  }

  #now(): number {
    return (this.#o.now ?? Date.now)();
  }

  async #deliverLoop(): Promise<void> {
    while (!this.#stopping) {
      try {
        const rows = await this.#o.queue.undelivered();
        if (this.#link.reached()) {
          this.#reconcileNow = true;
          this.#wake(); // what waited for the engine is submitted now
        }
        this.#deliverFailure = undefined;
        for (const row of rows) {
          if (this.#stopping) break;
          await this.#deliver(row);
        }
        if (this.#reconcileDue()) await this.#reconcile();
        if (
          this.#o.once &&
          !this.#pumping &&
          this.#recovered.length === 0 &&
          this.#o.inbox.ready === 0 &&
          this.#o.inbox.pending === 0 &&
          (await this.#o.queue.outstanding()) === 0
        )
          break;
      } catch (error) {
        this.#deliveryFailed(error);
      }
      await Promise.race([this.#o.queue.waitForDone(this.#link.pause()), new Promise<void>((resolve) => (this.#wakeDelivery = resolve))]);
      this.#wakeDelivery = undefined;
    }
    if (!this.#stopping) {
      this.#stopping = true;
      await this.#o.inbox.close();
      await this.#busy;
    }
    this.#o.onEvent({ kind: 'stopped', state: 'STOPPED', from: 'AWAITING_COMMAND', reason: this.#o.once ? 'once' : 'signal' });
  }

  /** An outage is said once (and its end once); any other failure once per distinct reason. */
  #deliveryFailed(error: unknown): void {
    if (isEngineOutage(error)) return this.#link.lost(error);
    const why = (error as Error).message;
    if (why === this.#deliverFailure) return;
    this.#deliverFailure = why;
    this.#notice(null, `could not look for ended runs in the engine (${why}); trying again`);
  }

  /**
   * Writes one ended run back: its artifact (completed or stopped), or its file to rejected/; then the
   * claim goes. What the engine cannot answer now is tried again later (nothing is marked delivered);
   * what this workspace refuses (an artifact path no longer allowed here) is said once and kept in the engine.
   */
  async #deliver(row: Delivery): Promise<void> {
    const claim: Claim = { runId: row.runId, source: row.source, claimedAt: '', recovered: true, kind: row.kind };
    const base = {
      run_id: row.runId,
      source: row.source,
      decision: row.decision,
      reason_code: row.reasonCode ?? '',
      audit_log: `engine:audit/${row.runId}`,
      rejected_to: null as string | null,
    };
    const artifacts = row.state === 'rejected' ? [] : await this.#o.queue.artifacts(row.runId);
    try {
      if (row.state === 'rejected') {
        const rejection: Rejection = row.rejection ?? {
          status: row.status === 'invalid' ? 'invalid' : 'error',
          reason_code: row.reasonCode ?? 'RUN_FAILED',
          message: row.summary ?? 'the run failed',
          issues: [row.summary ?? 'the run failed'],
          audit_log: base.audit_log,
        };
        const rejectedTo = await this.#o.claims.reject(claim, rejection);
        this.#finished({
          ...base,
          status: rejection.status,
          reason_code: rejection.reason_code,
          artifact: null,
          rejected_to: rejectedTo,
          message: rejection.message,
        });
      } else {
        let artifact: string | null = null;
        const placed = await placeHere(this.#o.artifacts, row.runId, artifacts);
        const moved = placed.placement && describePlacement(placed.placement);
        if (moved) this.#notice(row.runId, moved);
        for (const a of placed.files) {
          const written = await this.#o.artifacts.write(a.path, a.content, a.protect);
          if (!placed.placement || a.path === placed.placement.path) artifact = written;
        }
        await this.#o.claims.release(claim);
        const ended = row.status === 'stopped' || row.status === 'guardrail_stopped' ? row.status : 'completed';
        const status = row.state === 'paused' ? 'paused' : ended;
        const howTo = row.state === 'paused' ? `\ndecide: maestro hitl decide ${row.runId} continue|stop [--note TEXT]` : '';
        this.#finished({ ...base, status, artifact, message: `${row.summary ?? status}${moved ? `\n${moved}` : ''}${howTo}` });
      }
    } catch (error) {
      this.#notice(
        row.runId,
        `${row.source}: could not be written back (${(error as Error).message}); it stays in the engine (maestro hitl show ${row.runId})`,
      );
    }
    await this.#o.queue.markDelivered(row.runId, row.state);
    this.#held.delete(row.runId);
  }

  #finished(result: Omit<Extract<WatchEvent, { kind: 'finished' }>, 'kind' | 'state' | 'from' | 'queued'>): void {
    this.#o.onEvent({ kind: 'finished', state: 'AWAITING_COMMAND', from: 'AWAITING_COMMAND', ...result, queued: this.#o.inbox.ready });
  }

  #notice(runId: string | null, message: string): void {
    this.#o.onEvent({ kind: 'notice', run_id: runId, message });
  }
}

/**
 * A run's files from the engine, placed in this workspace by the same rule as a local run's
 * (artifact-place.ts): the worker placed them on its own copy, so a path taken here moves them beside.
 */
async function placeHere<F extends { readonly path: string; readonly content: string }>(
  writer: ArtifactWriter,
  runId: string,
  files: readonly F[],
): Promise<{ files: readonly F[]; placement?: ArtifactPlacement }> {
  const main = files.find((f) => artifactRunId(f.content) === runId);
  if (!main) return { files };
  const suffixes = files.filter((f) => f !== main).map((f) => f.path.slice(artifactBase(main.path).length));
  const placement = await writer.place(main.path, runId, suffixes);
  return { files: placement.path === main.path ? files : moveArtifactFiles(files, main.path, placement.path), placement };
}
