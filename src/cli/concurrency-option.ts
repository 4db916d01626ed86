import { InvalidArgumentError } from 'commander';

/** The most runs one watcher or worker takes on at once (the same bound as `watch.concurrency` in the config). */
export const MAX_CONCURRENCY = 64;

/** `--concurrency <n>` for `maestro watch` and `maestro worker`: flags, description, and its parser. */
export const CONCURRENCY_OPTION = [
  '--concurrency <n>',
  `runs taken on at once by this process, 1–${MAX_CONCURRENCY} (default: "watch": {"concurrency": …} in maestro.config.json, else 1); route limits hold across them all`,
  parseConcurrency,
] as const;

/** `-n` (`runs`, `status`): a whole number, 0 or more (0: all); anything else is a usage error, never a silent default. */
export function parseCount(value: string): number {
  if (!/^\s*\d+\s*$/.test(value)) throw new InvalidArgumentError(`It must be a whole number, 0 or more (0: all).`);
  return Number(value);
}

/** A whole number of runs in 1–64; anything else is refused with the reason, before anything starts. */
export function parseConcurrency(value: string): number {
  const n = /^\s*\d+\s*$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isInteger(n) || n < 1 || n > MAX_CONCURRENCY) {
    throw new InvalidArgumentError(`must be a whole number from 1 to ${MAX_CONCURRENCY} (runs at once), not "${value}"`);
  }
  return n;
}
