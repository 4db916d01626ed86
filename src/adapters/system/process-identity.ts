import { readFileSync } from 'node:fs';

/** Sends signal 0: true if the process exists (EPERM means it exists but belongs to someone else). */
export type ProcessProbe = (pid: number) => boolean;

/** When a process started, as a token only comparable to another token; undefined where the OS does not tell. */
export type ProcessStartReader = (pid: number) => string | undefined;

export const probeProcess: ProcessProbe = (pid) => {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  return !isZombie(pid);
};

/** A killed process whose parent has not reaped it yet still answers signal 0; on Linux, /proc tells. */
function isZombie(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z';
  } catch {
    // No /proc (macOS, Windows) or the process just went: signal 0 has already answered.
    return false;
  }
}

let bootId: string | undefined;

/**
 * On Linux: this boot's id and the process's start time in clock ticks since boot (field 22 of
 * `/proc/<pid>/stat`). A pid the system hands out again belongs to a process that started later, so
 * the token differs. Elsewhere (no /proc) undefined: the pid alone has to do.
 */
export const readProcessStart: ProcessStartReader = (pid) => {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name (field 2) may hold spaces and parentheses: the fields after it follow its last ')'.
  const start = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  if (start === undefined || !/^[0-9]+$/.test(start)) return undefined;
  bootId ??= readBootId();
  return `${bootId}:${start}`;
};

function readBootId(): string {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch {
    return '';
  }
}

/** A process as recorded by itself, to be checked later by others. */
export interface RecordedProcess {
  readonly pid: number;
  /** `readProcessStart` of the process when it recorded itself; absent where the OS does not tell. */
  readonly process_start?: string | undefined;
}

/**
 * Whether the recorded process still runs: its pid answers and, when both tokens are known, it
 * started when the record says (else the pid was handed to another process since). When the start
 * cannot be read now, the pid's answer stands: unsure counts as alive, so nobody runs a run twice.
 */
export function isRecordedProcessAlive(
  recorded: RecordedProcess,
  probe: ProcessProbe = probeProcess,
  readStart: ProcessStartReader = readProcessStart,
): boolean {
  if (!probe(recorded.pid)) return false;
  if (recorded.process_start === undefined) return true;
  const now = readStart(recorded.pid);
  return now === undefined || now === recorded.process_start;
}
