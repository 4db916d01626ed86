import { fromState, type RunListing, unreadableListing } from '../adapters/fs/run-catalog.js';
import { type UnreadableCheckpoint, unreadableCheckpoint } from '../domain/unreadable-checkpoint.js';
import { isLiveRun } from '../domain/run/transitions.js';
import type { RunState } from '../domain/run-state.js';
import { screenText } from '../domain/screen.js';
import type { MaestroApp as App } from './use-cases.js';

/** A run as the console lists and searches it: its listing, and the text a search looks in (screened, lower case). */
export interface IndexedRun {
  readonly listing: RunListing;
  readonly text: string;
}

interface Kept extends IndexedRun {
  /** The run had ended when it was read: its checkpoint changes no more (until it is pruned, and leaves the list). */
  readonly ended: boolean;
}

/**
 * Every run of the workspace for the console's list, kept between requests: a run that has ended
 * is read once (its checkpoint changes no more), a live one on every look. With thousands of runs
 * a look lists the runs' folder and reads only the runs still going.
 */
export class RunIndex {
  readonly #kept = new Map<string, Kept>();

  constructor(private readonly app: App) {}

  async runs(): Promise<IndexedRun[]> {
    const { app } = this;
    const out: IndexedRun[] = [];
    const ids = await app.deps.ledger.list().catch(() => []);
    const seen = new Set<string>();
    // A checkpoint that does not read is listed as such (never dropped), with its audit log's times.
    const unreadable = new Map<string, UnreadableCheckpoint>();
    for (const id of ids) {
      const kept = this.#kept.get(id);
      if (kept?.ended) {
        seen.add(id);
        out.push(kept);
        continue;
      }
      const state = await app.deps.ledger.load(id).catch((error: unknown) => {
        unreadable.set(id, unreadableCheckpoint(id, error));
        return undefined;
      });
      if (!state) continue;
      seen.add(id);
      const listing = fromState(state, app.deps.config.prices, await app.shown(state));
      const fresh = { listing, text: searchText(state), ended: !isLiveRun(state) };
      this.#kept.set(id, fresh);
      out.push(fresh);
    }
    for (const id of this.#kept.keys()) if (!seen.has(id)) this.#kept.delete(id);
    const beside = new Map((await app.runsBeside(seen)).map((l) => [l.run_id, l]));
    for (const u of unreadable.values()) beside.set(u.run_id, unreadableListing(u, beside.get(u.run_id)));
    for (const listing of beside.values()) out.push({ listing, text: searchText(undefined, listing) });
    return out.sort((a, b) => b.listing.started_at.localeCompare(a.listing.started_at) || b.listing.run_id.localeCompare(a.listing.run_id));
  }
}

function searchText(state: RunState | undefined, listing?: RunListing): string {
  const parts = state
    ? [state.run_id, state.source, state.command.task_description, state.artifact ?? '', ...state.command.input_artifacts]
    : [listing?.run_id ?? '', listing?.source ?? ''];
  return screenText(parts.join('\n')).toLowerCase();
}
