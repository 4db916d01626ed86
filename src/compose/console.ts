import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { commandNameProblem, dropCommand } from '../adapters/fs/command-drop.js';
import { fromState, type RunListing } from '../adapters/fs/run-catalog.js';
import { showRun } from '../adapters/fs/run-liveness.js';
import { sha256 } from '../adapters/system/hashing.js';
import type { CommandFinding } from '../app/check-command.js';
import { commandFindings } from '../app/command-findings.js';
import { decidePause, type HitlDecisionInput, type HitlDecisionResult } from '../app/hitl.js';
import { LiveRuns } from '../app/live-runs.js';
import type { AuditRecord } from '../domain/audit.js';
import { defaultSensitiveScanner } from '../domain/audit-sanitizer.js';
import { readAuditRecords, verifyAuditLog, type AuditVerification } from '../domain/audit-verify.js';
import type { RunState } from '../domain/run-state.js';
import { createApp, type App } from './app.js';
import { openAuditSource } from './audit.js';
import { runLiveness, shownRun } from './resume.js';
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
}

/** What adding a command did: written into `commands/` under `name`, or refused (nothing written) with why. */
export type AddResult =
  | { readonly added: true; readonly name: string }
  | { readonly added: false; readonly findings: readonly CommandFinding[]; readonly problem?: string };

/**
 * What `maestro ui` serves, over the same app layer as the subcommands (`runs`, `show`, `hitl`,
 * `requeue`, `validate`, `status`, `audit`): on files or with an engine, chosen once by `createApp`.
 */
export interface ConsoleBackend {
  readonly app: App;
  readonly label: string;
  runs(): Promise<RunListing[]>;
  /** A run's checkpoint (screened) and the status a person sees; undefined when it has none. */
  run(runId: string): Promise<{ state: RunState; status: string; next_step: string | null } | undefined>;
  audit(runId: string): Promise<RunAudit | undefined>;
  /** The run's artifact (Markdown) when it has one in this workspace. */
  artifact(state: RunState): Promise<string | undefined>;
  /** A picture written beside the run's artifact (SVG), by its plain file name. */
  picture(state: RunState, file: string): Promise<string | undefined>;
  decide(input: HitlDecisionInput): Promise<HitlDecisionResult>;
  queue(): Promise<QueueView>;
  requeue(name: string): Promise<string>;
  /** The findings `maestro validate` would print for this text; nothing is written. */
  check(text: string): Promise<CommandFinding[]>;
  /** Checks the text, and only when nothing would stop or pause it, writes it into `commands/` as `name`. */
  add(name: string, text: string): Promise<AddResult>;
  readonly live: LiveRuns;
  close(): Promise<void>;
}

/** Opens the console's view of the workspace at `dir`. */
export async function openConsole(options: {
  workspace: string;
  env: Readonly<Record<string, string | undefined>>;
}): Promise<ConsoleBackend> {
  const app = await createApp({ workspace: options.workspace, env: options.env });
  const files = await openWorkspace(options.workspace);
  const check = (text: string) => commandFindings(text, app.deps);
  return {
    app,
    label: app.paths.root,
    runs: () => listRuns(app, files),
    run: async (runId) => {
      const state = await app.deps.ledger.load(runId).catch(() => undefined);
      if (!state) return undefined;
      const shown = await shownRun(app, state);
      return { state, status: shown.status, next_step: shown.next_step };
    },
    audit: (runId) => readAudit(app, options.env, runId),
    artifact: async (state) => (state.artifact ? readInWorkspace(app, state.artifact) : undefined),
    picture: (state, file) => readPicture(app, state, file),
    decide: (input) =>
      decidePause(
        { ...input, isOwned: () => runLiveness(app).isHeld(input.runId) },
        app.engine ? app.engine.depsForRun(input.runId) : app.deps,
      ),
    queue: () => readQueue(app, files),
    requeue: (name) => files.rejected.requeue(name),
    check,
    add: (name, text) => addCommand(app, check, name, text),
    live: new LiveRuns(app.deps.ledger),
    close: async () => {
      await app.engine?.engine.close();
    },
  };
}

/** The runs as `maestro runs` lists them: from the workspace's files, or from the engine's ledger. */
async function listRuns(app: App, files: Workspace): Promise<RunListing[]> {
  if (!app.engine) return files.runs.list(app.deps.config.prices);
  const out: RunListing[] = [];
  for (const id of await app.deps.ledger.list()) {
    const state = await app.deps.ledger.load(id).catch(() => undefined);
    if (state) out.push(fromState(state, app.deps.config.prices, await showRun(state, runLiveness(app))));
  }
  return out.sort((a, b) => b.started_at.localeCompare(a.started_at) || b.run_id.localeCompare(a.run_id));
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

/** A file the run wrote in this workspace; never one outside it. */
async function readInWorkspace(app: App, file: string): Promise<string | undefined> {
  const absolute = path.resolve(app.paths.root, file);
  const inside = path.relative(app.paths.root, absolute);
  if (inside.startsWith('..') || path.isAbsolute(inside)) return undefined;
  return readFile(absolute, 'utf8').catch(() => undefined);
}

async function readPicture(app: App, state: RunState, file: string): Promise<string | undefined> {
  if (!state.artifact || !/^[A-Za-z0-9][A-Za-z0-9_.-]*\.svg$/.test(file)) return undefined;
  return readInWorkspace(app, path.join(path.dirname(state.artifact), file));
}

async function readQueue(app: App, files: Workspace): Promise<QueueView> {
  const status = await files.status({ recent: 0 });
  const rejected = await files.rejected.list();
  const engine = app.engine ? await app.engine.queue.stats() : undefined;
  return { queued: status.queued, inflight: status.inflight, rejected, ...(engine ? { engine } : {}) };
}

async function addCommand(app: App, check: (text: string) => Promise<CommandFinding[]>, name: string, text: string): Promise<AddResult> {
  const problem = commandNameProblem(name);
  if (problem) return { added: false, findings: [], problem };
  const findings = await check(text);
  if (findings.length > 0) return { added: false, findings };
  if (!(await dropCommand(app.paths, name, text))) {
    return { added: false, findings: [], problem: `commands/ already has a file named ${name}: choose another name` };
  }
  return { added: true, name };
}
