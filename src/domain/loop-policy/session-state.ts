import { z } from 'zod';
import { sortedMembers, StringSet } from './ordering.js';

/** Maestro's loop-policy state as plain data, for the workspace. Every list is sorted. */
export const SessionStateSnapshot = z.strictObject({
  schemaVersion: z.literal(1),
  /** Informational: the functions never compare it with an event's `session_id`. */
  session_id: z.string(),
  /** A sealed stop was issued: with the session scope, the terminal guard stops every later event. */
  is_stopped: z.boolean(),
  /** The stop is one-shot per session (session scope). */
  stop_issued: z.boolean(),
  /** Conflict keys whose plan request was dispatched. */
  plan_request_dispatched_keys: StringSet,
  /** Conflict keys whose plan was proposed. */
  plan_proposed_keys: StringSet,
  /** Conflict keys whose plan was acknowledged. */
  plan_received_keys: StringSet,
  /** Conflict keys a stop was issued for: what the conflict-scoped terminal guard checks. */
  stopped_keys: StringSet,
});
export type SessionStateSnapshot = z.infer<typeof SessionStateSnapshot>;

/**
 * Maestro's side of the loop policy: the stop flags and the one-shot sets of the plan flow, all
 * keyed by conflict key. Mutated by the functions of `maestro-state.ts`; persist it with `toSnapshot()`.
 */
export class SessionState {
  isStopped = false;
  stopIssued = false;
  readonly planRequestDispatchedKeys = new Set<string>();
  readonly planProposedKeys = new Set<string>();
  readonly planReceivedKeys = new Set<string>();
  readonly stoppedKeys = new Set<string>();

  constructor(readonly sessionId: string) {}

  /** The state as sorted plain data. */
  toSnapshot(): SessionStateSnapshot {
    return {
      schemaVersion: 1,
      session_id: this.sessionId,
      is_stopped: this.isStopped,
      stop_issued: this.stopIssued,
      plan_request_dispatched_keys: sortedMembers(this.planRequestDispatchedKeys),
      plan_proposed_keys: sortedMembers(this.planProposedKeys),
      plan_received_keys: sortedMembers(this.planReceivedKeys),
      stopped_keys: sortedMembers(this.stoppedKeys),
    };
  }

  /** Restores a state from a validated snapshot. */
  static fromSnapshot(snapshot: SessionStateSnapshot): SessionState {
    const state = new SessionState(snapshot.session_id);
    state.isStopped = snapshot.is_stopped;
    state.stopIssued = snapshot.stop_issued;
    for (const key of snapshot.plan_request_dispatched_keys) state.planRequestDispatchedKeys.add(key);
    for (const key of snapshot.plan_proposed_keys) state.planProposedKeys.add(key);
    for (const key of snapshot.plan_received_keys) state.planReceivedKeys.add(key);
    for (const key of snapshot.stopped_keys) state.stoppedKeys.add(key);
    return state;
  }
}
