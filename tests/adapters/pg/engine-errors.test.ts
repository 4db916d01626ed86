import { describe, expect, it } from 'vitest';
import { EngineError, wrap } from '../../../src/adapters/pg/engine.js';

// What the pg client throws, as the engine adapter says it: a login or database refused is an engine
// that cannot be used as it is (one line naming it, no retry); a broken connection may mend.
const URL = 'postgres://maestro:s3cret@db.internal:5432/maestro';
const pgError = (message: string, code?: string): Error => Object.assign(new Error(message), code ? { code } : {});

describe('wrap', () => {
  it.each([
    ['password authentication failed for user "maestro"', '28P01', /refuses this login/],
    ['SASL: SCRAM-SERVER-FIRST-MESSAGE: client password must be a string', undefined, /refuses this login/],
    ['database "nope" does not exist', '3D000', /has no such database/],
    ['relation "maestro_queue" does not exist', '42P01', /is not ready/],
  ])('%s: an engine that cannot be used as it is, not transient', (message, code, said) => {
    const e = wrap(pgError(message, code), URL);
    expect(e).toBeInstanceOf(EngineError);
    expect((e as EngineError).transient).toBe(false);
    expect(e.message).toMatch(said);
    expect(e.message).toContain('db.internal');
    expect(e.message).toContain(message);
    expect(e.message).not.toContain('s3cret');
  });

  it('a refused connection stays a transient outage; any other error goes on as it is', () => {
    expect((wrap(pgError('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED'), URL) as EngineError).transient).toBe(true);
    expect(wrap(pgError('duplicate key value', '23505'), URL)).not.toBeInstanceOf(EngineError);
  });
});
