import { mkdir, mkdtemp, readdir, readFile, realpath, rm, stat, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FsArtifactWriter } from '../../../src/adapters/fs/artifact-writer.js';
import { ARTIFACT_HEADING } from '../../../src/domain/artifact.js';

let root: string;
beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'maestro-artifact-writer-'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const report = (body: string) => `${ARTIFACT_HEADING}${body}\n`;
const writer = () => new FsArtifactWriter(root, () => new Date('2026-01-02T03:04:05.678Z'));

describe('FsArtifactWriter', () => {
  it('writes the artifact into a folder it makes, leaving no temporary file', async () => {
    const written = await writer().write('outputs/deep/r1.md', report('one'));
    expect(written).toBe(path.join(await realpath(root), 'outputs/deep/r1.md'));
    expect(await readFile(written, 'utf8')).toBe(report('one'));
    expect(await readdir(path.dirname(written))).toEqual(['r1.md']);
  });

  it('leaves an artifact already written byte for byte as it is (the same file, not rewritten)', async () => {
    const first = await writer().write('outputs/r1.md', report('same'));
    const before = await stat(first);
    await writer().write('outputs/r1.md', report('same'));
    expect((await stat(first)).ino).toBe(before.ino);
  });

  it('replaces an earlier artifact of any size, without a copy aside', async () => {
    await writer().write('outputs/r1.md', report('an earlier, longer artifact'));
    await writer().write('outputs/r1.md', report('new'));
    expect(await readFile(path.join(root, 'outputs/r1.md'), 'utf8')).toBe(report('new'));
    expect(await readdir(path.join(root, 'outputs'))).toEqual(['r1.md']);
  });

  it.each([
    ['a shorter one', 'my notes'],
    ['one of the same size', report('new').replace('#', 'X')],
    ['a longer one', 'my notes\n'.repeat(1000)],
  ])("copies a person's file aside before replacing it: %s", async (_, theirs) => {
    await writeFile(path.join(root, 'notes.md'), theirs);
    await writer().write('notes.md', report('new'));
    expect(await readFile(path.join(root, 'notes.md'), 'utf8')).toBe(report('new'));
    expect(await readFile(path.join(root, 'notes.md.2026-01-02T03-04-05-678Z.bak'), 'utf8')).toBe(theirs);
  });

  it('does not copy an empty file aside', async () => {
    await writeFile(path.join(root, 'empty.md'), '');
    await writer().write('empty.md', report('new'));
    expect((await readdir(root)).filter((f) => f.endsWith('.bak'))).toEqual([]);
  });

  it('refuses a symlink, a folder, a reserved area and the command’s own input, writing nothing', async () => {
    await writeFile(path.join(root, 'target.md'), 'theirs');
    await symlink(path.join(root, 'target.md'), path.join(root, 'link.md'));
    await mkdir(path.join(root, 'folder.md'));
    await writeFile(path.join(root, 'input.md'), 'input');
    await expect(writer().write('link.md', report('x'))).rejects.toThrow(/symbolic link/);
    await expect(writer().write('folder.md', report('x'))).rejects.toThrow(/folder/);
    await expect(writer().write('.maestro/x.md', report('x'))).rejects.toThrow(/refusing/);
    await expect(writer().write('input.md', report('x'), ['input.md'])).rejects.toThrow(/input artifacts/);
    await expect(writer().write('../outside.md', report('x'))).rejects.toThrow(/escapes/);
    expect(await readFile(path.join(root, 'target.md'), 'utf8')).toBe('theirs');
    expect(await readFile(path.join(root, 'input.md'), 'utf8')).toBe('input');
  });

  it('refuses a folder that resolves outside the workspace through a symlink', async () => {
    const outside = await mkdtemp(path.join(os.tmpdir(), 'maestro-artifact-outside-'));
    try {
      await symlink(outside, path.join(root, 'out'));
      await expect(writer().write('out/r.md', report('x'))).rejects.toThrow(/outside the workspace/);
      expect(await readdir(outside)).toEqual([]);
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });

  describe("place: where a run's artifact goes (never over another file)", () => {
    const ofRun = (runId: string) => `${ARTIFACT_HEADING}a task\n\n## Run\n\n| | |\n|---|---|\n| Run id | \`${runId}\` |\n`;

    it("the path itself when it is free, or holds this run's own artifact (an ending completed again)", async () => {
      expect(await writer().place('outputs/review.md', 'R2')).toEqual({ path: 'outputs/review.md' });
      await writer().write('outputs/review.md', ofRun('R2'));
      expect(await writer().place('outputs/review.md', 'R2', ['.heatmap.svg'])).toEqual({ path: 'outputs/review.md' });
    });

    it.each([
      ["an earlier run's artifact", ofRun('R1'), "run R1's artifact"],
      ["a person's file", 'my notes\n', 'a file maestro did not write'],
      ['an empty file', '', 'a file maestro did not write'],
    ])('beside it, <stem>-<run_id><ext>, when it holds %s', async (_what, content, by) => {
      await mkdir(path.join(root, 'outputs'));
      await writeFile(path.join(root, 'outputs', 'review.md'), content);
      expect(await writer().place('outputs/review.md', 'R2')).toEqual({
        path: 'outputs/review-R2.md',
        taken: { path: 'outputs/review.md', by },
      });
      expect(await readFile(path.join(root, 'outputs', 'review.md'), 'utf8')).toBe(content);
    });

    it('beside it too when a picture it would write beside the artifact is already there', async () => {
      await mkdir(path.join(root, 'outputs'));
      await writeFile(path.join(root, 'outputs', 'review.heatmap.svg'), '<svg/>');
      expect(await writer().place('outputs/review.md', 'R2')).toEqual({ path: 'outputs/review.md' });
      expect(await writer().place('outputs/review.md', 'R2', ['.heatmap.svg'])).toEqual({
        path: 'outputs/review-R2.md',
        taken: { path: 'outputs/review.heatmap.svg', by: 'a file already there' },
      });
    });
  });
});
