import { readFile, stat, utimes, writeFile } from 'node:fs/promises';
import { expect } from 'vitest';

/**
 * Rewrites a file in place with text of the same length and puts its modification time back as it
 * was: an edit that only the file's change time (and inode-level stamp) can tell. `settleMs`: then
 * waits that long, so the edit is no longer recent either.
 */
export async function editKeepingSizeAndMtime(file: string, edit: (text: string) => string, settleMs = 0): Promise<void> {
  const before = await stat(file);
  const text = await readFile(file, 'utf8');
  const edited = edit(text);
  expect(edited.length).toBe(text.length);
  await writeFile(file, edited);
  await utimes(file, before.atime, before.mtime);
  expect((await stat(file)).mtimeMs).toBe(before.mtimeMs);
  if (settleMs > 0) await new Promise((r) => setTimeout(r, settleMs));
}
