import { describe, expect, it } from 'vitest';
import { readEngineRetryMs } from '../../src/config.js';
import { InvalidInputError } from '../../src/domain/errors.js';

// MAESTRO_ENGINE_RETRY_MS: how soon the intake and the workers try an engine that went away again.
describe('MAESTRO_ENGINE_RETRY_MS', () => {
  it('leaves the loops their own defaults when unset or blank', () => {
    expect(readEngineRetryMs({})).toBeUndefined();
    expect(readEngineRetryMs({ MAESTRO_ENGINE_RETRY_MS: '  ' })).toBeUndefined();
  });

  it('takes a whole number of milliseconds', () => {
    expect(readEngineRetryMs({ MAESTRO_ENGINE_RETRY_MS: '50' })).toBe(50);
  });

  it('refuses anything else with what it must be, instead of polling an engine in a tight loop', () => {
    for (const raw of ['0', '5', '1.5', 'soon', '-100', '600000']) {
      expect(() => readEngineRetryMs({ MAESTRO_ENGINE_RETRY_MS: raw })).toThrow(InvalidInputError);
    }
    expect(() => readEngineRetryMs({ MAESTRO_ENGINE_RETRY_MS: 'soon' })).toThrow(/MAESTRO_ENGINE_RETRY_MS/);
  });
});
