import * as fs from 'node:fs/promises';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { appendDurably, writeFileAtomically, type DurableFs, type DurableHandle } from '../../../src/adapters/fs/atomic-file.js';
import { StorageError } from '../../../src/domain/errors.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'maestro-atomic-'));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

/** The real file system, but each data write goes through `onWrite`, which may take fewer bytes or fail. */
function faultyFs(onWrite: (call: number, length: number) => number | Error, onSync?: () => Error | undefined): DurableFs {
  let calls = 0;
  return {
    rename: (a, b) => fs.rename(a, b),
    unlink: (f) => fs.unlink(f),
    mkdir: (d, o) => fs.mkdir(d, o),
    open: async (file, flags, mode) => {
      const real = await fs.open(file, flags, mode);
      const handle: DurableHandle = {
        write: async (buffer, offset, length, position) => {
          const outcome = onWrite(++calls, length);
          if (outcome instanceof Error) throw outcome;
          return real.write(buffer, offset, Math.min(length, outcome), position);
        },
        sync: async () => {
          const failure = onSync?.();
          if (failure) throw failure;
          await real.sync();
        },
        close: () => real.close(),
      };
      return handle;
    },
  };
}
const errno = (code: string) => Object.assign(new Error(`${code}: simulated`), { code });
const leftovers = async () => (await readdir(dir)).filter((n) => n.endsWith('.tmp'));

describe('writeFileAtomically (issue 9 item 2)', () => {
  const file = () => path.join(dir, 'state.json');
  const NEW = 'n'.repeat(12_288);

  it('loops over short writes until every byte is on disk', async () => {
    await writeFileAtomically(file(), NEW, { fs: faultyFs(() => 4096) });
    expect(await readFile(file(), 'utf8')).toBe(NEW);
  });

  for (const [what, fault] of [
    ['a write that stops taking bytes (a full disk)', (call: number) => (call === 1 ? 4096 : 0)],
    ['ENOSPC part-way', (call: number) => (call === 1 ? 4096 : errno('ENOSPC'))],
    ['EIO', () => errno('EIO')],
  ] as const) {
    it(`keeps the previous copy whole on ${what}, and says where and why`, async () => {
      await writeFile(file(), 'the good old copy\n');
      const error = await writeFileAtomically(file(), NEW, { fs: faultyFs(fault) }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StorageError);
      expect((error as StorageError).path).toBe(file());
      expect((error as StorageError).errno).toMatch(/ENOSPC|EIO/);
      expect(await readFile(file(), 'utf8')).toBe('the good old copy\n');
      expect(await leftovers()).toEqual([]);
    });
  }

  it('keeps the previous copy when fsync fails', async () => {
    await writeFile(file(), 'old\n');
    await expect(
      writeFileAtomically(file(), NEW, {
        fs: faultyFs(
          (_, n) => n,
          () => errno('EIO'),
        ),
      }),
    ).rejects.toBeInstanceOf(StorageError);
    expect(await readFile(file(), 'utf8')).toBe('old\n');
    expect(await leftovers()).toEqual([]);
  });

  it('a file that matters only while this process lives is renamed into place whole, without a flush', async () => {
    let syncs = 0;
    const counting = faultyFs(
      (_, n) => n,
      () => void (syncs += 1),
    );
    await writeFileAtomically(file(), NEW, { fs: counting, durable: false });
    expect(await readFile(file(), 'utf8')).toBe(NEW);
    expect(await leftovers()).toEqual([]);
    expect(syncs).toBe(0);
    // The default flushes the file and its folder.
    await writeFileAtomically(file(), 'again\n', { fs: counting });
    expect(syncs).toBe(2);
  });

  it('replaces a symlink at the path instead of writing through it', async () => {
    const target = path.join(dir, 'target.md');
    await writeFile(target, 'elsewhere\n');
    await fs.symlink(target, path.join(dir, 'link.md'));
    await writeFileAtomically(path.join(dir, 'link.md'), 'new\n');
    expect(await readFile(target, 'utf8')).toBe('elsewhere\n');
    expect(await readFile(path.join(dir, 'link.md'), 'utf8')).toBe('new\n');
  });
});

describe('appendDurably', () => {
  it('fails loudly on a short append instead of leaving a silent gap', async () => {
    const file = path.join(dir, 'archive.jsonl');
    await expect(appendDurably(file, 'x'.repeat(10_000), { fs: faultyFs((call) => (call === 1 ? 100 : 0)) })).rejects.toMatchObject({
      errno: 'ENOSPC',
    });
    await appendDurably(file, 'line\n', { fs: faultyFs(() => 2) });
    expect((await readFile(file, 'utf8')).endsWith('line\n')).toBe(true);
  });
});
