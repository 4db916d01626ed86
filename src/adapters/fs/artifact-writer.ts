import { copyFile, open, readFile } from 'node:fs/promises';
import path from 'node:path';
import { ARTIFACT_HEADING } from '../../domain/artifact.js';
import { type ArtifactPlacement, artifactBase, artifactPathBeside, artifactRunId, describeOwner } from '../../domain/artifact-place.js';
import type { ArtifactWriter, OutputPathCheck } from '../../domain/ports.js';
import { writeFileAtomically } from './atomic-file.js';
import { checkOutputPath } from './knowledge-base.js';

/**
 * Writes artifacts inside the workspace only, atomically, where `place` put them: never over an
 * earlier run's artifact or any other file (artifact-place.ts). Should a file appear at a placed path
 * between the placement and the write (a person, a restart days later), it is copied aside first.
 */
export class FsArtifactWriter implements ArtifactWriter {
  constructor(
    private readonly root: string,
    private readonly now: () => Date = () => new Date(),
  ) {}

  check(relativePath: string, protect: readonly string[] = []): Promise<OutputPathCheck> {
    return checkOutputPath(this.root, relativePath, protect);
  }

  async place(relativePath: string, runId: string, suffixes: readonly string[] = []): Promise<ArtifactPlacement> {
    const checked = await this.check(relativePath);
    if (!checked.ok) return { path: relativePath };
    const requested = checked.relative;
    const owner = await ownerOf(checked.absolute);
    if (owner === runId) return { path: requested };
    const base = artifactBase(requested);
    let beside: string | undefined;
    for (const p of suffixes.map((s) => `${base}${s}`))
      if (beside === undefined && (await ownerOf(path.join(this.root, p))) !== FREE) beside = p;
    if (owner === FREE && beside === undefined) return { path: requested };
    const taken = owner === FREE ? { path: beside as string, by: 'a file already there' } : { path: requested, by: describeOwner(owner) };
    return { path: artifactPathBeside(requested, runId), taken };
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

const FREE = Symbol('free');

/** Who holds `file`: nobody (FREE), the run whose maestro artifact it is, or a file of anyone else (undefined). */
async function ownerOf(file: string): Promise<typeof FREE | string | undefined> {
  let handle;
  try {
    handle = await open(file, 'r');
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? FREE : undefined;
  }
  try {
    // The run id is in the run table, after the task (at most 20,000 characters): 64 KiB reaches it.
    const buffer = Buffer.alloc(65_536);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    return artifactRunId(buffer.subarray(0, bytesRead).toString('utf8'));
  } catch {
    return undefined;
  } finally {
    await handle.close();
  }
}
