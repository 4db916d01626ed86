import { describe, expect, it } from 'vitest';
import { DEFAULT_WATCH_RECHECK_MS, readWatchRecheckMs } from '../src/config.js';
import { InvalidInputError } from '../src/domain/errors.js';

describe('MAESTRO_WATCH_RECHECK_MS (how soon a watcher looks again at a broken workspace)', () => {
  it('is 2 s when unset or blank', () => {
    expect(DEFAULT_WATCH_RECHECK_MS).toBe(2_000);
    expect(readWatchRecheckMs({})).toBe(2_000);
    expect(readWatchRecheckMs({ MAESTRO_WATCH_RECHECK_MS: '  ' })).toBe(2_000);
  });

  it('takes a whole number of milliseconds', () => {
    expect(readWatchRecheckMs({ MAESTRO_WATCH_RECHECK_MS: '250' })).toBe(250);
  });

  it.each(['0', '-5', '1.5', 'soon', '600001'])('refuses %s, naming the variable', (raw) => {
    expect(() => readWatchRecheckMs({ MAESTRO_WATCH_RECHECK_MS: raw })).toThrow(InvalidInputError);
    expect(() => readWatchRecheckMs({ MAESTRO_WATCH_RECHECK_MS: raw })).toThrow(/MAESTRO_WATCH_RECHECK_MS/);
  });
});
