/** The streams and environment a subcommand may use; tests pass their own. */
export interface Io {
  readonly stdout: NodeJS.WritableStream & { isTTY?: boolean };
  readonly stderr: NodeJS.WritableStream & { isTTY?: boolean };
  /** Where `maestro run -` reads its command from (process.stdin unless a test gives its own). */
  readonly stdin?: NodeJS.ReadableStream;
  readonly env: NodeJS.ProcessEnv;
  readonly cwd: string;
}

export function defaultIo(): Io {
  return { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: process.env, cwd: process.cwd() };
}

/** The `--workspace` flag every subcommand takes. */
export const WORKSPACE_OPTION = ['-w, --workspace <dir>', 'workspace folder (default: $MAESTRO_WORKSPACE or the current folder)'] as const;
