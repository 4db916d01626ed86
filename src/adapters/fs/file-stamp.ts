import type { BigIntStats } from 'node:fs';
import { stat } from 'node:fs/promises';

/** How a stamped cache looks at files: a stat that follows links, and the wall clock (tests put in their own). */
export interface StampSource {
  readonly stat: (file: string) => Promise<BigIntStats>;
  readonly now: () => number;
}

export const realStampSource: StampSource = { stat: (file) => stat(file, { bigint: true }), now: Date.now };

/**
 * A file's identity as seen now: its key changes with any write, rename over it, removal or permission
 * change. `trusted` is false while the file changed too recently for that to hold: file times advance in
 * clock ticks, so a second write within the tick of the first can leave every field as it was.
 */
export interface FileStamp {
  readonly key: string;
  readonly trusted: boolean;
}

/** No file at that path: a state of its own, which any file created there replaces. */
export const ABSENT: FileStamp = { key: 'absent', trusted: true };

/** File systems with sub-second times stamp them from a clock that ticks every 1–10 ms (Linux's coarse clock). */
const FINE_MARGIN_MS = 25;
/** Times in whole seconds (ext3, HFS+, most network shares) or FAT's two-second steps. */
const COARSE_MARGIN_MS = 2_500;
const NS_PER_MS = 1_000_000n;
const NS_PER_S = 1_000_000_000n;

/**
 * The stamp of a stat taken at `nowMs`: device, inode, size, mode, and modification and change times in
 * nanoseconds. Trusted only when the latest of those times lies far enough before now that a write after
 * this look must get a later time (a time in the future is never trusted).
 */
export function stampOf(st: BigIntStats, nowMs: number): FileStamp {
  const key = `${st.dev}:${st.ino}:${st.size}:${st.mode}:${st.mtimeNs}:${st.ctimeNs}`;
  const changedMs = Math.max(Number(st.mtimeNs / NS_PER_MS), Number(st.ctimeNs / NS_PER_MS));
  const coarse = st.mtimeNs % NS_PER_S === 0n && st.ctimeNs % NS_PER_S === 0n;
  const margin = coarse ? COARSE_MARGIN_MS : FINE_MARGIN_MS;
  return { key, trusted: changedMs < nowMs - margin };
}

/**
 * What was made of files (read, parsed, validated), each kept with the stamp of the file it came from,
 * so a file that has not changed is not read and validated again. Take the stamp *before* reading: a
 * change during the read then shows as a different stamp next time, and is read again.
 */
export class StampedCache<T> {
  readonly #entries = new Map<string, { readonly key: string; readonly value: T }>();

  constructor(private readonly source: StampSource = realStampSource) {}

  /** The file's stamp now; `ABSENT` when there is no file. Any other failure (permissions, a broken path) throws. */
  async stamp(file: string): Promise<FileStamp> {
    const now = this.source.now();
    try {
      return stampOf(await this.source.stat(file), now);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return ABSENT;
      throw error;
    }
  }

  /** What was kept for the file, when its stamp is still the one it was made from and is trusted. */
  get(file: string, stamp: FileStamp): T | undefined {
    const entry = this.#entries.get(file);
    return stamp.trusted && entry?.key === stamp.key ? entry.value : undefined;
  }

  /** Keeps `value` for the file as of `stamp`; a stamp not trusted yet keeps nothing (the next look reads it again). */
  set(file: string, stamp: FileStamp, value: T): void {
    if (stamp.trusted) this.#entries.set(file, { key: stamp.key, value });
    else this.#entries.delete(file);
  }

  /** The kept value, or `make()`'s (kept when its stamp is trusted); a stat that fails makes it without the cache. */
  async through(file: string, make: () => Promise<{ value: T; keep: boolean }>): Promise<T> {
    let stamp: FileStamp | undefined;
    try {
      stamp = await this.stamp(file);
    } catch {
      // Not stat-able (a permission, a path through a file): reading it says what is wrong.
      this.#entries.delete(file);
    }
    const kept = stamp && this.get(file, stamp);
    if (kept !== undefined) return kept;
    const made = await make();
    if (stamp && made.keep) this.set(file, stamp, made.value);
    else this.#entries.delete(file);
    return made.value;
  }
}
