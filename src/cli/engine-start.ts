import { setTimeout as sleep } from 'node:timers/promises';
import { EngineLink, isTransientOutage } from '../app/engine-link.js';

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
