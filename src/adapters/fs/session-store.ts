import { createReadStream, type BigIntStats } from 'node:fs';
import { mkdir, open, rename, stat, truncate, type FileHandle } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import path from 'node:path';
import type { AppendRunOptions, Clock, SessionLoad, SessionStore } from '../../domain/ports.js';
import { corruptPathFor, lockPathFor } from '../../domain/runtime-files.js';
import { StorageError } from '../../domain/errors.js';
import {
  appendRun,
  compactSession,
  emptySessionState,
  parseSessionState,
  unarchivedMessages,
  type HistoryMessage,
  type SessionState,
} from '../../domain/session-state.js';
import { readArchiveTail, type ArchiveTail } from './archive-tail.js';
import { appendDurably, writeJsonAtomically } from './atomic-file.js';
import { withFileLock, type FileLockOptions, type HeldLock } from './file-lock.js';

/** How the store counts the tokens of the messages it keeps. */
export interface SessionCounting {
  /** The history budget (`history.max_tokens`). */
  readonly budget: number;
  readonly count: (text: string) => number;
}

/**
 * `session_states/<persona>_session.json`, written atomically under a lock. A corrupt file is moved
 * aside, never overwritten. Runs beyond `keepRuns` move to `session_states/archive/<persona>_history.jsonl`.
 */
export class FsSessionStore implements SessionStore {
  /** The save of each persona this process is writing: its next save waits for it (they take turns here, not by polling the file lock). */
  readonly #turns = new Map<string, Promise<void>>();
  /**
   * The state each persona's file held when this process last read or wrote it, with the file's
   * identity then (inode, size, times): a file that has not changed since is not read and validated
   * again. Files are only ever replaced whole (renamed over), so another process's save changes it.
   */
  readonly #known = new Map<string, { readonly stamp: string; readonly state: SessionState }>();

  constructor(
    private readonly dir: string,
    private readonly clock: Clock,
    private readonly keepRuns = 30,
    /** Token counts kept with each message, so a later run need not count (or load the tokenizer) before its first call. */
    private readonly counting?: SessionCounting,
    /** The lock on each session file (tests shorten the stale time). */
    private readonly lockOptions: FileLockOptions = {},
  ) {}

  fileFor(personaId: string): string {
    return path.join(this.dir, `${personaId}_session.json`);
  }

  archiveFor(personaId: string): string {
    return path.join(this.dir, 'archive', `${personaId}_history.jsonl`);
  }

  /** What the persona's file holds now (a corrupt file moved aside, the persona starting fresh). */
  async load(personaId: string): Promise<SessionLoad> {
    const file = this.fileFor(personaId);
    const now = this.clock.now();
    const read = await readUnlessKnown(file, this.#known.get(personaId));
    if (read === undefined) return { state: emptySessionState(personaId, now.toISOString()) };
    if ('state' in read) return { state: read.state };
    let problem: string | undefined;
    try {
      const parsed = parseSessionState(JSON.parse(read.text));
      if (parsed.ok && parsed.value.persona_id === personaId) {
        this.#known.set(personaId, { stamp: read.stamp, state: parsed.value });
        return { state: parsed.value };
      }
      problem = parsed.ok ? `belongs to persona "${parsed.value.persona_id}"` : parsed.issues.slice(0, 3).join('; ');
    } catch (error) {
      problem = `not valid JSON (${(error as Error).message})`;
    }
    const movedTo = corruptPathFor(file, now);
    await rename(file, movedTo);
    return { state: emptySessionState(personaId, now.toISOString()), recovered: { movedTo, problem } };
  }

  /**
   * Two watchers on one workspace share the council, so the file is re-read under its lock and the
   * run appended to what is there now — never to what was there when the run started. Each write
   * first checks that the lock is still this process's: one that lost it (stalled past the stale
   * time) fails with a StorageError instead of writing over the new holder's work.
   */
  async appendRun(personaId: string, runId: string, messages: readonly HistoryMessage[], options: AppendRunOptions = {}): Promise<void> {
    const saving = (this.#turns.get(personaId) ?? Promise.resolve()).then(() => this.#appendLocked(personaId, runId, messages, options));
    const turn = saving.catch(() => undefined);
    this.#turns.set(personaId, turn);
    try {
      await saving;
    } finally {
      if (this.#turns.get(personaId) === turn) this.#turns.delete(personaId);
    }
  }

  async #appendLocked(personaId: string, runId: string, messages: readonly HistoryMessage[], options: AppendRunOptions): Promise<void> {
    const file = this.fileFor(personaId);
    await mkdir(this.dir, { recursive: true });
    await withFileLock(
      lockPathFor(file),
      async (held) => {
        const { state } = await this.load(personaId);
        const known = state.runs.includes(runId) || state.archived.recent.some((r) => r.run_id === runId);
        // A retry whose run other saves have since moved to the archive: it is saved already.
        if (options.retry && !known && (await archiveHolds(this.archiveFor(personaId), runId))) return;
        const appended = appendRun(state, runId, messages, this.clock.now().toISOString());
        const { state: compacted, moved } = compactSession(appended, this.keepRuns);
        // Counted before the writes and their checks: counting may load the tokenizer, and a holder
        // that stalls there must find out before it writes, not after.
        const next = { ...compacted, messages: this.#counted(compacted.messages) };
        // Archive first: a crash in between leaves a run in both places, never in neither; the next
        // save then finds it at the end of the archive and does not append it again.
        if (moved.length > 0) await this.#archive(personaId, moved, held);
        await held.assertHeld();
        await writeJsonAtomically(file, next);
        // Under the lock still: what is there now is what was just written.
        this.#known.set(personaId, { stamp: stampOf(await stat(file, { bigint: true })), state: next });
      },
      this.lockOptions,
    );
  }

  /** Changes the file under its lock, from what it holds now. */
  async update(personaId: string, change: (state: SessionState) => SessionState): Promise<void> {
    const file = this.fileFor(personaId);
    await mkdir(this.dir, { recursive: true });
    await withFileLock(
      lockPathFor(file),
      async (held) => {
        const next = change((await this.load(personaId)).state);
        await held.assertHeld();
        await writeJsonAtomically(file, next);
        this.#known.set(personaId, { stamp: stampOf(await stat(file, { bigint: true })), state: next });
      },
      this.lockOptions,
    );
  }

  /** Appends the messages the archive does not hold yet, after cutting off a line a crash left half-written. */
  async #archive(personaId: string, moved: readonly HistoryMessage[], held: HeldLock): Promise<void> {
    const archive = this.archiveFor(personaId);
    await mkdir(path.dirname(archive), { recursive: true });
    let tail: ArchiveTail;
    try {
      tail = await readArchiveTail(archive, new Set(moved.map((m) => m.run_id)));
    } catch (error) {
      throw new StorageError(`could not read the end of ${archive}: ${(error as Error).message}`, archive, { cause: error });
    }
    if (tail.cutAt !== undefined) {
      await held.assertHeld();
      await truncate(archive, tail.cutAt).catch((error: unknown) => {
        throw new StorageError(`could not cut a half-written line off ${archive}: ${(error as Error).message}`, archive, { cause: error });
      });
    }
    const fresh = unarchivedMessages(moved, tail.counts);
    if (fresh.length === 0) return;
    await held.assertHeld();
    await appendDurably(archive, `${fresh.map((m) => JSON.stringify(m)).join('\n')}\n`);
  }

  /**
   * The messages with their token counts, once the history's bytes exceed the budget: the next run
   * bounds it by counting, and finds each message counted already (once, here, where loading the
   * tokenizer delays no model call). A smaller history needs no count.
   */
  #counted(messages: readonly HistoryMessage[]): HistoryMessage[] {
    const counting = this.counting;
    const bytes = messages.reduce((sum, m) => sum + Buffer.byteLength(m.content) + 4, 0);
    if (!counting || bytes <= counting.budget) return [...messages];
    return messages.map((m) => (m.tokens === undefined ? { ...m, tokens: counting.count(m.content) } : m));
  }
}

/** A file's identity as it is replaced whole: inode, size and times (nanoseconds). */
function stampOf(st: BigIntStats): string {
  return `${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
}

/**
 * The file's text and identity, read from one descriptor; or the state known for it when its identity
 * has not changed since; undefined when there is no file.
 */
async function readUnlessKnown(
  file: string,
  known: { readonly stamp: string; readonly state: SessionState } | undefined,
): Promise<{ text: string; stamp: string } | { state: SessionState } | undefined> {
  let handle: FileHandle;
  try {
    handle = await open(file, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    const stamp = stampOf(await handle.stat({ bigint: true }));
    if (known?.stamp === stamp) return { state: known.state };
    return { text: await handle.readFile('utf8'), stamp };
  } finally {
    await handle.close();
  }
}

/** Whether the archive holds a message of this run (read line by line; a missing archive holds none). */
async function archiveHolds(archive: string, runId: string): Promise<boolean> {
  const needle = `"run_id":${JSON.stringify(runId)}`;
  const lines = createInterface({ input: createReadStream(archive, { encoding: 'utf8' }), crlfDelay: Number.POSITIVE_INFINITY });
  try {
    for await (const line of lines) {
      if (!line.includes(needle)) continue;
      try {
        if ((JSON.parse(line) as { run_id?: unknown }).run_id === runId) return true;
      } catch {
        // A line a crash cut short: the next save cuts it off.
      }
    }
    return false;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw new StorageError(`could not read ${archive}: ${(error as Error).message}`, archive, { cause: error });
  } finally {
    lines.close();
  }
}
