import type { BigIntStats } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { stampOf } from '../../../src/adapters/fs/file-stamp.js';

// A file's stamp changes with anything that changes the file, and is not trusted while the file
// changed too recently for a later change to show.

const NOW = 1_800_000_000_123; // ms
const ms = (at: number) => BigInt(at) * 1_000_000n;
function stats(fields: Partial<Record<'dev' | 'ino' | 'size' | 'mode' | 'mtimeNs' | 'ctimeNs', bigint>> = {}): BigIntStats {
  const at = ms(NOW - 60_000) + 456_789n;
  return { dev: 1n, ino: 2n, size: 3n, mode: 0o100644n, mtimeNs: at, ctimeNs: at, ...fields } as unknown as BigIntStats;
}

describe('stampOf', () => {
  it.each([
    ['inode (a file renamed over it)', { ino: 9n }],
    ['size', { size: 4n }],
    ['mode (a permission change)', { mode: 0o100000n }],
    ['modification time', { mtimeNs: ms(NOW - 50_000) }],
    ['change time alone (an edit with its modification time put back)', { ctimeNs: stats().ctimeNs + 1n }],
    ['device', { dev: 7n }],
  ] as const)('changes with the %s', (_what, change) => {
    expect(stampOf(stats(change), NOW).key).not.toBe(stampOf(stats(), NOW).key);
  });

  it('is trusted once the last change lies past the file clock tick, not within it, nor in the future', () => {
    expect(stampOf(stats({ ctimeNs: ms(NOW - 100) + 1n }), NOW).trusted).toBe(true);
    expect(stampOf(stats({ ctimeNs: ms(NOW - 5) + 1n }), NOW).trusted).toBe(false);
    expect(stampOf(stats({ mtimeNs: ms(NOW - 5) + 1n }), NOW).trusted).toBe(false);
    expect(stampOf(stats({ mtimeNs: ms(NOW + 3_600_000) + 1n }), NOW).trusted).toBe(false);
  });

  it('on a file system with times in whole seconds, waits seconds, not milliseconds', () => {
    const second = (at: number) => BigInt(Math.floor(at / 1000)) * 1_000_000_000n;
    const at = (ago: number) => stats({ mtimeNs: second(NOW - ago), ctimeNs: second(NOW - ago) });
    expect(stampOf(at(1_000), NOW).trusted).toBe(false);
    expect(stampOf(at(5_000), NOW).trusted).toBe(true);
  });
});
