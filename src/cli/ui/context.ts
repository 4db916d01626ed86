import type { Context } from 'hono';
import type { ConsoleBackend } from '../../compose/console.js';
import type { ConsoleAccess, ConsoleSession } from './access.js';
import type { SafeHtml } from './html.js';
import { OUTCOME_RECORDED } from './outcome.js';
import { layout, type Notice } from './pages.js';

export interface ConsoleServerOptions {
  readonly backend: ConsoleBackend;
  /** Who may use the console, and the tabs signed in. */
  readonly access: ConsoleAccess;
  /**
   * `host:port` values a request may name (anything else may be a DNS rebinding: refused); undefined
   * when the console listens beyond this machine, where people reach it by names it cannot know (the
   * tokens still guard it).
   */
  readonly hosts: () => readonly string[] | undefined;
  /** `https` when the console serves TLS: a change must come from a page of this scheme, host and port. */
  readonly scheme?: 'http' | 'https';
  /** Where a request came from, as a decision records it (this machine, or another one); never a host address. */
  readonly placeOf?: (c: Context) => string;
}

/** What every handler behind the guard knows: the signed-in tab. */
export type ConsoleEnv = { Variables: { session: ConsoleSession } };

export const RUN_ID = /^[A-Za-z0-9_.-]{1,200}$/;
/** What a page says after a write, by a fixed key (never text from the request). */
const DONE: Readonly<Record<string, string>> = {
  'continue-console': 'Decided: continue. This console carries the run on from its checkpoint; this page follows it to its end.',
  'continue-watcher': 'Decided: continue. The running watcher takes the run up from its checkpoint; this page follows it to its end.',
  'continue-worker': 'Decided: continue. A worker of the engine takes the run up from its checkpoint; this page follows it to its end.',
  resumed: 'Resumed: this console carries the run on from its last checkpoint; this page follows it to its end.',
  stop: 'Decided: stop. The run ended as STOPPED, with an artifact that records the stop.',
  requeued: 'Requeued: the command is back in commands/ and will be checked afresh.',
  added: 'Added: the command is in commands/ and waits for a watcher.',
  outcome: OUTCOME_RECORDED,
};

/** A whole page for this request: the menu, who is signed in, the notice. */
export function page(c: Context<ConsoleEnv>, options: ConsoleServerOptions, title: string, body: SafeHtml, notice?: Notice): string {
  const active = `/${c.req.path.split('/')[1] ?? ''}`;
  return layout({ title, active, workspace: options.backend.label, person: c.get('session')?.name, body, ...(notice ? { notice } : {}) });
}

export function doneNotice(c: Context<ConsoleEnv>): Notice | undefined {
  const key = c.req.query('done');
  const text = key === undefined ? undefined : DONE[key];
  return text ? { kind: 'ok', text } : undefined;
}
