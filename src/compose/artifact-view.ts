import { createReadStream } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { screenText } from '../domain/screen.js';

/** Up to this size an artifact is shown whole (rendered); a larger one in parts of about this size, or downloaded. */
export const ARTIFACT_PART_BYTES = 512 * 1024;

/** A run's artifact as a page shows it: one part of its text (all of it when it is small), and what its bytes are now. */
export interface ArtifactView {
  readonly bytes: number;
  /** SHA-256 of the file's bytes as they are now (to hold against what the run's audit log recorded). */
  readonly sha256: string;
  readonly parts: number;
  /** 0-based. */
  readonly part: number;
  /** The part's text, cut at line ends (never inside a character). Not screened yet. */
  readonly text: string;
}

/** One part of a file the run wrote in this workspace (never one outside it); nothing reads the rest of a large file. */
export async function readArtifactPart(root: string, file: string, part: number): Promise<Omit<ArtifactView, 'sha256'> | undefined> {
  const absolute = insideWorkspace(root, file);
  const handle = absolute ? await open(absolute, 'r').catch(() => undefined) : undefined;
  if (!handle) return undefined;
  try {
    const bytes = (await handle.stat()).size;
    const parts = Math.max(1, Math.ceil(bytes / ARTIFACT_PART_BYTES));
    const shown = Math.min(Math.max(0, part), parts - 1);
    const start = await boundary(handle, shown * ARTIFACT_PART_BYTES, bytes);
    const end = await boundary(handle, (shown + 1) * ARTIFACT_PART_BYTES, bytes);
    const buffer = Buffer.alloc(end - start);
    await handle.read(buffer, 0, buffer.length, start);
    return { bytes, parts, part: shown, text: buffer.toString('utf8') };
  } finally {
    await handle.close();
  }
}

/** One part of the artifact, and the hash of all its bytes (read as a stream, never whole in memory). */
export async function readArtifactView(root: string, file: string, part: number): Promise<ArtifactView | undefined> {
  const shown = await readArtifactPart(root, file, part);
  const absolute = insideWorkspace(root, file);
  return shown && absolute ? { ...shown, sha256: await hashFile(absolute) } : undefined;
}

/** The artifact as a download: screened, part after part, each read when the one before has left. */
export async function* screenedArtifact(root: string, file: string): AsyncGenerator<string> {
  for (let part = 0, parts = 1; part < parts; part++) {
    const next = await readArtifactPart(root, file, part);
    if (!next) return;
    parts = next.parts;
    yield screenText(next.text);
  }
}

/** The absolute path of a workspace-relative file, or undefined when it would leave the workspace. */
export function insideWorkspace(root: string, file: string): string | undefined {
  const absolute = path.resolve(root, file);
  const inside = path.relative(root, absolute);
  return inside.startsWith('..') || path.isAbsolute(inside) ? undefined : absolute;
}

/** Where a part that would start at `offset` starts: after the last line end within 4 KB before it, else at a character's start. */
async function boundary(handle: FileHandle, offset: number, size: number): Promise<number> {
  if (offset <= 0) return 0;
  if (offset >= size) return size;
  const from = Math.max(0, offset - 4096);
  const window = Buffer.alloc(Math.min(size, offset + 4) - from);
  await handle.read(window, 0, window.length, from);
  const line = window.subarray(0, offset - from).lastIndexOf(0x0a);
  if (line >= 0) return from + line + 1;
  let at = offset - from;
  // A UTF-8 continuation byte (10xxxxxx) is inside a character: step back to its first byte.
  while (at > 0 && ((window[at] ?? 0) & 0xc0) === 0x80) at--;
  return from + at;
}

function hashFile(file: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const hash = createHash('sha256');
    createReadStream(file)
      .on('data', (chunk) => hash.update(chunk))
      .on('end', () => resolve(hash.digest('hex')))
      .on('error', reject);
  });
}
