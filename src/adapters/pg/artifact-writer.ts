import type { ArtifactPlacement } from '../../domain/artifact-place.js';
import type { ArtifactWriter, OutputPathCheck } from '../../domain/ports.js';
import type { Fence, PgEngine } from './engine.js';

/**
 * A worker's artifacts go to the engine (`maestro_artifacts`), keyed by run and workspace-relative
 * path; the intake writes them into the workspace (checked again there, atomically). The path is
 * checked on the worker's own copy of the workspace first, by the same rules as a local run.
 */
export class PgArtifactWriter implements ArtifactWriter {
  constructor(
    private readonly engine: PgEngine,
    private readonly runId: string,
    private readonly local: Pick<ArtifactWriter, 'check' | 'place'>,
    private readonly fence?: Fence,
  ) {}

  check(relativePath: string, protect?: readonly string[]): Promise<OutputPathCheck> {
    return this.local.check(relativePath, protect);
  }

  /** Placed on the worker's own copy of the workspace; the intake places it again in its own (IntakeLoop). */
  place(relativePath: string, runId: string, suffixes?: readonly string[]): Promise<ArtifactPlacement> {
    return this.local.place(relativePath, runId, suffixes);
  }

  async write(relativePath: string, content: string, protect: readonly string[] = []): Promise<string> {
    const checked = await this.local.check(relativePath, protect);
    if (!checked.ok) throw new Error(`refusing to write the artifact ${relativePath}: ${checked.reason}`);
    await this.engine.tx(async (db) => {
      await db.query(
        `INSERT INTO maestro_artifacts (run_id, path, content, protect) VALUES ($1, $2, $3, $4)
         ON CONFLICT (run_id, path) DO UPDATE SET content = EXCLUDED.content, protect = EXCLUDED.protect, written_at = now()`,
        [this.runId, checked.relative, content, JSON.stringify(protect)],
      );
    }, this.fence);
    return checked.relative;
  }
}
