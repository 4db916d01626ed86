import { readFile, rename } from 'node:fs/promises';
import path from 'node:path';
import type { Clock, SessionLoad, SessionStore } from '../domain/ports.js';
import { emptySessionState, parseSessionState, type SessionState } from '../domain/session-state.js';
import { writeJsonAtomically } from './atomic-file.js';

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
    await writeJsonAtomically(this.fileFor(state.persona_id), state);
  }
}
