import { describe, expect, it } from 'vitest';
import { isSafeRunId, parseAgeDays, selectExpiredLogs } from '../../src/domain/audit-retention.js';

describe('parseAgeDays', () => {
  it.each([
    ['30d', 30],
    ['12h', 0.5],
    ['90m', 0.0625],
    ['8640s', 0.1],
    ['2w', 14],
    [' 7D ', 7],
    ['1.5d', 1.5],
  ])('%j → %d days', (text, days) => expect(parseAgeDays(text)).toBe(days));

  it.each(['', '0d', '0', '30', '-1d', 'd', '1y', 'thirty'])('refuses %j', (text) => expect(parseAgeDays(text)).toBeUndefined());
});

describe('selectExpiredLogs', () => {
  const now = new Date('2026-03-01T00:00:00Z');
  const entry = (runId: string, iso: string) => ({ runId, files: [`/a/${runId}.jsonl`], lastWrite: new Date(iso) });

  it('expires logs last written before now − retention, oldest first', () => {
    const entries = [
      entry('c', '2026-01-29T23:59:59Z'), // 30 days and 1 s old
      entry('a', '2026-01-30T00:00:00Z'), // exactly 30 days: kept
      entry('b', '2026-02-28T00:00:00Z'),
      entry('d', '2025-12-01T00:00:00Z'),
    ];
    const { cutoff, expired } = selectExpiredLogs(entries, 30, now);
    expect(cutoff.toISOString()).toBe('2026-01-30T00:00:00.000Z');
    expect(expired.map((e) => e.runId)).toEqual(['d', 'c']);
    expect(selectExpiredLogs(entries, 29, now).expired.map((e) => e.runId)).toEqual(['d', 'c', 'a']);
  });
});

describe('isSafeRunId', () => {
  it.each(['20260101T000000Z-abc123', 'run_1', 'a.b-c'])('accepts %j', (id) => expect(isSafeRunId(id)).toBe(true));
  it.each(['', '..', '.hidden', '../etc/passwd', 'a/b', 'a\\b', 'a@b', 'a b'])('refuses %j', (id) => expect(isSafeRunId(id)).toBe(false));
});
