import { describe, expect, it } from 'vitest';
import { findContradictions } from '../../src/domain/contradictions.js';

describe('the contradiction check across item outputs (seed 003)', () => {
  it('flags opposite stances on the same action and object, word forms stemmed', () => {
    const found = findContradictions([
      { id: 'storage', text: 'We should use Redis for the session cache.' },
      { id: 'ops', text: 'Keep it simple. Do not use redis here; the team cannot run it.' },
      { id: 'ui', text: 'Nothing to add about caching.' },
    ]);
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({ kind: 'polarity', subject: 'use redi', first: { id: 'storage' }, second: { id: 'ops' } });
  });

  it('reads "avoid", "disable", "remove" as the negation of use, enable, add', () => {
    const found = findContradictions([
      { id: 'a', text: 'Enable the feature flag for everyone.\nAdopt Postgres.\nAdd a retry queue.' },
      { id: 'b', text: 'Disable the feature flag.\nAvoid Postgres.\nRemove the retry queue.' },
    ]);
    expect(found.map((c) => c.subject)).toEqual(['enable featur', 'use postgr', 'add retri']);
  });

  it('flags a shared fact given different values, against the facts and between items', () => {
    const found = findContradictions(
      [
        { id: 'plan', text: '- Deadline: 2026-04-01\n- Owner: platform' },
        { id: 'risk', text: 'deadline: 2026-03-01' },
      ],
      { deadline: '2026-03-01', owner: 'platform' },
    );
    expect(found.map((c) => [c.kind, c.first.id, c.second.id])).toEqual([
      ['value', 'facts', 'plan'],
      ['value', 'plan', 'risk'],
    ]);
  });

  it('leaves alone what different items may rightly differ on, and agreeing items', () => {
    expect(
      findContradictions([
        { id: 'a', text: 'Owner: alice\nStatus: done\nWe use Redis.' },
        { id: 'b', text: 'Owner: bob\nStatus: blocked\nWe should use Redis too.' },
      ]),
    ).toEqual([]);
  });

  it('is deterministic: the same outputs give the same findings', () => {
    const outputs = [
      { id: 'x', text: 'Use Kafka.' },
      { id: 'y', text: 'Never use Kafka.' },
    ];
    expect(findContradictions(outputs)).toEqual(findContradictions(outputs));
  });
});
