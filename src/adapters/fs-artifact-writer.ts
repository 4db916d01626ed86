import type { ArtifactWriter, OutputPathCheck } from '../domain/ports.js';
import { writeFileAtomically } from './atomic-file.js';
import { checkOutputPath } from './fs-knowledge-base.js';

/** Writes artifacts inside the workspace only, atomically. */
export class FsArtifactWriter implements ArtifactWriter {
  constructor(private readonly root: string) {}

  check(relativePath: string): Promise<OutputPathCheck> {
    return checkOutputPath(this.root, relativePath);
  }

  async write(relativePath: string, content: string): Promise<string> {
    // Checked again at write time: the folder may have changed since the gates ran.
    const checked = await this.check(relativePath);
    if (!checked.ok) throw new Error(`refusing to write the artifact at "${relativePath}": ${checked.reason}`);
    await writeFileAtomically(checked.absolute, content);
    return checked.absolute;
  }
}
