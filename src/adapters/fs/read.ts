import { readdir, readFile } from 'node:fs/promises';
import { StorageError } from '../../domain/errors.js';

/** A file's text, or undefined when it does not exist; any other failure is a StorageError naming the file. */
export async function readIfExists(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new StorageError(`could not read ${file}: ${(error as Error).message}`, file, { cause: error });
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
