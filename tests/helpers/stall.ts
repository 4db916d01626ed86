import { existsSync } from 'node:fs';

/**
 * Blocks this process's event loop (as a stalled process does: no timer, no I/O callback runs, so a
 * lock it holds is not refreshed) until `file` exists, or `maxMs` passed. Waiting for the state a test
 * needs (another process wrote the file) instead of a fixed stall long enough for a loaded machine.
 * Returns whether the file appeared.
 */
export function stallUntilFile(file: string, maxMs: number): boolean {
  const slice = new Int32Array(new SharedArrayBuffer(4));
  const until = Date.now() + maxMs;
  while (!existsSync(file)) {
    if (Date.now() >= until) return false;
    Atomics.wait(slice, 0, 0, 20);
  }
  return true;
}
