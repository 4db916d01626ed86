import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { commandNameProblem, dropCommand } from '../adapters/fs/command-drop.js';
import { sha256 } from '../adapters/system/hashing.js';
import type { CommandFinding } from '../app/check-command.js';
import type { HitlDecisionInput, HitlDecisionResult } from '../app/hitl.js';
import { LiveRuns } from '../app/live-runs.js';
import type { AuditRecord } from '../domain/audit.js';
import { defaultSensitiveScanner } from '../domain/audit-sanitizer.js';
import { readAuditRecords, verifyAuditLog, type AuditVerification } from '../domain/audit-verify.js';
import type { DecisionAuthor, RunState } from '../domain/run-state.js';
import { canResume } from '../domain/run/transitions.js';
import { artifactClash } from './artifact-claims.js';
import { type ArtifactView, insideWorkspace, readArtifactView, screenedArtifact } from './artifact-view.js';
import { ConsoleCarrier, type Resumer } from './console-carrier.js';
import { type IndexedRun, RunIndex } from './run-index.js';
import { openAuditSource } from './audit.js';
import { type MaestroApp as App, openApp } from './use-cases.js';
import { openWorkspace, type RejectedCommand, type Workspace, type WorkspaceStatus } from './workspace.js';

/** A run's audit log as the console shows it: its sanitized records, and whether its chain verifies. */
export interface RunAudit {
  readonly records: readonly AuditRecord[];
  readonly verification: AuditVerification;
  /** Where the log is, for people (a folder, or the engine without its password). */
  readonly label: string;
}

/** The queue: commands waiting in `commands/`, claimed and running, rejected; with an engine, its queue's counts. */
export interface QueueView {
  readonly queued: WorkspaceStatus['queued'];
  readonly inflight: WorkspaceStatus['inflight'];
  readonly rejected: readonly RejectedCommand[];
  readonly engine?: { readonly queued: number; readonly running: number; readonly paused: number; readonly rejected: number };
  /** Whether a watcher runs on this workspace: with none, nothing in commands/ is taken up. */
  readonly watcher_running: boolean;
}

/** What adding a command did: written into `commands/` under `name`, or refused (nothing written) with why. */
export type { ArtifactView } from './artifact-view.js';
export type { IndexedRun } from './run-index.js';
export type { RunListing } from './workspace.js';
export type { CommandFinding, PausedRow, ShowDetails } from './use-cases.js';
export { HitlRefusedError, OutcomeRefusedError } from './use-cases.js';
export type { LiveEvent } from '../app/live-runs.js';
export { addConsolePerson } from './console-people.js';

export type AddResult =
  | { readonly added: true; readonly name: string }
  | { readonly added: false; readonly findings: readonly CommandFinding[]; readonly problem?: string };

/**
 * What `maestro ui` serves, over the same app layer as the subcommands (`runs`, `show`, `hitl`,
 * `requeue`, `validate`, `status`, `audit`): on files or with an engine, chosen once by `createApp`.
 */
export interface ConsoleBackend {
  /** The app's use cases (its wiring is there for tests; the console's pages use the use cases). */
  readonly app: App;
  readonly label: string;
  /** Every run, newest first, with the text a search looks in (kept between requests: a run that ended is read once). */
  runs(): Promise<IndexedRun[]>;
  /**
   * A run's checkpoint (screened) and the status a person sees (`running` while this console carries
   * it on, or has it in line to); undefined when it has none.
   */
  run(runId: string): Promise<{ state: RunState; status: string } | undefined>;
  audit(runId: string): Promise<RunAudit | undefined>;
  /** One part of the run's artifact (Markdown; all of it when it is small) and the hash of its bytes now, when it has one in this workspace. */
  artifact(state: RunState, part: number): Promise<ArtifactView | undefined>;
  /** The whole artifact, screened, part after part (a download). */
  artifactDownload(state: RunState): AsyncGenerator<string>;
  /** A picture written beside the run's artifact (SVG), by its plain file name. */
  picture(state: RunState, file: string): Promise<string | undefined>;
  /** A person's decision; a `continue` says who takes the run up (the console itself when no watcher or worker is there). */
  decide(input: Omit<HitlDecisionInput, 'isOwned'>): Promise<HitlDecisionResult & { readonly resumer?: Resumer }>;
  /**
   * Carries on a run nobody runs (interrupted, or stopped by a storage failure) in this console, as
   * `maestro run --resume` would; false (nothing done) when the run is not one that waits for that.
   */
  resume(runId: string, by?: DecisionAuthor): Promise<boolean>;
  /** Whether the run waits in this console's line to be carried on. */
  isCarrying(runId: string): boolean;
  queue(): Promise<QueueView>;
  requeue(name: string): Promise<string>;
  /** Checks the text, and only when nothing would stop or pause it, writes it into `commands/` as `name`. */
  add(name: string, text: string): Promise<AddResult>;
  readonly live: LiveRuns;
  close(): Promise<void>;
}

/** Opens the console's view of the workspace at `dir`. */
export async function openConsole(options: {
  workspace: string;
  env: Readonly<Record<string, string | undefined>>;
  /** A run the console carries on that failed for another reason than an interrupt or another process taking it: said, never dropped. */
  onProblem: (message: string) => void;
}): Promise<ConsoleBackend> {
  const stopping = new AbortController();
  const app = await openApp({ workspace: options.workspace, env: options.env, signal: stopping.signal });
  const files = await openWorkspace(options.workspace, options.env);
  const check = async (text: string) => (await app.review(text)).findings;
  const index = new RunIndex(app);
  // The first look reads every checkpoint once: begun now, it is done before anyone asks.
  index.runs().catch(() => undefined);
  const carrier = new ConsoleCarrier(app, { signal: stopping.signal, onProblem: options.onProblem });
  return {
    app,
    label: app.paths.root,
    runs: () => index.runs(),
    run: async (runId) => {
      const state = (await app.deps.ledger.load(runId).catch(() => undefined)) ?? (await app.readBeside(runId).catch(() => undefined));
      if (!state) return undefined;
      const shown = await app.shown(state);
      const notRun = shown.status === 'interrupted' || shown.status === 'continued';
      return { state, status: notRun && carrier.isWaiting(runId) ? 'running' : shown.status };
    },
    audit: (runId) => readAudit(app, options.env, runId),
    artifact: async (state, part) => (state.artifact ? readArtifactView(app.paths.root, state.artifact, part) : undefined),
    artifactDownload: (state) => screenedArtifact(app.paths.root, state.artifact ?? ''),
    picture: (state, file) => readPicture(app, state, file),
    decide: async (input) => {
      const result = await app.decide(input);
      if (result.decision !== 'continue') return result;
      const resumer = await carrier.resumer();
      if (resumer === 'console') carrier.carry(input.runId, input.by);
      return { ...result, resumer };
    },
    resume: async (runId, by) => {
      const state = await app.deps.ledger.load(runId).catch(() => undefined);
      if (!state || !canResume(state) || (await app.isHeld(runId))) return false;
      carrier.carry(runId, by);
      return true;
    },
    isCarrying: (runId) => carrier.isWaiting(runId),
    queue: () => readQueue(app, files),
    requeue: async (name) => (await files.rejected.requeue([name]))[0]?.to ?? name,
    add: (name, text) => addCommand(app, files, check, { name, text }),
    live: new LiveRuns(app.deps.ledger),
    close: async () => {
      // A run carried on here stops at its last checkpoint (shown interrupted; it can be resumed again).
      stopping.abort(new Error('interrupted'));
      await carrier.settled();
      await app.close();
    },
  };
}

async function readAudit(app: App, env: Readonly<Record<string, string | undefined>>, runId: string): Promise<RunAudit | undefined> {
  if (!/^[A-Za-z0-9_.-]+$/.test(runId)) return undefined;
  const source = await openAuditSource(app.paths, env);
  try {
    const files = await source.read(runId);
    if (files.log === undefined) return undefined;
    const verification = verifyAuditLog({ ...files, sha256, scanner: defaultSensitiveScanner });
    return { records: readAuditRecords(files.log).records.map((r) => r.record), verification, label: source.label };
  } finally {
    await source.close();
  }
}

async function readPicture(app: App, state: RunState, file: string): Promise<string | undefined> {
  if (!state.artifact || !/^[A-Za-z0-9][A-Za-z0-9_.-]*\.svg$/.test(file)) return undefined;
  const absolute = insideWorkspace(app.paths.root, path.join(path.dirname(state.artifact), file));
  return absolute ? readFile(absolute, 'utf8').catch(() => undefined) : undefined;
}

async function readQueue(app: App, files: Workspace): Promise<QueueView> {
  const status = await files.status({ recent: 0 });
  const rejected = await files.rejected.list();
  const engine = await app.queueStats();
  return {
    queued: status.queued,
    inflight: status.inflight,
    rejected,
    watcher_running: status.watcher_running,
    ...(engine ? { engine } : {}),
  };
}

async function addCommand(
  app: App,
  files: Workspace,
  check: (text: string) => Promise<CommandFinding[]>,
  command: { name: string; text: string },
): Promise<AddResult> {
  const { name, text } = command;
  const problem = commandNameProblem(name);
  if (problem) return { added: false, findings: [], problem };
  const findings = await check(text);
  if (findings.length > 0) return { added: false, findings };
  const queued = (await files.status({ recent: 0 })).queued.map((q) => q.file);
  const clash = await artifactClash(app, text, queued);
  if (clash) return { added: false, findings: [], problem: clash };
  if (!(await dropCommand(app.paths, name, text))) {
    return { added: false, findings: [], problem: `commands/ already has a file named ${name}: choose another name` };
  }
  return { added: true, name };
}
