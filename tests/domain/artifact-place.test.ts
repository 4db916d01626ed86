import { describe, expect, it } from 'vitest';
import { artifactPathBeside, artifactRunId, moveArtifactFiles } from '../../src/domain/artifact-place.js';
import { ARTIFACT_HEADING } from '../../src/domain/artifact.js';

describe('artifact placement', () => {
  it.each([
    ['outputs/review.md', 'outputs/review-R1.md'],
    ['report', 'report-R1'],
    ['a/b.c/notes.txt', 'a/b.c/notes-R1.txt'],
    ['a/.hidden', 'a/.hidden-R1'],
  ])('names the artifact beside %s as %s', (requested, beside) => {
    expect(artifactPathBeside(requested, 'R1')).toBe(beside);
  });

  it('reads the run id of a maestro artifact, and of nothing else', () => {
    expect(artifactRunId(`${ARTIFACT_HEADING}t\n\n| Run id | \`R-1.a_b\` |\n`)).toBe('R-1.a_b');
    expect(artifactRunId('# Notes\n\n| Run id | `R1` |\n')).toBeUndefined();
    expect(artifactRunId(`${ARTIFACT_HEADING}t\n`)).toBeUndefined();
  });

  it('moves an artifact with its pictures, and its links follow', () => {
    const files = [
      { path: 'out/r.heatmap.svg', content: '<svg/>' },
      { path: 'out/r.md', content: 'see ![map](r.heatmap.svg) and (r.heatmap.svg)' },
    ];
    expect(moveArtifactFiles(files, 'out/r.md', 'out/r-R2.md')).toEqual([
      { path: 'out/r-R2.heatmap.svg', content: '<svg/>' },
      { path: 'out/r-R2.md', content: 'see ![map](r-R2.heatmap.svg) and (r.heatmap.svg)' },
    ]);
  });
});
