import { parseDurationMs } from './durations.js';

const MS_PER_DAY = 86_400_000;

/**
 * Parses an age such as `30d`, `12h`, `2w` or `90m` into days (durations.ts, as every duration flag reads
 * them). Returns undefined for anything else, including zero: pruning everything is never a typo away.
 */
export function parseAgeDays(text: string): number | undefined {
  const ms = parseDurationMs(text);
  return ms === undefined ? undefined : ms / MS_PER_DAY;
}

/** One run's audit files, as the store lists them. */
export interface AuditLogEntry {
  readonly runId: string;
  /** Absolute paths of the run's files (log and head). */
  readonly files: readonly string[];
  /** When the run's log was last written (newest modification time of its files). */
  readonly lastWrite: Date;
}

/** Logs last written before the cutoff (`now - retentionDays`), oldest first; run id breaks ties. */
export function selectExpiredLogs(
  entries: readonly AuditLogEntry[],
  retentionDays: number,
  now: Date,
): { cutoff: Date; expired: AuditLogEntry[] } {
  const cutoff = new Date(now.getTime() - retentionDays * MS_PER_DAY);
  const expired = entries
    .filter((e) => e.lastWrite.getTime() < cutoff.getTime())
    .sort((a, b) => a.lastWrite.getTime() - b.lastWrite.getTime() || (a.runId < b.runId ? -1 : a.runId > b.runId ? 1 : 0));
  return { cutoff, expired };
}

/** Run ids name files: letters, digits, `.`, `_`, `-`, not starting with a dot. */
export function isSafeRunId(runId: string): boolean {
  return /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,199}$/.test(runId);
}

/** When a run began, from its id (`20261130T065411Z-7af5e7`, system-clock.ts's newRunId); undefined when the id says nothing. */
export function runIdStartedAt(runId: string): string | undefined {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z/.exec(runId);
  return m ? `${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}.000Z` : undefined;
}
