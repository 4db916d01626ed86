import { mkdir, readFile, rename } from 'node:fs/promises';
import path from 'node:path';
import type { Clock, SessionLoad, SessionStore } from '../domain/ports.js';
import { emptySessionState, parseSessionState, type SessionState } from '../domain/session-state.js';
import { writeJsonAtomically } from './atomic-file.js';
import { withFileLock } from './file-lock.js';

/** `session_states/<persona>_session.json`, written atomically. A corrupt file is moved aside, never overwritten. */
export class FsSessionStore implements SessionStore {
  constructor(
    private readonly dir: string,
    private readonly clock: Clock,
  ) {}

  fileFor(personaId: string): string {
    return path.join(this.dir, `${personaId}_session.json`);
  }

  async load(personaId: string): Promise<SessionLoad> {
    const file = this.fileFor(personaId);
    const now = this.clock.now();
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { state: emptySessionState(personaId, now.toISOString()) };
      throw error;
    }
    let problem: string | undefined;
    try {
      const parsed = parseSessionState(JSON.parse(text));
      if (parsed.ok && parsed.value.persona_id === personaId) return { state: parsed.value };
      problem = parsed.ok ? `belongs to persona "${parsed.value.persona_id}"` : parsed.issues.slice(0, 3).join('; ');
    } catch (error) {
      problem = `not valid JSON (${(error as Error).message})`;
    }
    const stamp = now.toISOString().replace(/[:.]/g, '-');
    const movedTo = `${file}.corrupt-${stamp}`;
    await rename(file, movedTo);
    return { state: emptySessionState(personaId, now.toISOString()), recovered: { movedTo, problem } };
  }

  async save(state: SessionState): Promise<void> {
    const file = this.fileFor(state.persona_id);
    await mkdir(this.dir, { recursive: true });
    await withFileLock(`${file}.lock`, async () => writeJsonAtomically(file, await this.#withRunsSavedSinceLoad(state)));
  }

  /**
   * Two watchers on one workspace share the council: each loads a persona's history when its run
   * starts and saves it when the run ends, so the later save would drop the runs the other saved in
   * between. Those runs are kept (whole runs only, by run id); ours follow them. The caller holds
   * the file's lock, so no save slips in between this read and the write.
   */
  async #withRunsSavedSinceLoad(state: SessionState): Promise<SessionState> {
    let onDisk: SessionState;
    try {
      const parsed = parseSessionState(JSON.parse(await readFile(this.fileFor(state.persona_id), 'utf8')));
      if (!parsed.ok || parsed.value.persona_id !== state.persona_id) return state;
      onDisk = parsed.value;
    } catch {
      // Missing or unreadable: there is nothing saved by anyone else to keep.
      return state;
    }
    if (onDisk.runs.every((id) => state.runs.includes(id))) return state;
    const ours = state.runs.filter((id) => !onDisk.runs.includes(id));
    return {
      ...state,
      runs: [...onDisk.runs, ...ours],
      messages: [...onDisk.messages, ...state.messages.filter((m) => ours.includes(m.run_id))],
    };
  }
}
