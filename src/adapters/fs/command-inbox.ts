import { watch, type FSWatcher } from 'node:fs';
import { lstat, mkdir, readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { withoutBom } from '../../domain/command-file.js';
import { compareReadyFiles, isCommandFileName, type CommandInbox, type ReadyFile } from '../../domain/queue.js';
import { MAX_COMMAND_BYTES } from '../../domain/command-file.js';

export interface FsCommandInboxOptions {
  /** The drop folder (`commands/`); created if missing. */
  readonly dir: string;
  /** How long a file that does not parse must stay unchanged before it is judged (and rejected). */
  readonly stabilityMs?: number;
  /** Watcher errors (the folder vanished, permissions): reported, never fatal. */
  readonly onError?: (error: Error) => void;
}

interface Unsettled {
  /** Size and mtime last seen; a change restarts the stability clock. */
  readonly signature: string;
  readonly since: number;
  readonly timer: NodeJS.Timeout;
}

/**
 * Turns the events of a watch on `commands/` (`fs.watch`: one handle on the folder, no polling) and a
 * start-up scan of the files already there into ready files, oldest first. Every event only names a
 * file to look at again: what counts is what `lstat` and a read find then. A file is ready when it
 * parses as JSON; one that does not is waited for while it changes, and handed over (to be rejected)
 * once it has not changed for `stabilityMs`; so is a symbolic link, unread. Only the top level is
 * watched; subfolders and other non-regular files are ignored.
 */
export class FsCommandInbox implements CommandInbox {
  readonly #dir: string;
  readonly #stabilityMs: number;
  readonly #onError: (error: Error) => void;
  readonly #now: () => number = Date.now;
  #watcher: FSWatcher | undefined;
  #onChange: () => void = () => undefined;
  #scanned = false;
  #closed = false;
  readonly #ready = new Map<string, ReadyFile>();
  readonly #unsettled = new Map<string, Unsettled>();
  readonly #checking = new Map<string, Promise<void>>();
  /**
   * Names that changed while being checked: checked again right after, as for the event that marked
   * them (true), so the re-check after it still gets its early look (see #scheduleRecheck).
   */
  readonly #dirty = new Map<string, boolean>();
  /** Names re-checked by a timer since their last fs event (see #scheduleRecheck). */
  readonly #recheckedSinceEvent = new Set<string>();

  constructor(options: FsCommandInboxOptions) {
    this.#dir = path.resolve(options.dir);
    this.#stabilityMs = options.stabilityMs ?? 2000;
    this.#onError = options.onError ?? (() => undefined);
  }

  get pending(): number {
    return this.#unsettled.size + this.#checking.size;
  }

  get ready(): number {
    return this.#ready.size;
  }

  async start(onChange: () => void): Promise<void> {
    this.#onChange = onChange;
    await mkdir(this.#dir, { recursive: true });
    if (this.#closed) return;
    // Watched before the scan: a file that arrives meanwhile is seen by one or both (a check may repeat).
    // An event without a name (some platforms) has the whole folder looked at again.
    this.#watcher = watch(this.#dir, { persistent: true }, (_event, name) => {
      if (name) this.#schedule(path.join(this.#dir, name), true);
      else void this.#scan();
    });
    this.#watcher.on('error', (error) => this.#onError(error));
    await this.#scan();
    // The start-up scan is complete only when every file it found has been looked at, so the
    // first file taken really is the oldest.
    while (this.#checking.size > 0) await Promise.all([...this.#checking.values()]);
    if (this.#closed) return;
    this.#scanned = true;
    this.#onChange();
  }

  /** Every name in the folder, looked at again. */
  async #scan(): Promise<void> {
    try {
      for (const name of await readdir(this.#dir)) this.#schedule(path.join(this.#dir, name), true);
    } catch (error) {
      this.#onError(error instanceof Error ? error : new Error(String(error)));
    }
  }

  take(): ReadyFile | undefined {
    let oldest: ReadyFile | undefined;
    for (const file of this.#ready.values()) if (!oldest || compareReadyFiles(file, oldest) < 0) oldest = file;
    if (oldest) this.#ready.delete(oldest.name);
    return oldest;
  }

  putBack(file: ReadyFile): void {
    // A file changed or removed since is seen again by the watch; this one keeps its place in the order.
    if (!this.#closed && !this.#ready.has(file.name)) this.#ready.set(file.name, file);
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const u of this.#unsettled.values()) clearTimeout(u.timer);
    this.#unsettled.clear();
    this.#watcher?.close();
    await Promise.all([...this.#checking.values()]);
  }

  #schedule(file: string, fromEvent: boolean): void {
    if (this.#closed || path.dirname(path.resolve(file)) !== this.#dir) return;
    const name = path.basename(file);
    if (!isCommandFileName(name)) return;
    if (fromEvent) this.#recheckedSinceEvent.delete(name);
    if (this.#checking.has(name)) {
      this.#dirty.set(name, fromEvent || this.#dirty.get(name) === true);
      return;
    }
    const run = this.#check(name)
      .catch((error: unknown) => this.#onError(error instanceof Error ? error : new Error(String(error))))
      .finally(() => {
        this.#checking.delete(name);
        const dirty = this.#dirty.get(name);
        this.#dirty.delete(name);
        if (dirty !== undefined) this.#schedule(path.join(this.#dir, name), dirty);
        else if (this.#scanned) this.#onChange();
      });
    this.#checking.set(name, run);
  }

  async #check(name: string): Promise<void> {
    const file = path.join(this.#dir, name);
    const previous = this.#unsettled.get(name);
    if (previous) clearTimeout(previous.timer);
    this.#unsettled.delete(name);
    let info;
    try {
      info = await lstat(file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      this.#ready.delete(name);
      this.#recheckedSinceEvent.delete(name);
      return;
    }
    const ready: ReadyFile = { name, mtimeMs: info.mtimeMs };
    // A link is handed over unread, to be rejected with that reason (never left lying in commands/).
    if (info.isSymbolicLink()) {
      this.#ready.set(name, ready);
      return;
    }
    if (!info.isFile()) {
      this.#ready.delete(name);
      return;
    }
    // Too big to be a command: hand it over unread, to be rejected with that reason.
    if (info.size > MAX_COMMAND_BYTES || parses(await readFile(file, 'utf8').catch(() => ''))) {
      this.#ready.set(name, ready);
      return;
    }
    this.#ready.delete(name);
    if (this.#closed) return;
    const now = this.#now();
    const signature = `${info.size}:${info.mtimeMs}`;
    const since = previous?.signature === signature ? previous.since : Math.min(now, Math.max(info.mtimeMs, now - this.#stabilityMs));
    if (now - since >= this.#stabilityMs) {
      this.#ready.set(name, ready);
      return;
    }
    const timer = this.#scheduleRecheck(name, this.#stabilityMs - (now - since));
    this.#unsettled.set(name, { signature, since, timer });
  }

  /**
   * Re-checks a file that does not parse yet when it would become stable. The watch may fold a fast
   * writer's last write into an event already handled (a check under way reads the file once), so one
   * early re-check after each event catches that case without waiting the whole stability time.
   */
  #scheduleRecheck(name: string, untilStable: number): NodeJS.Timeout {
    const early = !this.#recheckedSinceEvent.has(name);
    this.#recheckedSinceEvent.add(name);
    const delay = early ? Math.min(untilStable, 100) : untilStable;
    return setTimeout(() => this.#schedule(path.join(this.#dir, name), false), Math.max(1, delay));
  }
}

function parses(text: string): boolean {
  if (text.trim().length === 0) return false;
  try {
    JSON.parse(withoutBom(text));
    return true;
  } catch {
    return false;
  }
}
