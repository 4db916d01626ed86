import { describe, expect, it } from 'vitest';
import { judgeCommitDurability } from '../../src/domain/engine-durability.js';

describe('judgeCommitDurability', () => {
  it.each(['on', 'local', 'remote_write', 'remote_apply', ' ON '])('%s flushes the local WAL before acknowledging: durable', (setting) => {
    expect(judgeCommitDurability(setting, false, 'postgres://db/maestro')).toEqual({ kind: 'durable' });
  });

  it.each(['off', '', 'something-new'])('"%s" is refused, with the fix and the way around it', (setting) => {
    const verdict = judgeCommitDurability(setting, false, 'postgres://db/maestro');
    expect(verdict.kind).toBe('refused');
    expect(verdict).toMatchObject({ message: expect.stringContaining('ALTER DATABASE <name> SET synchronous_commit = on') });
    expect(verdict).toMatchObject({ message: expect.stringContaining('--allow-async-commit') });
  });

  it('with the operator allowing it, runs anyway and says exactly-once is not guaranteed', () => {
    expect(judgeCommitDurability('off', true, 'postgres://db/maestro')).toEqual({
      kind: 'allowed',
      message: expect.stringMatching(
        /^WARNING: the engine at postgres:\/\/db\/maestro has synchronous_commit = off: .*exactly-once is NOT guaranteed/,
      ),
    });
  });
});
