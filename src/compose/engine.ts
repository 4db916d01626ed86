import os from 'node:os';
import type { DecideDeps, DecisionInbox } from '../app/hitl.js';
import type { RunClaimDeps } from '../app/run-claim.js';
import type { RunDeps } from '../app/run-deps.js';
import { VerifiedInputReader } from '../app/verified-inputs.js';
import { FsArtifactWriter } from '../adapters/fs/artifact-writer.js';
import { PgArtifactWriter } from '../adapters/pg/artifact-writer.js';
import { EngineClaimStore } from '../adapters/pg/claim-store.js';
import { PgEngine, redactUrl, type Fence } from '../adapters/pg/engine.js';
import { PgLoopPolicyStore } from '../adapters/pg/loop-policy-store.js';
import { PgQueue } from '../adapters/pg/queue-intake.js';
import type { EngineClaim, PgWorkerSession } from '../adapters/pg/queue.js';
import { PgQueueReads } from '../adapters/pg/queue-reads.js';
import { PgRunLedger } from '../adapters/pg/run-ledger.js';
import { PgRunHolds } from '../adapters/pg/run-holds.js';
import { PgSessionStore } from '../adapters/pg/session-store.js';
import { countTokens } from '../adapters/model/token-counter.js';
import { newRunId } from '../adapters/system/system-clock.js';
import type { WorkspacePaths } from '../adapters/fs/workspace-paths.js';
import { judgeCommitDurability, type DurabilityVerdict } from '../domain/engine-durability.js';
import { AppError } from '../domain/errors.js';
import type { Clock, RunReader } from '../domain/ports.js';
import type { WorkspaceConfig } from '../domain/workspace-config.js';

/** `--run` / `run --resume` with an engine: the queue resumes decided runs, never a foreground process. */
export class EngineResumeError extends AppError {
  readonly code = 'ENGINE_RESUME_REFUSED' as const;
}

/** What a workspace with an engine adds to the app: the engine, its queue, and this workspace's id in it. */
export interface EngineHandle {
  readonly engine: PgEngine;
  /** `the engine at <url without its password>`, for people. */
  readonly label: string;
  readonly queue: PgQueue;
  /** The queue as `status`, the console and run liveness read it. */
  readonly reads: PgQueueReads;
  /** Which workspace submitted a command, so its artifacts go back there: `<host>:<absolute path>`. */
  readonly workspaceId: string;
  /** The app's deps with the artifacts of `runId` kept in the engine (a decision taken on any machine). */
  depsForRun(runId: string): DecideDeps;
  /** A new council session: every persona's memory moves to the engine's archive; returns how many had some. */
  archiveMemory(sessionId: string): Promise<number>;
  /** Whether the engine's commits are durable (`synchronous_commit`), for an intake or worker about to start. */
  durability(allowAsync: boolean): Promise<DurabilityVerdict>;
}

type EngineStores = Pick<RunDeps, 'ledger' | 'sessions' | 'loopPolicy'> & { readonly sessions: PgSessionStore };

/** Opens the engine and checks that its schema is the one this maestro needs. */
export async function openEngine(url: string, name = 'maestro'): Promise<PgEngine> {
  const engine = PgEngine.open(url, { name });
  try {
    await engine.assertReady();
  } catch (error) {
    await engine.close();
    throw error;
  }
  return engine;
}

/**
 * Whether the engine acknowledges only durable commits (`synchronous_commit`), judged for an intake or
 * a worker about to start; `allowAsync` is the operator's explicit `--allow-async-commit`.
 */
export async function engineDurability(engine: PgEngine, allowAsync: boolean): Promise<DurabilityVerdict> {
  return judgeCommitDurability(await engine.synchronousCommit(), allowAsync, redactUrl(engine.url));
}

export function workspaceIdOf(paths: WorkspacePaths): string {
  return `${os.hostname()}:${paths.root}`;
}

/** The stores of a run in the engine; with a fence, every write is the claim holder's. */
export function engineStores(options: { engine: PgEngine; clock: Clock; config: WorkspaceConfig; fence?: Fence }): EngineStores {
  const { engine, clock, config, fence } = options;
  return {
    ledger: new PgRunLedger({ engine, clock, ...(fence ? { fence } : {}) }),
    sessions: new PgSessionStore(engine, clock, config.history.keep_runs, fence, { budget: config.history.max_tokens, count: countTokens }),
    loopPolicy: new PgLoopPolicyStore(engine, clock, () => `S-${newRunId(clock)}`, fence),
  };
}

/** A `continue` in the engine: the run's queue row is queued again, for whichever worker is free. */
export class PgDecisionInbox implements DecisionInbox {
  constructor(
    private readonly queue: PgQueue,
    private readonly runs: RunReader,
    private readonly workspaceId: string,
    /** This workspace's floor acceptances, for a run the queue has no row of yet (started in the foreground). */
    private readonly floorAccept: WorkspaceConfig['floor']['accept'],
  ) {}

  async post(runId: string): Promise<void> {
    const state = await this.runs.load(runId);
    await this.queue.postDecision(runId, {
      workspaceId: this.workspaceId,
      source: state?.source ?? `${runId}.json`,
      body: JSON.stringify(state?.command ?? {}),
      floorAccept: this.floorAccept,
    });
  }

  async claim(runId: string): Promise<boolean> {
    throw new EngineResumeError(
      `run ${runId} is resumed by the engine's workers (maestro worker), not in the foreground: its continue decision is queued for whichever worker is free`,
    );
  }

  pending(): Promise<string[]> {
    return this.queue.pendingDecisions();
  }
}

/** Wires a workspace's app to the engine (every store but the foreground artifacts). */
export function engineDeps(options: { engine: PgEngine; clock: Clock; config: WorkspaceConfig; paths: WorkspacePaths }): {
  stores: EngineStores & Pick<DecideDeps, 'decisions' | 'holds'>;
  handle: (base: DecideDeps) => EngineHandle;
} {
  const { engine, paths } = options;
  const queue = new PgQueue(engine);
  const workspaceId = workspaceIdOf(paths);
  const stores = engineStores(options);
  const decisions = new PgDecisionInbox(queue, stores.ledger, workspaceId, options.config.floor.accept);
  return {
    // Runs held on any machine exclude each other through the engine, not this machine's files.
    stores: { ...stores, decisions, holds: new PgRunHolds(engine) },
    handle: (base) => ({
      engine,
      label: `the engine at ${redactUrl(engine.url)}`,
      queue,
      reads: new PgQueueReads(engine),
      workspaceId,
      depsForRun: (runId) => ({ ...base, artifacts: new PgArtifactWriter(engine, runId, base.artifacts) }),
      archiveMemory: (sessionId) => stores.sessions.archiveAll(sessionId),
      durability: (allowAsync) => engineDurability(engine, allowAsync),
    }),
  };
}

/**
 * A worker's deps for one claim: the engine's stores fenced to the claim, artifacts kept in the
 * engine (checked on this machine's copy), and this machine's inputs checked against the intake's.
 * The floor accepts what the workspace the command was dropped into accepts (carried with the claim),
 * never what this machine's config does. The run is held by the claim's lease, not by a hold of its own.
 */
export function workerClaimDeps(options: {
  base: RunDeps;
  engine: PgEngine;
  root: string;
  claim: EngineClaim;
  session: PgWorkerSession;
  controls: { signal: AbortSignal; lost: (reason: string) => void };
}): RunClaimDeps {
  const { engine, claim, session, controls } = options;
  const { holds: _leased, ...base } = options.base;
  const fence = session.fence(claim, controls.lost);
  const stores = engineStores({ engine, clock: base.clock, config: base.config, fence });
  return {
    claims: new EngineClaimStore(engine, claim, fence),
    run: {
      ...base,
      ...stores,
      config: { ...base.config, floor: { ...base.config.floor, accept: [...claim.floorAccept] } },
      inputs: new VerifiedInputReader(base.inputs, claim.inputHashes),
      artifacts: new PgArtifactWriter(engine, claim.runId, new FsArtifactWriter(options.root, () => base.clock.now()), fence),
      signal: controls.signal,
    },
  };
}
