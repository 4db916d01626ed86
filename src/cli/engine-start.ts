import { setTimeout as sleep } from 'node:timers/promises';
import { EngineLink, isTransientOutage } from '../app/engine-link.js';
import type { App, AppOptions } from '../compose/app.js';
import { requireDurableEngine } from './commit-durability.js';
import type { Io } from './io.js';

/**
 * Starts an intake or a worker whose engine may be away for now (a restart, a failover, a database
 * started after the workers): `open` is tried again with a growing pause while the engine cannot be
 * reached, said once when it is not and once when it is; any other failure (no schema, a wrong
 * setting) ends the start at once.
 */
export async function whenEngineReachable<T>(
  open: () => Promise<T>,
  say: (message: string) => void,
  pauses: { baseMs: number; maxMs: number } = { baseMs: 250, maxMs: 15_000 },
): Promise<T> {
  const link = new EngineLink({ notice: say, meanwhile: 'nothing is taken until it is back', ...pauses });
  for (;;) {
    try {
      const value = await open();
      link.reached();
      return value;
    } catch (error) {
      if (!isTransientOutage(error)) throw error;
      link.lost(error);
      await sleep(link.pause());
    }
  }
}

/**
 * The app a long-running command (`watch`, `worker`) runs on: an engine away at start is waited for,
 * as one that goes away later is, and one that may lose acknowledged commits is refused (unless
 * allowed). What a refusal opened is let go: its telemetry shut down, its engine closed.
 */
export async function openServiceApp(
  command: 'watch' | 'worker',
  options: AppOptions & { readonly allowAsyncCommit: boolean },
  io: Io,
): Promise<App> {
  const { allowAsyncCommit, ...appOptions } = options;
  const { createApp } = await import('../compose/app.js');
  return whenEngineReachable(
    async () => {
      const opened = await createApp(appOptions);
      await requireDurableEngine(opened, command, allowAsyncCommit, io).catch(async (error: unknown) => {
        await opened.telemetry.shutdown();
        throw error;
      });
      return opened;
    },
    (message) => io.stderr.write(`maestro ${command}: ${message}\n`),
  );
}

/** Lets go of an app a command opened and will not run on (it refused to start): telemetry, then the engine. */
export async function releaseApp(app: App): Promise<void> {
  await app.telemetry.shutdown();
  await app.engine?.engine.close();
}
