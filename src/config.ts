import { withoutBom } from './domain/command-file.js';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { StampedCache } from './adapters/fs/file-stamp.js';
import { InvalidInputError } from './domain/errors.js';
import { parseWorkspaceConfig, type WorkspaceConfig } from './domain/workspace-config.js';

/** Picks the workspace folder: `--workspace`, else `MAESTRO_WORKSPACE`, else the current folder. */
export function resolveWorkspace(flag: string | undefined, env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): string {
  return path.resolve(cwd, flag ?? env.MAESTRO_WORKSPACE ?? '.');
}

/** Reads `maestro.config.json` (optional) and validates it; every field has a default. Frozen once read. */
export async function loadWorkspaceConfig(file: string): Promise<WorkspaceConfig> {
  return parseConfigText(await readConfigText(file), file);
}

/** The file's text; undefined when there is none. A file that cannot be read is an InvalidInputError naming it. */
async function readConfigText(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new InvalidInputError(file, [`cannot be read (${(error as Error).message})`], { cause: error });
  }
}

/** The configuration a text holds (none: every default), validated; an InvalidInputError lists what is wrong. */
function parseConfigText(text: string | undefined, file: string): WorkspaceConfig {
  if (text === undefined) return Object.freeze(parseOrThrow({}, file));
  let json: unknown;
  try {
    json = JSON.parse(withoutBom(text));
  } catch (error) {
    throw new InvalidInputError(file, [`(root): not valid JSON (${(error as Error).message})`], { cause: error });
  }
  return Object.freeze(parseOrThrow(json, file));
}

/**
 * What is wrong with `maestro.config.json` now, as `maestro.config.json: issue` lines (empty when it is
 * valid or absent). A long-lived watcher asks this before each claim (`cachedConfigCheck`): it runs on the
 * configuration it started with, so a file broken since must stop it taking commands rather than go unnoticed.
 */
export async function checkWorkspaceConfig(file: string): Promise<string[]> {
  try {
    await loadWorkspaceConfig(file);
    return [];
  } catch (error) {
    return issuesOf(file, error);
  }
}

/**
 * `checkWorkspaceConfig` for a watcher, which asks before every claim: the answer for a file whose stamp
 * (file-stamp.ts) has not changed since it was last read is not worked out again. A file that could not
 * be read is not kept: the next check reads it again.
 */
export function cachedConfigCheck(file: string, cache = new StampedCache<readonly string[]>()): () => Promise<string[]> {
  const check = async (): Promise<{ value: readonly string[]; keep: boolean }> => {
    let text: string | undefined;
    try {
      text = await readConfigText(file);
    } catch (error) {
      return { value: issuesOf(file, error), keep: false };
    }
    try {
      parseConfigText(text, file);
      return { value: [], keep: true };
    } catch (error) {
      return { value: issuesOf(file, error), keep: true };
    }
  };
  return async () => [...(await cache.through(file, check))];
}

/** An InvalidInputError's issues as `maestro.config.json: issue` lines; any other error is thrown on. */
function issuesOf(file: string, error: unknown): string[] {
  if (!(error instanceof InvalidInputError)) throw error;
  return error.issues.map((issue) => `${path.basename(file)}: ${issue}`);
}

function parseOrThrow(json: unknown, file: string): WorkspaceConfig {
  const parsed = parseWorkspaceConfig(json);
  if (!parsed.ok) throw new InvalidInputError(file, parsed.issues);
  return parsed.value;
}

type Env = Readonly<Record<string, string | undefined>>;

/**
 * A whole number of milliseconds from an environment variable, within `min`..`max`; undefined when the
 * variable is unset or blank. Anything else is refused (exit 2) before anything is taken.
 */
function readMsVariable(env: Env, name: string, min: number, max: number): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return undefined;
  const ms = Number(raw);
  if (!Number.isInteger(ms) || ms < min || ms > max) {
    throw new InvalidInputError(name, [`(root): must be a whole number of milliseconds from ${min} to ${max}, not "${raw}"`]);
  }
  return ms;
}

/**
 * `MAESTRO_OFFLINE_DELAY_MS`: a testing and demo knob that makes the offline model wait this many
 * milliseconds per call (abortably), so a run can be interrupted mid-way on purpose. Default 0.
 */
export function readOfflineDelayMs(env: Env = process.env): number {
  return readMsVariable(env, 'MAESTRO_OFFLINE_DELAY_MS', 0, 600_000) ?? 0;
}

/** How long a watcher that found the workspace broken waits before it looks again, unless a command wakes it sooner. */
export const DEFAULT_WATCH_RECHECK_MS = 2_000;

/**
 * `MAESTRO_WATCH_RECHECK_MS`: a testing knob for that wait (default `DEFAULT_WATCH_RECHECK_MS`), so
 * a test of a workspace broken and then fixed does not wait the full 2 s for the watcher to notice.
 */
export function readWatchRecheckMs(env: Env = process.env): number {
  return readMsVariable(env, 'MAESTRO_WATCH_RECHECK_MS', 10, 600_000) ?? DEFAULT_WATCH_RECHECK_MS;
}

/**
 * `MAESTRO_ENGINE_RETRY_MS`: a testing knob for how soon the intake and the workers try an engine
 * that went away again (the first pause; it doubles per failed try up to 15 s). Workers still look
 * at the queue without a notification only every 2 s, so a test that sets it still needs the engine's
 * notifications to arrive (the intake has one pause for both). Undefined when unset: the defaults
 * stay (intake 1 s; worker 250 ms to reconnect).
 */
export function readEngineRetryMs(env: Env = process.env): number | undefined {
  return readMsVariable(env, 'MAESTRO_ENGINE_RETRY_MS', 10, 60_000);
}

/**
 * The engine URL, if any: `MAESTRO_ENGINE_URL` (set and not blank), else the workspace config's
 * `engine.url`. Undefined: the workspace's files are the store and `commands/` is the queue.
 */
export function resolveEngineUrl(config: WorkspaceConfig, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const fromEnv = env.MAESTRO_ENGINE_URL?.trim();
  if (fromEnv) {
    if (!/^postgres(ql)?:\/\/\S+$/.test(fromEnv))
      throw new InvalidInputError('MAESTRO_ENGINE_URL', ['(root): must be a postgres:// (or postgresql://) URL']);
    return fromEnv;
  }
  return config.engine.url;
}
