import type { App } from '../compose/app.js';
import { ExitError } from '../domain/errors.js';
import type { Io } from './io.js';

/** The `--allow-async-commit` flag of `maestro watch` and `maestro worker`. */
export const ALLOW_ASYNC_COMMIT_OPTION = [
  '--allow-async-commit',
  'run even if the engine has synchronous_commit = off (a database crash may then lose or repeat commands): warns instead of refusing',
] as const;

/**
 * An intake or a worker refuses to start on an engine that acknowledges commits it may lose (exit 2,
 * nothing taken); with `--allow-async-commit` it says so on stderr, loudly, and starts. No engine: nothing to check.
 * The engine is closed when this throws.
 */
export async function requireDurableEngine(app: App, command: string, allowAsync: boolean, io: Io): Promise<void> {
  if (!app.engine) return;
  const verdict = await app.engine.durability(allowAsync).catch(async (error: unknown) => {
    await app.engine?.engine.close();
    throw error;
  });
  if (verdict.kind === 'refused') {
    await app.engine.engine.close();
    throw new ExitError(2, `maestro ${command}: ${verdict.message} Nothing was taken.`);
  }
  if (verdict.kind === 'allowed') io.stderr.write(`maestro ${command}: ${verdict.message}\n`);
}
