import { spawn, type ChildProcess } from 'node:child_process';
import { afterEach } from 'vitest';
import { cp, mkdir, mkdtemp, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { readCheckpoint } from '../../src/adapters/fs/run-journal.js';
import { runCli } from '../fakes/cli.js';
import { CLI, collectAuditLogs, REPO_ROOT } from '../fakes/fixtures.js';

/** A temporary workspace with the default personas and an empty `commands/`. */
export async function makeWorkspace(prefix = 'maestro-watch-'): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
  await cp(path.join(REPO_ROOT, 'personas'), path.join(dir, 'personas'), { recursive: true });
  await mkdir(path.join(dir, 'commands'));
  return dir;
}

/** Hands the audit logs to the suite-wide invariant check (tests/global-setup.ts), then removes the folder. */
export async function removeWorkspace(dir: string): Promise<void> {
  await collectAuditLogs(dir);
  await rm(dir, { recursive: true, force: true });
}

/** Writes a command the way careful tools do: a temporary name outside the inbox, then a rename in. */
export async function dropCommand(workspace: string, name: string, command: unknown): Promise<void> {
  const temp = path.join(workspace, `.drop-${name}-${process.pid}-${Math.random().toString(16).slice(2)}`);
  await writeFile(temp, typeof command === 'string' ? command : JSON.stringify(command));
  await rename(temp, path.join(workspace, 'commands', name));
}

export function task(text: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { task_description: text, config: { max_rounds: 1 }, ...extra };
}

export async function listDir(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir)).filter((n) => n !== '.gitkeep').sort();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}

export interface AuditLine {
  run_id: string;
  seq: number;
  event: string;
  reason_code: string;
  details?: Record<string, unknown>;
}

/** Every audit log of the workspace: run id → its records in order. */
export async function readAuditLogs(workspace: string): Promise<Map<string, AuditLine[]>> {
  const dir = path.join(workspace, '.maestro', 'audit');
  const logs = new Map<string, AuditLine[]>();
  for (const name of await listDir(dir)) {
    if (!name.endsWith('.jsonl')) continue;
    const text = await readFile(path.join(dir, name), 'utf8');
    logs.set(
      name.slice(0, -'.jsonl'.length),
      text
        .split('\n')
        .filter((l) => l.trim())
        .map((l) => JSON.parse(l) as AuditLine),
    );
  }
  return logs;
}

/** A run's checkpoint as maestro reads it: its journal replayed while it runs, else state.json. */
export async function readRunState(
  workspace: string,
  runId: string,
): Promise<{ status: string; steps: { index: number }[]; command: { task_description: string } }> {
  const read = await readCheckpoint(path.join(workspace, '.maestro', 'runs', runId));
  if (!read) throw new Error(`run ${runId} has no checkpoint yet`);
  return read.json as { status: string; steps: { index: number }[]; command: { task_description: string } };
}

/** Polls until `check` returns a value other than undefined/false; fails with `what` after `timeoutMs`. */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? ` (last error: ${String(last)})` : ''}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A `maestro` child process with its stdout split into lines (and parsed, with --json). */
export class CliProcess {
  readonly child: ChildProcess;
  readonly lines: string[] = [];
  readonly stderr: string[] = [];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  constructor(args: string[], options: { env?: Record<string, string> } = {}) {
    this.child = spawn(process.execPath, [CLI, ...args], {
      env: { ...process.env, NO_COLOR: '1', CI: '1', ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let buffer = '';
    this.child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      buffer += chunk;
      const parts = buffer.split('\n');
      buffer = parts.pop() ?? '';
      this.lines.push(...parts);
    });
    this.child.stderr?.setEncoding('utf8').on('data', (chunk: string) => this.stderr.push(chunk));
    this.exited = new Promise((resolve) => this.child.on('exit', (code, signal) => resolve({ code, signal })));
  }

  /** The NDJSON events printed so far (with --json). */
  get events(): Array<Record<string, unknown>> {
    return this.lines.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
  }

  async waitForEvent(
    what: string,
    predicate: (e: Record<string, unknown>) => boolean,
    timeoutMs = 30_000,
  ): Promise<Record<string, unknown>> {
    return waitFor(what, () => this.events.find(predicate), timeoutMs);
  }

  kill(signal: NodeJS.Signals): void {
    this.child.kill(signal);
  }

  /** Makes sure the process is gone at the end of a test, whatever happened. */
  async dispose(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
    await this.exited;
  }
}

export function watch(workspace: string, flags: string[] = [], env: Record<string, string> = {}): CliProcess {
  return new CliProcess(['watch', '--json', '--workspace', workspace, ...flags], { env });
}

/**
 * `maestro watch --json --once` run in this process (`main(argv, io)`): for a watcher that only has to
 * drain the inbox or recover what another left, where no signal, terminal or `kill -9` is involved.
 */
export async function watchOnce(
  workspace: string,
  flags: string[] = [],
): Promise<{ code: number | null; events: Array<Record<string, unknown>>; stderr: string }> {
  const result = await runCli(['watch', '--json', '--once', '--workspace', workspace, ...flags], { timeoutMs: 60_000 });
  const events = result.stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { code: result.code, events, stderr: result.stderr };
}

/**
 * Per-test cleanup for the watcher's end-to-end tests: workspaces made and processes started through
 * the scope are disposed after each test, newest first (processes before the folders they use).
 */
export function useWatchScope(): {
  workspace: () => Promise<string>;
  started: (p: CliProcess) => CliProcess;
  defer: (fn: () => Promise<void>) => void;
} {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });
  return {
    workspace: async () => {
      const ws = await makeWorkspace();
      cleanups.push(() => removeWorkspace(ws));
      return ws;
    },
    started: (p) => {
      cleanups.push(() => p.dispose());
      return p;
    },
    defer: (fn) => {
      cleanups.push(fn);
    },
  };
}
