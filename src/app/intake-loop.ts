import { parseCommandText } from '../domain/command-file.js';
import { InvalidInputError } from '../domain/errors.js';
import { buildOutcome } from '../domain/run-machine.js';
import { failureEnding } from './failure-ending.js';
import { claimResult, rejectClaim, type ClaimResult } from './run-claim.js';
import { unrecordedOutcome } from './settle-run.js';
import { describePlacement } from '../domain/artifact-place.js';
import type { ArtifactWriter, Delivery, InputReader, IntakeQueue } from '../domain/ports.js';
import { placeHere } from './place-here.js';

export type { Delivery, IntakeQueue } from '../domain/ports.js';
import {
  engineRejectedName,
  finishedEvent,
  startedEvent,
  type Claim,
  type ClaimStore,
  type CommandInbox,
  type Rejection,
  type WatchEvent,
} from '../domain/queue.js';
import { EngineLink, isEngineOutage } from './engine-link.js';
import { FileClaims } from './file-claims.js';
import { HeldClaims } from './held-claims.js';
import { Wakeup } from './claim-slots.js';
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
  /** Woken by a file ready, a run ended in the engine, or a stop; else it looks again after a pause. */
  readonly #wakeup = new Wakeup();
  readonly #recovered: Claim[] = [];
  #running: Promise<void> = Promise.resolve();
  readonly #link: EngineLink;
  /** New files in commands/, each claimed into .maestro/inflight/ (FileClaims); none while the engine is away. */
  readonly #files: FileClaims;
  /** Claims in .maestro/inflight/ the engine accepted, until written back: checked against the engine. */
  readonly #held: HeldClaims;
  /** Claims the engine refused for a reason of their own (not an outage), said once each. */
  readonly #refusedSaid = new Set<string>();
  #deliverFailure: string | undefined;

  constructor(options: IntakeLoopOptions) {
    this.#o = options;
    this.#link = new EngineLink({
      notice: (message) => this.#notice(null, message),
      meanwhile: 'dropped commands wait claimed in .maestro/inflight/ and are submitted when it is back',
      baseMs: options.pollMs ?? 1000,
      maxMs: options.maxRetryMs ?? 15_000,
    });
    const { inbox, claims, newRunId, queue, reconcileMs } = options;
    this.#files = new FileClaims({
      inbox,
      claims,
      newRunId,
      stopping: () => this.#stopping || this.#link.down,
      notice: (runId, message) => this.#notice(runId, message),
    });
    this.#held = new HeldClaims({ queue, ...(reconcileMs !== undefined ? { everyMs: reconcileMs } : {}) });
  }

  async start(): Promise<void> {
    const { recovered } = await this.#o.claims.recoverOrphans();
    this.#recovered.push(...recovered);
    await this.#o.inbox.start(() => this.#wakeup.wake());
    this.#o.onEvent(startedEvent(this.#o, recovered.length));
    this.#running = this.#loop();
  }

  /** Resolves when stopped: after `stop()`, or with `once` when every submitted run was written back. */
  get stopped(): Promise<void> {
    return this.#running;
  }

  async stop(): Promise<void> {
    this.#stopping = true;
    this.#wakeup.wake();
    await this.#running;
  }

  /**
   * One look at each wake, or after a pause (growing while the engine is away): write back what
   * ended (which also says whether the engine answers), then submit what is claimed and ready.
   */
  async #loop(): Promise<void> {
    while (!this.#stopping) {
      const reached = await this.#deliverEnded();
      await this.#submitReady();
      if (this.#o.once && reached && this.#recovered.length === 0 && this.#o.inbox.ready === 0 && this.#o.inbox.pending === 0) {
        if ((await this.#o.queue.outstanding().catch(() => 1)) === 0) break;
      }
      this.#o.queue.onDone(() => this.#wakeup.wake());
      await this.#wakeup.wait(this.#link.pause());
    }
    this.#stopping = true;
    await this.#o.inbox.close();
    this.#o.onEvent({ kind: 'stopped', state: 'STOPPED', from: 'AWAITING_COMMAND', reason: this.#o.once ? 'once' : 'signal' });
  }

  async #submitReady(): Promise<void> {
    for (const claim of this.#recovered.splice(0)) {
      if (this.#stopping || this.#link.down) this.#recovered.push(claim);
      else await this.#submit(claim);
    }
    // While the engine is away, new files stay in commands/ (unclaimed) until the next try.
    for (let claim = await this.#files.claimNext(); claim; claim = await this.#files.claimNext()) await this.#submit(claim);
  }

  /** Reads a claimed command and hands it to the engine; a file that cannot be read is rejected here. */
  async #submit(claim: Claim): Promise<void> {
    let body: string;
    try {
      body = await this.#o.claims.read(claim);
    } catch (error) {
      // Refused unread, as a watcher refuses it (the engine never sees it, so no audit log has it).
      const unread =
        error instanceof InvalidInputError
          ? error
          : new InvalidInputError(claim.source, [`(root): could not be read (${(error as Error).message})`]);
      const end = failureEnding(unread, { runId: claim.runId, source: claim.source });
      const refused = unrecordedOutcome(claim.runId, end);
      const result = await rejectClaim(claim, refused, this.#o.claims).catch(() => claimResult(claim, refused));
      this.#finished({ ...result, message: `${end.message}: ${(end.problems ?? []).join('; ')}` });
      return;
    }
    // An invalid command goes to the engine too: a worker validates it with the one use case and
    // records why in the audit log; it comes back here as rejected.
    const parsed = parseCommandText(body);
    const inputHashes = parsed.ok ? await fingerprintInputs(parsed.value.input_artifacts, this.#o.inputs) : {};
    try {
      const added = await this.#o.queue.submit({ runId: claim.runId, source: claim.source, body, inputHashes });
      if (this.#link.reached()) this.#held.checkSoon();
      this.#held.hold(claim);
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
    // Submitted again at the next look, after a pause.
    this.#recovered.push(claim);
  }

  /** Submits again, once each, every claim this intake holds that the engine no longer has (HeldClaims). */
  async #resubmitLost(): Promise<void> {
    for (const claim of await this.#held.lost()) {
      this.#recovered.push(claim);
      this.#notice(
        claim.runId,
        `${claim.source}: the engine no longer has run ${claim.runId}, which it had accepted (lost in a database crash with asynchronous commits, or by a restore from a backup); submitting it again`,
      );
    }
  }

  /** Writes back every run that ended in the engine; false when the engine could not be asked. */
  async #deliverEnded(): Promise<boolean> {
    try {
      const rows = await this.#o.queue.undelivered();
      if (this.#link.reached()) this.#held.checkSoon();
      this.#deliverFailure = undefined;
      for (const row of rows) {
        if (this.#stopping) break;
        await this.#deliver(row);
      }
      await this.#resubmitLost();
      return true;
    } catch (error) {
      this.#deliveryFailed(error);
      return false;
    }
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
   * Writes one ended run back (its artifact, or its file to rejected/), then lets the claim go. What the engine cannot answer
   * now is tried again later; what this workspace refuses (an artifact path no longer allowed here) is said once and stays in the engine.
   */
  async #deliver(row: Delivery): Promise<void> {
    const claim: Claim = { runId: row.runId, source: row.source, claimedAt: '', recovered: true, kind: row.kind };
    const auditLog = `engine:audit/${row.runId}`;
    const decision = { decision: row.decision ?? '', reason_code: row.reasonCode ?? '' };
    try {
      if (row.state === 'rejected') {
        const rejection: Rejection = row.rejection ?? {
          status: row.status === 'invalid' ? 'invalid' : 'error',
          reason_code: row.reasonCode ?? 'RUN_FAILED',
          message: row.summary ?? 'the run failed',
          issues: [row.summary ?? 'the run failed'],
          audit_log: auditLog,
        };
        const { status, reason_code, message } = rejection;
        const outcome = buildOutcome({ runId: row.runId, status, decision: { ...decision, reason_code }, auditLog, message });
        const rejectedTo = await this.#o.claims.reject(claim, rejection, { as: engineRejectedName(row.source, row.runId) });
        this.#letGo(row.runId);
        this.#finished(claimResult(claim, outcome, rejectedTo));
      } else {
        let artifact: string | null = null;
        const placed = await placeHere(this.#o.artifacts, row.runId, await this.#o.queue.artifacts(row.runId));
        const moved = placed.placement && describePlacement(placed.placement);
        if (moved) this.#notice(row.runId, moved);
        for (const a of placed.files) {
          const written = await this.#o.artifacts.write(a.path, a.content, a.protect);
          if (!placed.placement || a.path === placed.placement.path) artifact = written;
        }
        await this.#o.claims.release(claim);
        this.#letGo(row.runId);
        // A done row's run ended as its status says (QUEUE_STATE_OF); a row older than its checkpoint says completed.
        const status =
          row.state === 'paused' ? 'paused' : row.status === 'stopped' || row.status === 'guardrail_stopped' ? row.status : 'completed';
        const howTo = row.state === 'paused' ? `\ndecide: maestro hitl decide ${row.runId} continue|stop [--note TEXT]` : '';
        const message = `${row.summary ?? status}${moved ? `\n${moved}` : ''}${howTo}`;
        this.#finished(claimResult(claim, buildOutcome({ runId: row.runId, status, decision, auditLog, message, artifact })));
      }
    } catch (error) {
      this.#notice(
        row.runId,
        `${row.source}: could not be written back (${(error as Error).message}); it stays in the engine (maestro hitl show ${row.runId})`,
      );
    }
    await this.#o.queue.markDelivered(row.runId, row.state);
    this.#held.release(row.runId);
  }

  /**
   * The claim of a run written back is gone: one recovered at start and not submitted yet (its run
   * ended while no intake ran) is not submitted again, so its outcome is reported once.
   */
  #letGo(runId: string): void {
    const i = this.#recovered.findIndex((c) => c.runId === runId);
    if (i >= 0) this.#recovered.splice(i, 1);
  }

  #finished(result: ClaimResult): void {
    this.#o.onEvent(finishedEvent(result, 'AWAITING_COMMAND', this.#o.inbox.ready));
  }

  #notice(runId: string | null, message: string): void {
    this.#o.onEvent({ kind: 'notice', run_id: runId, message });
  }
}
