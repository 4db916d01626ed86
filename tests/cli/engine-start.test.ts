import { describe, expect, it } from 'vitest';
import { whenEngineReachable } from '../../src/compose/use-cases.js';
import { AppError } from '../../src/domain/errors.js';

/** What the engine adapter throws: a connection that failed (transient) or an engine that cannot be used as it is. */
class EngineProblem extends AppError {
  readonly code = 'ENGINE_UNAVAILABLE' as const;
  constructor(
    message: string,
    readonly transient: boolean,
  ) {
    super(message);
  }
}

describe('an intake or a worker started while its engine is away', () => {
  it('waits for it, saying once that it cannot be reached and once that it is back', async () => {
    const said: string[] = [];
    let tries = 0;
    const value = await whenEngineReachable(
      async () => {
        tries += 1;
        if (tries < 4) throw new EngineProblem('the engine at postgres://db is unreachable: connect ECONNREFUSED', true);
        return 'opened';
      },
      (m) => said.push(m),
      { baseMs: 1, maxMs: 4 },
    );
    expect(value).toBe('opened');
    expect(said).toEqual([
      expect.stringMatching(/^the connection to the engine is lost \(.*ECONNREFUSED\); nothing is taken until it is back; retrying/),
      expect.stringMatching(/^the connection to the engine is back \(after \d+ s, 3 failed tries\)$/),
    ]);
  });

  it('does not wait for an engine that cannot be used as it is (its schema), nor on any other error', async () => {
    const said: string[] = [];
    await expect(
      whenEngineReachable(
        async () => Promise.reject(new EngineProblem('the engine is at schema version 0: run "maestro engine migrate" first', false)),
        (m) => said.push(m),
      ),
    ).rejects.toThrow(/maestro engine migrate/);
    await expect(
      whenEngineReachable(
        async () => Promise.reject(new Error('personas/ is missing')),
        (m) => said.push(m),
      ),
    ).rejects.toThrow('personas/ is missing');
    expect(said).toEqual([]);
  });
});
