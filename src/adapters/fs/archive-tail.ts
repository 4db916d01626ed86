import { open, type FileHandle } from 'node:fs/promises';

/** What the end of a persona's archive holds of the runs about to be archived. */
export interface ArchiveTail {
  /** How many messages of each of those runs end the archive (in order, so they are the first ones). */
  readonly counts: ReadonlyMap<string, number>;
  /** Where a cut last line starts (an append a crash stopped half-way), to be cut off before appending; undefined if none. */
  readonly cutAt: number | undefined;
}

const FIRST_READ_BYTES = 64 * 1024;

interface TailScan {
  readonly counts: Map<string, number>;
  readonly complete: boolean;
  /** Bytes after the last newline. */
  readonly cutBytes: number | undefined;
}

/**
 * Reads `session_states/archive/<persona>_history.jsonl` backwards, whole lines, counting the
 * messages of `runIds` until the first line of another run. Runs are archived oldest first and a run
 * still in the state file was archived last if at all (a crash between the two writes), so what this
 * finds is exactly what a retry must not append again. Reads only the tail: more is read, doubling,
 * only while every line seen so far belongs to those runs.
 */
export async function readArchiveTail(file: string, runIds: ReadonlySet<string>): Promise<ArchiveTail> {
  let handle: FileHandle;
  try {
    handle = await open(file, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { counts: new Map(), cutAt: undefined };
    throw error;
  }
  try {
    const size = (await handle.stat()).size;
    for (let want = FIRST_READ_BYTES; ; want *= 2) {
      const start = Math.max(0, size - want);
      const text = await readRange(handle, start, size);
      const scan = scanTail(text, start === 0, runIds);
      if (!scan.complete && start > 0) continue;
      return { counts: scan.counts, cutAt: scan.cutBytes === undefined ? undefined : size - scan.cutBytes };
    }
  } finally {
    await handle.close().catch(() => undefined);
  }
}

async function readRange(handle: FileHandle, start: number, end: number): Promise<Buffer> {
  const buffer = Buffer.alloc(end - start);
  let read = 0;
  while (read < buffer.length) {
    const { bytesRead } = await handle.read(buffer, read, buffer.length - read, start + read);
    if (bytesRead === 0) break;
    read += bytesRead;
  }
  return buffer.subarray(0, read);
}

/**
 * Counts from the last whole line back. `complete` is false when the text ran out before a line of
 * another run (and it does not start at the beginning of the file): the caller reads further back.
 */
function scanTail(bytes: Buffer, fromFileStart: boolean, runIds: ReadonlySet<string>): TailScan {
  const lastNewline = bytes.lastIndexOf(0x0a);
  // Every append ends with a newline: bytes after the last one are an append cut short.
  const cutBytes = bytes.length - (lastNewline + 1) > 0 ? bytes.length - (lastNewline + 1) : undefined;
  const lines = bytes
    .subarray(0, lastNewline + 1)
    .toString('utf8')
    .split('\n');
  lines.pop();
  // The first line may have begun before the bytes read.
  const firstWhole = fromFileStart ? 0 : 1;
  const counts = new Map<string, number>();
  for (let i = lines.length - 1; i >= firstWhole; i--) {
    const runId = runIdOf(lines[i] ?? '');
    if (runId === undefined || !runIds.has(runId)) return { counts, complete: true, cutBytes };
    counts.set(runId, (counts.get(runId) ?? 0) + 1);
  }
  return { counts, complete: fromFileStart, cutBytes };
}

function runIdOf(line: string): string | undefined {
  try {
    const value = JSON.parse(line) as { run_id?: unknown };
    return typeof value.run_id === 'string' ? value.run_id : undefined;
  } catch {
    return undefined;
  }
}
