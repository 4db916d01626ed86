import { copyFile, open, readFile } from 'node:fs/promises';
import { ARTIFACT_HEADING } from '../../domain/artifact.js';
import type { ArtifactWriter, OutputPathCheck } from '../../domain/ports.js';
import { writeFileAtomically } from './atomic-file.js';
import { checkOutputPath } from './knowledge-base.js';

/**
 * Writes artifacts inside the workspace only, atomically. A file already at the path that is not a
 * maestro artifact (say, a README the command pointed at by mistake) is copied aside first, so
 * nothing a person wrote is ever lost; an earlier artifact of the same command is simply replaced.
 */
export class FsArtifactWriter implements ArtifactWriter {
  constructor(
    private readonly root: string,
    private readonly now: () => Date = () => new Date(),
  ) {}

  check(relativePath: string, protect: readonly string[] = []): Promise<OutputPathCheck> {
    return checkOutputPath(this.root, relativePath, protect);
  }

  async write(relativePath: string, content: string, protect: readonly string[] = []): Promise<string> {
    // Checked again at write time: the folder may have changed since the gates ran. The file is
    // written into the folder's real path, which the check has just resolved and approved.
    const checked = await this.check(relativePath, protect);
    if (!checked.ok) throw new Error(`refusing to write the artifact at "${relativePath}": ${checked.reason}`);
    // Written already, byte for byte (a run completing after a crash): left as it is.
    if ((await readFile(checked.absolute, 'utf8').catch(() => undefined)) === content) return checked.absolute;
    if (await isForeignFile(checked.absolute)) {
      await copyFile(checked.absolute, `${checked.absolute}.${this.now().toISOString().replace(/[:.]/g, '-')}.bak`);
    }
    await writeFileAtomically(checked.absolute, content);
    return checked.absolute;
  }
}

/** An existing, non-empty file that does not start like a maestro artifact. */
async function isForeignFile(file: string): Promise<boolean> {
  let handle;
  try {
    handle = await open(file, 'r');
  } catch {
    return false;
  }
  try {
    const buffer = Buffer.alloc(ARTIFACT_HEADING.length);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    return bytesRead > 0 && buffer.subarray(0, bytesRead).toString('utf8') !== ARTIFACT_HEADING;
  } finally {
    await handle.close();
  }
}
