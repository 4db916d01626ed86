import { randomBytes } from 'node:crypto';
import type { Clock } from '../../domain/ports.js';

export const systemClock: Clock = { now: () => new Date() };

/** Run ids sort by time and never collide: `20261122T073001Z-3f9a1c`. */
export function newRunId(clock: Clock = systemClock): string {
  const stamp = clock
    .now()
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  return `${stamp}-${randomBytes(3).toString('hex')}`;
}
