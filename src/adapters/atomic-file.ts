import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import writeFileAtomic from 'write-file-atomic';
import { StorageError } from '../domain/errors.js';

/**
 * Writes a file so that a crash leaves either the old content or the new, never half:
 * temporary file in the same folder, fsync, rename (write-file-atomic).
 */
export async function writeFileAtomically(file: string, content: string, options: { mode?: number } = {}): Promise<void> {
  try {
    await mkdir(path.dirname(file), { recursive: true });
    await writeFileAtomic(file, content, { encoding: 'utf8', fsync: true, ...(options.mode ? { mode: options.mode } : {}) });
  } catch (error) {
    throw new StorageError(`could not write ${file}: ${(error as Error).message}`, file, { cause: error });
  }
}

export async function writeJsonAtomically(file: string, value: unknown, options: { mode?: number } = {}): Promise<void> {
  await writeFileAtomically(file, `${JSON.stringify(value, null, 2)}\n`, options);
}

/** Creates the private runtime folder (`.maestro/...`) with mode 0700. */
export async function ensurePrivateDir(dir: string): Promise<void> {
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
  } catch (error) {
    throw new StorageError(`could not create ${dir}: ${(error as Error).message}`, dir, { cause: error });
  }
}
