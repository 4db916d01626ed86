import { spawn } from 'node:child_process';
import { Readable, Writable } from 'node:stream';
import { CLI } from './fixtures.js';

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  timeoutMs?: number;
  /** What standard input holds (`maestro run -`); in process only. */
  stdin?: string;
}

/** A stream that keeps what is written to it, and is not a terminal. */
class Capture extends Writable {
  text = '';
  readonly isTTY = false;
  override _write(chunk: Buffer | string, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.text += chunk.toString();
    callback();
  }
}

/**
 * Runs the CLI in this process through `main(argv, io)`, exactly as `bin/maestro.js` does but with
 * captured streams, its own environment and working folder: the whole CLI (parsing, composition,
 * exit codes, output) without the cost of a Node start-up per call. What only a process shows
 * (signals, terminals, `kill -9`) is tested with `spawnCli`.
 */
export async function runCli(args: string[], options: CliOptions = {}): Promise<CliResult> {
  const { main } = await import('../../src/cli/main.js');
  const stdout = new Capture();
  const stderr = new Capture();
  const io = {
    stdout,
    stderr,
    env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '', MAESTRO_WORKSPACE: '', ...options.env },
    cwd: options.cwd ?? process.cwd(),
    ...(options.stdin !== undefined ? { stdin: Readable.from([options.stdin]) } : {}),
  };
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`maestro ${args.join(' ')} timed out\n${stdout.text}\n${stderr.text}`)),
      options.timeoutMs ?? 30_000,
    );
  });
  try {
    const code = await Promise.race([main(['node', 'maestro', ...args], io), timeout]);
    return { code, stdout: stdout.text, stderr: stderr.text };
  } finally {
    clearTimeout(timer);
  }
}

/** Runs the built CLI as a child process, the way a user would (needs `dist/`: `npm test` builds it). */
export function spawnCli(args: string[], options: CliOptions = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      cwd: options.cwd ?? process.cwd(),
      env: { ...process.env, NO_COLOR: '1', MAESTRO_WORKSPACE: '', ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`maestro ${args.join(' ')} timed out\n${stdout}\n${stderr}`));
    }, options.timeoutMs ?? 30_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
