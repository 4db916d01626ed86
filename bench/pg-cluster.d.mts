export const ROOT: string;
export const CLI: string;

export type CliEvent = Record<string, unknown> & { kind: string; at: number };

export class Proc {
  constructor(args: string[], env?: Record<string, string>);
  readonly args: string[];
  readonly events: CliEvent[];
  readonly stderr: string;
  readonly alive: boolean;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  waitFor(what: string, predicate: (e: CliEvent) => boolean, timeoutMs?: number): Promise<CliEvent>;
  kill(signal: NodeJS.Signals): void;
  dispose(): Promise<void>;
}

export function cli(args: string[], env?: Record<string, string>): { code: number | null; stdout: string; stderr: string };
/** Runs the CLI to the end (a child process, or `main(argv, io)` in the caller's process). */
export type CliRunner = (
  args: string[],
  env?: Record<string, string>,
) => { code: number | null; stdout: string; stderr: string } | Promise<{ code: number | null; stdout: string; stderr: string }>;
export function engineWorkspace(url: string, prefix?: string, run?: CliRunner): Promise<string>;
export function dropCommand(ws: string, name: string, command: unknown): Promise<void>;
export function startWorker(ws: string, name: string, env?: Record<string, string>): Proc;
export function startIntake(ws: string, flags?: string[], env?: Record<string, string>): Proc;
export function engineLedger(url: string): Promise<{
  runs: { run_id: string; finished: number; artifacts: number; sessions: number; received: number }[];
  repeatedSteps: number;
  queue: Record<string, { n: number; claims: number }>;
  memory: Record<string, number>;
}>;
export interface SoakResult {
  ws: string;
  commands: number;
  workers: number;
  kills: number;
  durationMs: number;
  completed: number;
  outputs: number;
  lost: number;
  notCompleted: string[];
  runTwice: number;
  restartedFromStart: number;
  repeatedSteps: number;
  resumedRuns: number;
  auditVerified: boolean;
  auditSummary: string | undefined;
  memory: Record<string, number>;
}
export function runSoak(options: {
  url: string;
  commands: number;
  workers: number;
  kills: number;
  delayMs?: number;
  log?: (line: string) => void;
  run?: CliRunner;
}): Promise<SoakResult>;
export function removeWorkspace(ws: string): Promise<void>;
