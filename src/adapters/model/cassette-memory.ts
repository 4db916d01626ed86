import type { SessionLoad, SessionStore } from '../../domain/ports.js';
import { parseSessionState } from '../../domain/session-state.js';

/**
 * Persona memory and a cassette. Recording keeps each persona's memory as the run first read it
 * (`record`), so the cassette carries what the prompts were built from; a replay reads that memory
 * instead of the workspace's, which has grown since (the recorded run itself added to it), and adds
 * nothing to it: a replay reproduces a recorded run, it is not a new one.
 */
export function recordingMemory(inner: SessionStore, record: Map<string, unknown>): SessionStore {
  return {
    load: async (personaId, options) => {
      const loaded = await inner.load(personaId, options);
      if (!record.has(personaId)) record.set(personaId, loaded.state);
      return loaded;
    },
    appendRun: (...args) => inner.appendRun(...args),
    update: (...args) => inner.update(...args),
    recallArchive: (...args) => inner.recallArchive(...args),
  };
}

/** The memory a cassette was recorded with, for a replay; a persona it does not hold (an older cassette) reads the workspace's. */
export function replayedMemory(inner: SessionStore, recorded: Readonly<Record<string, unknown>> | undefined): SessionStore {
  return {
    load: async (personaId, options): Promise<SessionLoad> => {
      const parsed = recorded && personaId in recorded ? parseSessionState(recorded[personaId]) : undefined;
      return parsed?.ok ? { state: parsed.value } : inner.load(personaId, options);
    },
    appendRun: async () => undefined,
    update: async () => undefined,
    // The archive is the workspace's: a replay recalls from it as the recorded run did, unless runs archived since changed it.
    recallArchive: (...args) => inner.recallArchive(...args),
  };
}
