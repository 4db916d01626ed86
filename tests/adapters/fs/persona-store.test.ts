import { mkdir, readFile, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FsPersonaStore } from '../../../src/adapters/fs/persona-store.js';
import { tempWorkspace } from '../../fakes/fixtures.js';
import { editKeepingSizeAndMtime } from '../../helpers/edit-in-place.js';

// The persona files are looked at before every claim and again by the run: every kind of change is seen by the next load.

let ws: Awaited<ReturnType<typeof tempWorkspace>>;
let dir: string;
beforeEach(async () => {
  ws = await tempWorkspace();
  dir = path.join(ws.dir, 'personas');
});
afterEach(() => ws.cleanup());

const names = async (store: FsPersonaStore) => (await store.loadAll()).personas.map((p) => `${p.id}:${p.name}`);
const problems = async (store: FsPersonaStore) => (await store.loadAll()).problems.map((p) => `${p.file}: ${p.issues.join('; ')}`);

/** A modification time in whole milliseconds (what `utimes` can set exactly), an hour ago. */
const AN_HOUR_AGO = new Date(Math.floor(Date.now() / 1000) * 1000 - 3_600_000);

describe('FsPersonaStore: every change is seen by the next load', () => {
  it('a file edited in place, to the same size, with its modification time put back', async () => {
    const store = new FsPersonaStore(dir);
    await utimes(path.join(dir, 'strategist.md'), AN_HOUR_AGO, AN_HOUR_AGO);
    expect(await problems(store)).toEqual([]);
    await editKeepingSizeAndMtime(path.join(dir, 'strategist.md'), (t) => t.replace(/^order: (\d)$/m, 'order: x'));
    expect(await problems(store)).toEqual([expect.stringMatching(/^personas\/strategist\.md: .*order/)]);
    await editKeepingSizeAndMtime(path.join(dir, 'strategist.md'), (t) => t.replace(/^order: x$/m, 'order: 2'));
    expect(await problems(store)).toEqual([]);
  });

  it('a file added, then removed', async () => {
    const store = new FsPersonaStore(dir);
    expect(await names(store)).toHaveLength(3);
    const text = (await readFile(path.join(dir, 'auditor.md'), 'utf8'))
      .replace('id: auditor', 'id: skeptic')
      .replace('name: Auditor', 'name: Skeptic');
    await writeFile(path.join(dir, 'skeptic.md'), text);
    expect(await names(store)).toContain('skeptic:Skeptic');
    await rm(path.join(dir, 'skeptic.md'));
    expect(await names(store)).not.toContain('skeptic:Skeptic');
    expect(await names(store)).toHaveLength(3);
  });

  it('a file replaced by a rename over it (as editors and atomic writers save), same size and modification time', async () => {
    const store = new FsPersonaStore(dir);
    const auditor = path.join(dir, 'auditor.md');
    await utimes(auditor, AN_HOUR_AGO, AN_HOUR_AGO);
    expect(await names(store)).toContain('auditor:Auditor');
    const temp = path.join(ws.dir, 'auditor.md.tmp');
    await writeFile(temp, (await readFile(auditor, 'utf8')).replace('name: Auditor', 'name: Auditer'));
    await utimes(temp, AN_HOUR_AGO, AN_HOUR_AGO);
    expect((await stat(temp)).mtimeMs).toBe((await stat(auditor)).mtimeMs);
    await rename(temp, auditor);
    expect(await names(store)).toContain('auditor:Auditer');
  });

  it('the folder removed and put back', async () => {
    const store = new FsPersonaStore(dir);
    const kept = await readFile(path.join(dir, 'auditor.md'), 'utf8');
    await rm(dir, { recursive: true });
    expect(await problems(store)).toEqual([expect.stringContaining('there is no personas/ folder')]);
    await mkdir(dir);
    await writeFile(path.join(dir, 'auditor.md'), kept);
    expect(await names(store)).toEqual(['auditor:Auditor']);
  });
});
