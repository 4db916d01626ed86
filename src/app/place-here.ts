import { type ArtifactPlacement, artifactBase, artifactRunId, moveArtifactFiles } from '../domain/artifact-place.js';
import type { ArtifactWriter } from '../domain/ports.js';

/**
 * A run's files from the engine, placed in this workspace by the same rule as a local run's
 * (artifact-place.ts): the worker placed them on its own copy, so a path taken here moves them beside.
 */
export async function placeHere<F extends { readonly path: string; readonly content: string }>(
  writer: ArtifactWriter,
  runId: string,
  files: readonly F[],
): Promise<{ files: readonly F[]; placement?: ArtifactPlacement }> {
  const main = files.find((f) => artifactRunId(f.content) === runId);
  if (!main) return { files };
  const suffixes = files.filter((f) => f !== main).map((f) => f.path.slice(artifactBase(main.path).length));
  const placement = await writer.place(main.path, runId, suffixes);
  return { files: placement.path === main.path ? files : moveArtifactFiles(files, main.path, placement.path), placement };
}
