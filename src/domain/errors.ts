/** The project's error family. Expected outcomes are values; these are for callers that cannot go on. */
export abstract class AppError extends Error {
  abstract readonly code: string;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** A user-written file (command, persona, config) failed to parse or validate. */
export class InvalidInputError extends AppError {
  readonly code = 'INVALID_INPUT' as const;
  constructor(
    readonly file: string,
    readonly issues: readonly string[],
    options?: { cause?: unknown },
  ) {
    super(`${file}: ${issues.join('; ')}`, options);
  }
}

/** Why a model call failed, as policy sees it. */
export type LlmErrorKind =
  | 'rate_limit'
  | 'quota'
  | 'timeout'
  | 'server'
  | 'network'
  | 'auth'
  | 'bad_request'
  | 'invalid_output'
  | 'cassette';

/**
 * A model call failed (after the route's retries, `domain/retry-policy.ts`). `retryable` and `kind` travel with the error so
 * loops never parse messages; the message never contains a request or response body.
 */
export class LlmError extends AppError {
  readonly code = 'LLM_ERROR' as const;
  constructor(
    message: string,
    readonly retryable: boolean,
    readonly status?: number,
    options?: { cause?: unknown; kind?: LlmErrorKind; route?: string; limit?: 'call_timeout_ms' },
  ) {
    super(message, options);
    this.kind = options?.kind ?? (status === 429 ? 'rate_limit' : status !== undefined && status >= 500 ? 'server' : 'bad_request');
    this.route = options?.route;
    this.limit = options?.limit;
  }
  readonly kind: LlmErrorKind;
  readonly route: string | undefined;
  /** A timeout of the run's own per-call limit (`config.call_timeout_ms`), not of the route's `timeout_ms`. */
  readonly limit: 'call_timeout_ms' | undefined;
}

/** Disk I/O failed at a known path (a full disk, a read-only or failing file system). */
export class StorageError extends AppError {
  readonly code = 'STORAGE_ERROR' as const;
  /** The system's error code (ENOSPC, EIO, EROFS …), when there is one. */
  readonly errno: string | undefined;
  constructor(
    message: string,
    readonly path: string,
    options?: { cause?: unknown; errno?: string },
  ) {
    super(message, options);
    this.errno = options?.errno ?? ((options?.cause as NodeJS.ErrnoException | undefined)?.code || undefined);
  }
}

/**
 * What a storage failure was, in a few words: a failed write names its path and errno; a failure with
 * no errno (a corrupt state file, a lost lock) is its own message, which says what to do.
 */
export function storageFailureText(error: StorageError): string {
  return error.errno === undefined && !error.message.startsWith('could not write')
    ? error.message
    : `could not write ${error.path} (${error.errno ?? 'I/O error'})`;
}

/**
 * A run's checkpoint that is there but cannot be read: `problem` says why in a few words (`not valid
 * JSON`, `empty`, `schema: …`, `damaged at line 3: …`), for the lists that name such a run.
 */
export class CheckpointUnreadableError extends StorageError {
  constructor(
    message: string,
    file: string,
    readonly problem: string,
    options?: { cause?: unknown },
  ) {
    super(message, file, options);
  }
}

/** A checkpoint's schema problems in a few words (the first two issues). */
export function schemaProblem(issues: readonly string[]): string {
  const shown = issues.slice(0, 2).join('; ');
  return `schema: ${shown}${issues.length > 2 ? `; and ${issues.length - 2} more` : ''}`;
}

/** A bug: something the code assumed could not happen did. */
export class InternalError extends AppError {
  readonly code = 'INTERNAL_ERROR' as const;
}

/**
 * Carries an exit code to `cli/main.ts`, the only place that exits. `status` says, for `--json`, what
 * an exit 2 was: input that does not read (`invalid`, the default) or a request refused (`refused`: a
 * run id not found, a run held or sealed).
 */
export class ExitError extends AppError {
  readonly code = 'EXIT' as const;
  constructor(
    readonly exitCode: number,
    message = '',
    readonly status: 'invalid' | 'refused' = 'invalid',
  ) {
    super(message);
  }
}

/** A run's budget was crossed before or after a call; the run pauses for a person (finished steps are kept). */
export class BudgetExceededError extends AppError {
  readonly code = 'BUDGET_EXCEEDED' as const;
  constructor(readonly exceeded: { readonly limit: string; readonly message: string }) {
    super(exceeded.message);
  }
}

/**
 * A live process already holds the run (`maestro run`, a watcher, a resume, a decision): a second one
 * would run it twice. `holder`: which process, when it can be told (a workspace on files).
 */
export class RunHeldError extends AppError {
  readonly code = 'RUN_HELD' as const;
  constructor(
    readonly runId: string,
    readonly holder?: { readonly pid: number; readonly since: string },
  ) {
    super(
      `run ${runId} is being run right now by another maestro process${heldBy(holder)}; wait for it to end, or stop that process first`,
    );
  }
}

/** ` (pid N, since T)` when the holder is known. */
export function heldBy(holder: RunHeldError['holder']): string {
  return holder ? ` (pid ${holder.pid}, since ${holder.since})` : '';
}
