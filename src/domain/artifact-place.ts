/** How every artifact starts; the writer recognises its own files by it (and, in the run table, whose it is). */
export const ARTIFACT_HEADING = '# Council report: ';

/**
 * Where a run's artifact goes (README, "Where things go"): at `output_artifact_path` when that path is
 * free or holds this same run's artifact (an ending completed again after a restart); otherwise beside
 * it as `<stem>-<run_id><ext>`, so an earlier run's artifact, or any other file, is never replaced.
 */
export interface ArtifactPlacement {
  /** Workspace-relative path the artifact is written at. */
  readonly path: string;
  /** Set when the command's path was taken: that path, and whose file holds it (for people). */
  readonly taken?: { readonly path: string; readonly by: string };
}

/** `outputs/review.md` for run X → `outputs/review-X.md` (the extension kept; none stays none). */
export function artifactPathBeside(requested: string, runId: string): string {
  const slash = requested.lastIndexOf('/');
  const name = requested.slice(slash + 1);
  const dot = name.lastIndexOf('.');
  const [stem, ext] = dot > 0 ? [name.slice(0, dot), name.slice(dot)] : [name, ''];
  return `${requested.slice(0, slash + 1)}${stem}-${runId}${ext}`;
}

/** The files beside an artifact (its pictures) share its name without the extension: `<base><suffix>`. */
export function artifactBase(artifactPath: string): string {
  return artifactPath.replace(/\.md$/i, '');
}

/** The run whose maestro artifact `text` (its start, 64 KiB is enough) is; undefined for any other file. */
export function artifactRunId(text: string): string | undefined {
  if (!text.startsWith(ARTIFACT_HEADING)) return undefined;
  return /^\| Run id \| `([A-Za-z0-9_.-]+)` \|$/m.exec(text)?.[1];
}

/** Whose file sits at a path, for people: "run X's artifact", or a file maestro did not write. */
export function describeOwner(runId: string | undefined): string {
  return runId ? `run ${runId}'s artifact` : 'a file maestro did not write';
}

/** One line for people: the path kept as it was and whose it is, and where this artifact went instead. */
export function describePlacement(placement: ArtifactPlacement): string | undefined {
  if (!placement.taken) return undefined;
  return `${placement.taken.path} holds ${placement.taken.by}, left as it is: this run's artifact is ${placement.path}`;
}

/**
 * A run's files (its artifact and the pictures beside it) moved from the artifact's path `from` to
 * `to`: each `<base(from)><suffix>` becomes `<base(to)><suffix>`, and the artifact's links to its
 * pictures (by file name) follow. Used where the files were placed on another machine (an engine's
 * worker) and this workspace's path turns out to be taken.
 */
export function moveArtifactFiles<F extends { readonly path: string; readonly content: string }>(
  files: readonly F[],
  from: string,
  to: string,
): F[] {
  const [oldBase, newBase] = [artifactBase(from), artifactBase(to)];
  const renamed = (p: string): string => (p === from ? to : p.startsWith(oldBase) ? `${newBase}${p.slice(oldBase.length)}` : p);
  const fileName = (p: string): string => encodeURI(p.slice(p.lastIndexOf('/') + 1));
  return files.map((f) => {
    if (f.path !== from) return { ...f, path: renamed(f.path) };
    let content = f.content;
    for (const other of files)
      if (other.path !== from) content = content.split(`](${fileName(other.path)})`).join(`](${fileName(renamed(other.path))})`);
    return { ...f, path: to, content };
  });
}
