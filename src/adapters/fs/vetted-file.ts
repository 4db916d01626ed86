import { constants } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { isBinaryFile } from 'isbinaryfile';
import { credentialContentReason } from '../../domain/credential-files.js';

/** A file the sandbox may hand to a model, or why not. */
export type VettedFile =
  | { readonly ok: true; readonly data: Buffer; readonly size: number }
  | {
      readonly ok: false;
      readonly status: 'refused' | 'error';
      readonly message: string;
      readonly reason_code: string;
      readonly bytes?: number;
    };

// O_NOFOLLOW: the path was resolved already; a symlink put in its place since then is not followed.
// O_NONBLOCK: a FIFO swapped in after the first check must not hang the run on open.
const OPEN_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/**
 * Opens a file whose path the sandbox has resolved and approved, and reads at most `limit` bytes.
 * What decides is checked on the open descriptor, so a file swapped after the path checks cannot
 * slip through: it must be the regular file that was checked, with exactly one hard link (a second
 * name may lie outside the knowledge roots, where realpath cannot see it), not binary, and not a
 * credential by content (a renamed private key). Never throws: every outcome is a value.
 */
export async function readVettedFile(absolute: string, limit: number): Promise<VettedFile> {
  let handle;
  try {
    // Looked at before opening, so a FIFO or device is never opened at all.
    const before = await stat(absolute);
    if (!before.isFile()) return notAFile(before.isDirectory());
    handle = await open(absolute, OPEN_FLAGS);
    const info = await handle.stat();
    if (!info.isFile()) return notAFile(info.isDirectory());
    if (info.dev !== before.dev || info.ino !== before.ino) {
      return refused('changed while it was being opened; not served', 'KNOWLEDGE_PATH_ESCAPE');
    }
    if (info.nlink > 1) {
      const why = 'another name for it may lie outside the knowledge roots, so it is not served (copy the file instead of linking it)';
      return refused(`has ${info.nlink} hard links: ${why}`, 'KNOWLEDGE_HARD_LINK');
    }
    const buffer = Buffer.alloc(Math.min(info.size, limit));
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    const data = buffer.subarray(0, bytesRead);
    if (bytesRead > 0 && (await isBinaryFile(data, bytesRead))) {
      return { ...refused('binary file, not served', 'KNOWLEDGE_BINARY_REFUSED'), bytes: info.size };
    }
    const credential = credentialContentReason(data.toString('utf8'));
    if (credential) return refused(`withheld: the file ${credential}`, 'KNOWLEDGE_PRIVATE_KEY');
    return { ok: true, data, size: info.size };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // ELOOP: the last component became a symlink after it was resolved (O_NOFOLLOW refused it).
    if (code === 'ELOOP') return refused('changed into a symbolic link while it was being opened; not served', 'KNOWLEDGE_PATH_ESCAPE');
    if (code === 'ENOENT') return { ok: false, status: 'error', message: 'not found', reason_code: 'KNOWLEDGE_NOT_FOUND' };
    return { ok: false, status: 'error', message: `could not be read (${code ?? 'error'})`, reason_code: 'KNOWLEDGE_READ_FAILED' };
  } finally {
    await handle?.close();
  }
}

function refused(message: string, reason_code: string): VettedFile & { ok: false } {
  return { ok: false, status: 'refused', message, reason_code };
}

function notAFile(isDirectory: boolean): VettedFile {
  const message = isDirectory ? 'is a folder, not a file' : 'is not a regular file';
  return { ok: false, status: 'error', message, reason_code: 'KNOWLEDGE_NOT_A_FILE' };
}
