import { Chalk, type ChalkInstance } from 'chalk';
import type { Io } from './io.js';

/** chalk for this stream: no colour when NO_COLOR is set or the stream is not a terminal. */
export function chalkFor(io: Io, stream: 'stdout' | 'stderr' = 'stdout'): ChalkInstance {
  const noColor = io.env.NO_COLOR !== undefined && io.env.NO_COLOR !== '';
  const forced = io.env.FORCE_COLOR !== undefined && io.env.FORCE_COLOR !== '0';
  const level = noColor ? 0 : forced || io[stream].isTTY ? 1 : 0;
  return new Chalk({ level });
}

/** The one-glance badge of a run's outcome, shared by `run`, `hitl` and `watch`. */
export function statusBadge(c: ChalkInstance, status: string): string {
  switch (status) {
    case 'completed':
      return c.green('✔ completed');
    case 'paused':
      return c.yellow('⏸ paused');
    case 'interrupted':
      return c.yellow('◼ interrupted');
    case 'continued':
      return c.yellow('▶ continued');
    case 'stopped':
      return c.red('■ stopped');
    default:
      return c.red(`✖ ${status}`);
  }
}
