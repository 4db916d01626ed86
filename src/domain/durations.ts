const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** The units every duration flag takes (`--since`, `--older-than`): seconds, minutes, hours, days, weeks. */
export const DURATION_UNITS = 's, m, h, d, w';

/**
 * A duration such as `10s`, `1m`, `12h`, `7d`, `2w` or `1.5d` in milliseconds; undefined for anything
 * else — a bare number (which unit?), zero, a negative. One reader for every flag that takes one.
 */
export function parseDurationMs(text: string): number | undefined {
  const match = /^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$/i.exec(text);
  if (!match) return undefined;
  const ms = Number(match[1]) * (UNIT_MS[(match[2] as string).toLowerCase()] as number);
  // "99999999999d" means "all of it": as far back as a date can go, not an error.
  return ms > 0 ? Math.min(ms, LONGEST_MS) : undefined;
}

/** The longest duration: any date back from now stays a date (JavaScript's dates span ±8.64e15 ms). */
const LONGEST_MS = 4e15;
