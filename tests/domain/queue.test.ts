import { describe, expect, it } from 'vitest';
import { compareReadyFiles, isAllowedTransition, WATCH_STATES, type WatchState } from '../../src/domain/queue.js';

describe('the watcher state machine', () => {
  const allowed: Array<[WatchState, WatchState]> = [
    ['AWAITING_COMMAND', 'EXECUTING_TASK'],
    ['EXECUTING_TASK', 'PRODUCING_ARTIFACT'],
    ['EXECUTING_TASK', 'AWAITING_COMMAND'],
    ['PRODUCING_ARTIFACT', 'AWAITING_COMMAND'],
    ['AWAITING_COMMAND', 'STOPPED'],
    ['EXECUTING_TASK', 'STOPPED'],
    ['PRODUCING_ARTIFACT', 'STOPPED'],
  ];

  it.each(WATCH_STATES.flatMap((from) => WATCH_STATES.map((to) => [from, to] as [WatchState, WatchState])))('%s → %s', (from, to) => {
    const expected = allowed.some(([f, t]) => f === from && t === to);
    expect(isAllowedTransition(from, to)).toBe(expected);
  });
});

describe('compareReadyFiles', () => {
  it('orders oldest first, then by name', () => {
    const files = [
      { name: 'b.json', mtimeMs: 20 },
      { name: 'c.json', mtimeMs: 10 },
      { name: 'a.json', mtimeMs: 20 },
      { name: 'command.json', mtimeMs: 5 },
    ];
    expect([...files].sort(compareReadyFiles).map((f) => f.name)).toEqual(['command.json', 'c.json', 'a.json', 'b.json']);
  });
});
