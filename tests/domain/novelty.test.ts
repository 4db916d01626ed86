import { describe, expect, it } from 'vitest';
import { containment, NOTHING_NEW } from '../../src/domain/novelty.js';

// Issue 40, point 5: a turn a real model rephrases is the repeat it is; a turn on the same topic
// that says something new is not. Each pair: an earlier turn, then the next one.
const REPHRASED: readonly [string, string][] = [
  [
    'The migration should start with the billing reports, because they have the fewest dependencies. Keep the cron box running in parallel for two weeks so we can compare outputs.',
    "I'd start the migration with the billing reports since they have the fewest dependencies. Keep the cron box running alongside for two weeks and compare the outputs.",
  ],
  [
    'The main risk is the rollback: there is no tested script to restore the cron schedule if the job queue fails on the first night.',
    'As I said, the main risk remains the rollback. If the job queue fails on the first night, we have no tested script to restore the cron schedule.',
  ],
  [
    'I recommend Postgres over MongoDB here: the data is relational, we need transactions across orders and invoices, and the team already runs Postgres in production.',
    'Postgres is my recommendation rather than MongoDB. The orders and invoices data is relational and needs transactions, and the team already operates Postgres in production.',
  ],
  [
    'To summarise my view: the plan is sound, but it needs an owner for each step and a date for the cutover before we commit.',
    'My view, in short: the plan is sound; before committing, each step needs an owner and the cutover needs a date.',
  ],
  [
    'We should cache the product catalogue at the edge with a five-minute TTL; prices change rarely and the origin is the bottleneck.',
    "Caching the product catalogue at the edge with a TTL of five minutes is what I'd do, because prices rarely change and the origin is our bottleneck.",
  ],
];

const NEW: readonly [string, string][] = [
  [
    'The migration should start with the billing reports, because they have the fewest dependencies. Keep the cron box running in parallel for two weeks so we can compare outputs.',
    'Two weeks of parallel running is too short for the billing reports: the month-end reports only run once, so keep both systems until a full month-end cycle has been compared.',
  ],
  [
    'The main risk is the rollback: there is no tested script to restore the cron schedule if the job queue fails on the first night.',
    'Who owns the rollback? Assign the on-call engineer, and rehearse the restore in staging on Thursday so the script is tested before the cutover.',
  ],
  [
    'We should cache the product catalogue at the edge with a five-minute TTL; prices change rarely and the origin is the bottleneck.',
    'Caching at the edge breaks the flash sales: during a sale prices change every minute, so purge the catalogue cache when a price changes instead of waiting for the TTL.',
  ],
  ['We should use Redis for the session store.', "We shouldn't use Redis for the session store."],
  ['Do not deploy on Friday.', 'Deploy on Friday.'],
];

describe('containment: how much of a reply was already said', () => {
  it.each(REPHRASED)('counts a rephrasing as nothing new: %s', (earlier, reply) => {
    expect(containment(reply, earlier)).toBeGreaterThanOrEqual(NOTHING_NEW);
  });

  it.each(NEW)('counts a reply on the same topic that says something new as new: %s', (earlier, reply) => {
    expect(containment(reply, earlier)).toBeLessThan(NOTHING_NEW);
  });

  it('is 1 for a reply with no content words, and for one that only restates part of what was said', () => {
    expect(containment('OK, yes.', 'Anything at all')).toBe(1);
    expect(containment('The plan is sound.', 'The plan is sound, and the rollback is tested.')).toBe(1);
    expect(containment('The plan is sound, and the rollback is tested.', 'The plan is sound.')).toBeCloseTo(2 / 4);
  });
});
