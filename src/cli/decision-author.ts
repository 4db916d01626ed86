import os from 'node:os';
import type { DecisionAuthor } from '../domain/run-state.js';

/** The author of a decision taken with `maestro hitl decide`: the OS user who ran it, on this machine. */
export function cliAuthor(): DecisionAuthor {
  return { name: osUser(), via: 'cli', from: os.hostname() };
}

function osUser(): string {
  try {
    return os.userInfo().username;
  } catch {
    // A container's user may have no entry in /etc/passwd: its number still names it.
    return `uid ${process.getuid?.() ?? '?'}`;
  }
}

/** `ana via the console from this machine`, `root via the CLI on build-01`: who decided, for people. */
export function authorText(by: DecisionAuthor | undefined): string {
  if (!by) return 'a person (who was not recorded)';
  return by.via === 'cli' ? `${by.name} via the CLI on ${by.from}` : `${by.name} via the console from ${by.from}`;
}
