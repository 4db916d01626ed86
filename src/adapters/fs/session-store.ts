import { createReadStream, type BigIntStats } from 'node:fs';
import { mkdir, open, rename, stat, truncate, type FileHandle } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import path from 'node:path';
import type { AppendRunOptions, Clock, SessionLoad, SessionLoadOptions, SessionStore } from '../../domain/ports.js';
import { corruptPathFor, lockPathFor } from '../../domain/runtime-files.js';
import { StorageError } from '../../domain/errors.js';
import type { Passage } from '../../domain/memory/passages.js';
import {
  appendRun,
  archivedPassages,
  compactSession,
  countMemory,
  emptySessionState,
  holdsRun,
  parseSessionState,
  unarchivedMessages,
  type RunMemory,
  type SessionState,
} from '../../domain/session-state.js';
import { readArchiveTail, type ArchiveTail } from './archive-tail.js';
import { appendDurably, writeJsonAtomically } from './atomic-file.js';
import { withFileLock, type FileLockOptions, type HeldLock } from './file-lock.js';

/** How the store counts the tokens of the memory it keeps. */
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
  readonly #turns = new Map<string, Promise<unknown>>();
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
    /** Token counts kept with each summary and passage, so a later run need not count (or load the tokenizer) before its first call. */
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

  async recallArchive(personaId: string, terms: readonly string[], limit: number): Promise<Passage[]> {
    return terms.length === 0 || limit <= 0 ? [] : recallFromArchive(this.archiveFor(personaId), terms, limit);
  }

  /** What the persona's file holds now (a corrupt file moved aside, the persona starting fresh). */
  async load(personaId: string, options: SessionLoadOptions = {}): Promise<SessionLoad> {
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
    if (options.leaveCorrupt) return { state: emptySessionState(personaId, now.toISOString()), corrupt: { file, problem } };
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
  async appendRun(personaId: string, runId: string, memory: RunMemory, options: AppendRunOptions = {}): Promise<SessionLoad['recovered']> {
    const saving = (this.#turns.get(personaId) ?? Promise.resolve()).then(() => this.#appendLocked(personaId, runId, memory, options));
    const turn = saving.catch(() => undefined);
    this.#turns.set(personaId, turn);
    try {
      return await saving;
    } finally {
      if (this.#turns.get(personaId) === turn) this.#turns.delete(personaId);
    }
  }

  async #appendLocked(personaId: string, runId: string, memory: RunMemory, options: AppendRunOptions): Promise<SessionLoad['recovered']> {
    const file = this.fileFor(personaId);
    await mkdir(this.dir, { recursive: true });
    return withFileLock(
      lockPathFor(file),
      async (held) => {
        const { state, recovered } = await this.load(personaId);
        // A retry whose run other saves have since moved to the archive: it is saved already.
        if (options.retry && !holdsRun(state, runId) && (await archiveHolds(this.archiveFor(personaId), runId))) return recovered;
        const appended = appendRun(state, runId, memory, this.clock.now().toISOString());
        // Counted before the writes and their checks (and before passages move, so the archive keeps
        // their counts): counting may load the tokenizer, and a holder that stalls there must find
        // out before it writes, not after.
        const counting = this.counting;
        const counted = counting ? countMemory(appended, counting.budget, counting.count) : appended;
        const { state: next, moved } = compactSession(counted, this.keepRuns);
        // Archive first: a crash in between leaves a run in both places, never in neither; the next
        // save then finds it at the end of the archive and does not append it again.
        if (moved.length > 0) await this.#archive(personaId, moved, held);
        await held.assertHeld();
        await writeJsonAtomically(file, next);
        // Under the lock still: what is there now is what was just written.
        this.#known.set(personaId, { stamp: stampOf(await stat(file, { bigint: true })), state: next });
        return recovered;
      },
      this.lockOptions,
    );
  }

  /** Changes the file under its lock, from what it holds now. */
  async update(personaId: string, change: (state: SessionState) => SessionState): Promise<SessionLoad['recovered']> {
    const file = this.fileFor(personaId);
    await mkdir(this.dir, { recursive: true });
    let recovered: SessionLoad['recovered'];
    await withFileLock(
      lockPathFor(file),
      async (held) => {
        const loaded = await this.load(personaId);
        recovered = loaded.recovered;
        const next = change(loaded.state);
        await held.assertHeld();
        await writeJsonAtomically(file, next);
        this.#known.set(personaId, { stamp: stampOf(await stat(file, { bigint: true })), state: next });
        return recovered;
      },
      this.lockOptions,
    );
    return recovered;
  }

  /** Appends the messages the archive does not hold yet, after cutting off a line a crash left half-written. */
  async #archive(personaId: string, moved: readonly Passage[], held: HeldLock): Promise<void> {
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
  let handle: FileHandle | undefined;
  try {
    handle = await open(file, 'r');
    const stamp = stampOf(await handle.stat({ bigint: true }));
    if (known?.stamp === stamp) return { state: known.state };
    return { text: await handle.readFile('utf8'), stamp };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    // Not the file's content (a damaged one is moved aside): the file cannot be read here, which a person fixes.
    throw new StorageError(`could not read the session state ${file}: ${(error as Error).message}`, file, { cause: error });
  } finally {
    await handle?.close();
  }
}

/** Whether the archive holds a record of this run. */
async function archiveHolds(archive: string, runId: string): Promise<boolean> {
  const needle = `"run_id":${JSON.stringify(runId)}`;
  let held = false;
  await eachArchiveLine(archive, (line) => {
    if (!line.includes(needle)) return false;
    try {
      held = (JSON.parse(line) as { run_id?: unknown }).run_id === runId;
    } catch {
      // A line a crash cut short: the next save cuts it off.
    }
    return held;
  });
  return held;
}

/** The archive's passages holding one of `terms` (lower case), the newest `limit`, oldest first. */
async function recallFromArchive(archive: string, terms: readonly string[], limit: number): Promise<Passage[]> {
  const found: Passage[] = [];
  await eachArchiveLine(archive, (line) => {
    const lower = line.toLowerCase();
    if (!terms.some((t) => lower.includes(t))) return false;
    try {
      found.push(...archivedPassages(JSON.parse(line)));
    } catch {
      // A line a crash cut short: the next save cuts it off.
    }
    if (found.length > 2 * limit) found.splice(0, found.length - limit);
    return false;
  });
  return found.slice(-limit);
}

/** Each line of the archive in order, until `visit` returns true (a missing archive has none). */
async function eachArchiveLine(archive: string, visit: (line: string) => boolean): Promise<void> {
  const lines = createInterface({ input: createReadStream(archive, { encoding: 'utf8' }), crlfDelay: Number.POSITIVE_INFINITY });
  try {
    for await (const line of lines) if (visit(line)) return;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw new StorageError(`could not read ${archive}: ${(error as Error).message}`, archive, { cause: error });
  } finally {
    lines.close();
  }
}
