import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { StorageError } from '../../domain/errors.js';

/**
 * Files up to this size are read synchronously: a missing file or a few KiB costs microseconds that
 * way, while `fs.promises.readFile` takes four or five trips through libuv's thread pool (open, stat,
 * read, close), each a wait for a free core on a busy machine. Larger files (a resumed run's audit
 * log) are read off the event loop.
 */
const READ_SYNC_BYTES = 256 * 1024;

/** A file's text, or undefined when it does not exist; any other failure is a StorageError naming the file. */
export async function readIfExists(file: string): Promise<string | undefined> {
  try {
    const small = readSmallSync(file);
    return small ?? (await readFile(file, 'utf8'));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new StorageError(`could not read ${file}: ${(error as Error).message}`, file, { cause: error });
  }
}

/** The file's text when it is a regular file of at most READ_SYNC_BYTES; undefined when it is larger (or not a regular file). */
function readSmallSync(file: string): string | undefined {
  // Non-blocking: a FIFO put where a file was expected must not hold up the process at its open.
  const fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile() || stat.size > READ_SYNC_BYTES) return undefined;
    // One more byte than the size: a file that grew since the stat is read whole all the same.
    const buffer = Buffer.allocUnsafe(stat.size + 1);
    let length = 0;
    for (;;) {
      if (length === buffer.length) return undefined;
      const n = readSync(fd, buffer, length, buffer.length - length, length);
      if (n === 0) break;
      length += n;
    }
    return buffer.toString('utf8', 0, length);
  } finally {
    closeSync(fd);
  }
}

/** JSON.parse that answers undefined for text that is not JSON (the caller's schema decides the rest). */
export function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A folder's entry names, sorted; none when the folder does not exist. */
export async function listDirOrEmpty(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir)).sort();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}
