import { closeSync, createReadStream, fstatSync, openSync, read, readFileSync } from 'node:fs';
import type { BigIntStats } from 'node:fs';
import { mkdir, rename, stat, truncate } from 'node:fs/promises';
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
  withSavesInFlight,
  type HistoryMessage,
  type SaveInFlight,
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
  /** The count when it costs no tokenizer load, else undefined. */
  readonly countIfCheap: (text: string) => number | undefined;
}

/**
 * `session_states/<persona>_session.json`, written atomically under a lock. A corrupt file is moved
 * aside, never overwritten. Runs beyond `keepRuns` move to `session_states/archive/<persona>_history.jsonl`.
 */
export class FsSessionStore implements SessionStore {
  /**
   * The saves of each persona waiting for its file in this process, in the order their runs ended:
   * they take turns here, not at the file lock, and those ready when the file is free land together
   * (one lock, one read, one write for all: runs that end faster than their saves land do not queue
   * one write each).
   */
  readonly #queued = new Map<string, QueuedSave[]>();
  /** The writer of each persona's file working through its queue, while there is one. */
  readonly #writers = new Map<string, Promise<void>>();
  /**
   * The saves of each persona this process has begun and not yet seen land, oldest first: `load`
   * folds them over the file, so a run started while an earlier one's save is still being written
   * sees that run (DESIGN.md: memory is a snapshot at a run's start). Other processes see a save
   * when it lands, as before.
   */
  readonly #inFlight = new Map<string, SaveInFlight[]>();
  readonly seesSavesInFlight = true;
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

  async load(personaId: string): Promise<SessionLoad> {
    // Taken before the read: a save that lands while the file is read has left this list by the time the
    // read ends, and the read may be of the file before it; taken first, it is here (and, if in the file
    // too, not appended twice: appendRun is idempotent by run id).
    const saves = this.#inFlight.get(personaId) ?? [];
    const loaded = await this.#loadFile(personaId);
    return saves.length === 0 ? loaded : { ...loaded, state: withSavesInFlight(loaded.state, saves, this.keepRuns) };
  }

  /** What the persona's file holds now (a corrupt file moved aside, the persona starting fresh). */
  async #loadFile(personaId: string): Promise<SessionLoad> {
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
    // Runs of this process land in the order they ended (without polling the lock against each other;
    // those ready together in one write: #write); the file lock then keeps other processes out.
    // Registered before anything is awaited: from this call on, `load` sees the run.
    // With the counts at hand (taken while the run waited for the model), so the next run's history need not count.
    const counted = messages.map((m) => (m.tokens === undefined ? withCount(m, this.counting?.countIfCheap(m.content)) : m));
    const save: SaveInFlight = {
      runId,
      messages: counted,
      at: this.clock.now().toISOString(),
    };
    this.#inFlight.set(personaId, [...(this.#inFlight.get(personaId) ?? []), save]);
    try {
      await new Promise<void>((resolve, reject) => {
        const queued: QueuedSave = { runId, messages: counted, options, ready: options.landAfter === undefined, resolve, reject };
        this.#queued.set(personaId, [...(this.#queued.get(personaId) ?? []), queued]);
        // Written only once `landAfter` settles well; when it fails, so does this save (its run did not end well).
        options.landAfter
          ?.then(
            () => (queued.ready = true),
            (error: unknown) => (queued.failed = { error }),
          )
          .finally(() => this.#write(personaId));
        this.#write(personaId);
      });
    } finally {
      // Landed, or failed (the run did not end then, and its ending saves it again when completed).
      const left = (this.#inFlight.get(personaId) ?? []).filter((s) => s !== save);
      if (left.length > 0) this.#inFlight.set(personaId, left);
      else this.#inFlight.delete(personaId);
    }
  }

  /**
   * Works through a persona's queue, unless a writer already does: the saves at its head that may
   * land go together; one whose `landAfter` failed is refused; one not ready yet holds the rest back
   * (memory keeps the order runs ended in) until it settles and calls this again.
   */
  #write(personaId: string): void {
    if (this.#writers.has(personaId)) return;
    const queue = (): QueuedSave[] => this.#queued.get(personaId) ?? [];
    const work = async (): Promise<void> => {
      for (;;) {
        for (let first = queue()[0]; first?.failed; first = queue()[0]) {
          queue().shift();
          first.reject(first.failed.error);
        }
        const batch: QueuedSave[] = [];
        while (queue()[0]?.ready && !queue()[0]?.failed) batch.push(queue().shift() as QueuedSave);
        if (batch.length === 0) return;
        try {
          await this.#appendLocked(personaId, batch);
          for (const b of batch) b.resolve();
        } catch (error) {
          for (const b of batch) b.reject(error);
        }
      }
    };
    const writer = work().finally(() => {
      this.#writers.delete(personaId);
      if (queue().length === 0) this.#queued.delete(personaId);
      else if (queue()[0]?.ready || queue()[0]?.failed) this.#write(personaId);
    });
    this.#writers.set(personaId, writer);
  }

  async #appendLocked(personaId: string, batch: readonly QueuedSave[]): Promise<void> {
    const file = this.fileFor(personaId);
    await mkdir(this.dir, { recursive: true });
    await withFileLock(
      lockPathFor(file),
      async (held) => {
        // The file as it is (not this process's saves in flight: these are among them, and the archive needs what compaction moves).
        const { state } = await this.#loadFile(personaId);
        let appended = state;
        const now = this.clock.now().toISOString();
        for (const save of batch) {
          const known = appended.runs.includes(save.runId) || appended.archived.recent.some((r) => r.run_id === save.runId);
          // A retry whose run other saves have since moved to the archive: it is saved already.
          if (save.options.retry && !known && (await archiveHolds(this.archiveFor(personaId), save.runId))) continue;
          appended = appendRun(appended, save.runId, save.messages, now);
        }
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

  /** Changes the file under its lock, from what it holds now (not this process's saves in flight: they land on top). */
  async update(personaId: string, change: (state: SessionState) => SessionState): Promise<void> {
    const file = this.fileFor(personaId);
    await mkdir(this.dir, { recursive: true });
    await withFileLock(
      lockPathFor(file),
      async (held) => {
        const next = change((await this.#loadFile(personaId)).state);
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
   * The messages with their token counts. A history whose bytes exceed the budget will be counted by
   * the next run: it is counted now, at the end of this one, where loading the tokenizer delays no
   * model call. So is one past half the budget: the next run may start before this save lands, and
   * see it (in flight, its messages not counted yet) past the budget; it then finds the tokenizer
   * loaded instead of loading it (~150 ms) on its way to its first call. A smaller history is counted
   * only where that is free (the tokenizer is loaded already).
   */
  #counted(messages: readonly HistoryMessage[]): HistoryMessage[] {
    const counting = this.counting;
    if (!counting) return [...messages];
    const bytes = messages.reduce((sum, m) => sum + Buffer.byteLength(m.content) + 4, 0);
    const count = bytes > counting.budget / 2 ? counting.count : counting.countIfCheap;
    return messages.map((m) => {
      if (m.tokens !== undefined) return m;
      const tokens = count(m.content);
      return tokens === undefined ? m : { ...m, tokens };
    });
  }
}

/** A save waiting for its persona's file. */
interface QueuedSave {
  readonly runId: string;
  readonly messages: readonly HistoryMessage[];
  readonly options: AppendRunOptions;
  /** Its `landAfter` settled well (or it had none). */
  ready: boolean;
  /** Its `landAfter` failed: it is refused with that error. */
  failed?: { readonly error: unknown };
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

function withCount(message: HistoryMessage, tokens: number | undefined): HistoryMessage {
  return tokens === undefined ? message : { ...message, tokens };
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
  // The open and the stat in synchronous calls (a run's head reads every persona's memory: microseconds
  // each, where trips through the thread pool wait for a core); a file that changed is read off the
  // event loop, whatever its size.
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    const st = fstatSync(fd, { bigint: true });
    const stamp = stampOf(st);
    if (known?.stamp === stamp) return { state: known.state };
    return { text: await readWhole(fd, Number(st.size)), stamp };
  } finally {
    closeSync(fd);
  }
}

/** Bytes read into `buffer` from `position`, off the event loop. */
function readAt(fd: number, buffer: Buffer, position: number): Promise<number> {
  return new Promise((resolve, reject) =>
    read(fd, buffer, 0, buffer.length, position, (error, bytesRead) => (error ? reject(error) : resolve(bytesRead))),
  );
}

/**
 * The file's text from its descriptor (the one its identity was taken from): small files at once,
 * larger ones (a long memory) off the event loop. Read to its end, whatever the size said.
 */
async function readWhole(fd: number, size: number): Promise<string> {
  if (size <= 256 * 1024) return readFileSync(fd, 'utf8');
  const chunks: Buffer[] = [];
  for (let position = 0; ; ) {
    const buffer = Buffer.allocUnsafe(Math.max(64 * 1024, size - position));
    const bytesRead = await readAt(fd, buffer, position);
    if (bytesRead === 0) break;
    chunks.push(buffer.subarray(0, bytesRead));
    position += bytesRead;
  }
  return Buffer.concat(chunks).toString('utf8');
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
