import {
  conflictKeyOf,
  deriveLoopEvent,
  failClosedEvent,
  validateKindDecisionPairing,
  validateMinKeys,
  type LoopEvent,
  type LoopEventInput,
} from './events.js';
import type { SessionState } from './session-state.js';
import type { LoopLayer } from './vocabulary.js';

/**
 * What a stop shuts down. `session` is the reference: once stopped, every later event of the
 * session is stopped. `conflict` is maestro's binding (policy.md): only events with a conflict
 * key that was stopped are. Use one scope for both `maestroMaybeStop` and `enforceTerminalGuard`.
 */
export type TerminalScope = 'session' | 'conflict';

export interface TerminalScopeOptions {
  /** Default `session`, the reference behaviour. */
  readonly scope?: TerminalScope;
}

/**
 * (A) The terminal guard: after a stop, answers any event with a sealed, non-overrideable
 * `STOPPED` (`"{id}::terminal_guard"`, `ACC_STOPPED_IS_TERMINAL`) — the only sealed output besides
 * the stop itself. Null while not stopped. It reads no key of the event besides the conflict key.
 */
export function enforceTerminalGuard(state: SessionState, e: LoopEventInput, options: TerminalScopeOptions = {}): LoopEvent | null {
  const stopped = options.scope === 'conflict' ? state.stoppedKeys.has(conflictKeyOf(e)) : state.isStopped;
  if (!stopped) return null;
  return deriveLoopEvent(e, 'terminal_guard', {
    layer: 'maestro',
    decision: 'STOPPED',
    kind: 'K_STOPPED',
    reason_code: 'ACC_STOPPED_IS_TERMINAL',
    sealed: true,
    overrideable: false,
    payload: null,
  });
}

/**
 * (C1) Dispatches a plan request once per conflict key. Keys are checked before the kind, so a
 * keyless event of any kind fails closed (`SPEC_MISSING_KEYS`), as does a bad pairing
 * (`SPEC_INVALID_INPUT`); any other kind than `K_PLAN_REQUESTED` is null.
 */
export function maestroDispatchPlanRequest(state: SessionState, e: LoopEventInput): LoopEvent | null {
  const rejected = checkInput(e, 'maestro');
  if (rejected !== null) return rejected;
  if (e.kind !== 'K_PLAN_REQUESTED') return null;
  const ck = conflictKeyOf(e);
  if (state.planRequestDispatchedKeys.has(ck)) return null;
  state.planRequestDispatchedKeys.add(ck);
  return deriveLoopEvent(e, 'plan_req_dispatch', {
    ...unsealedPause,
    layer: 'maestro',
    kind: 'K_PLAN_REQ_DISPATCH',
    reason_code: 'MAESTRO_PLAN_REQUEST_DISPATCHED',
    payload: null,
  });
}

/**
 * (C2) Proposes a plan once per conflict key, carrying `{ plan: planText }`. The kind is checked
 * first: anything but `K_PLAN_REQ_DISPATCH` is null even without keys; then fail closed at `mediation`.
 */
export function mediationProposePlan(state: SessionState, e: LoopEventInput, planText: string): LoopEvent | null {
  if (e.kind !== 'K_PLAN_REQ_DISPATCH') return null;
  const rejected = checkInput(e, 'mediation');
  if (rejected !== null) return rejected;
  const ck = conflictKeyOf(e);
  if (state.planProposedKeys.has(ck)) return null;
  state.planProposedKeys.add(ck);
  return deriveLoopEvent(e, 'plan_proposed', {
    ...unsealedPause,
    layer: 'mediation',
    kind: 'K_PLAN_PROPOSED',
    reason_code: 'MEDIATION_PLAN_PROPOSED',
    payload: { plan: planText },
  });
}

/** (C3) Acknowledges a proposed plan once per conflict key. Kind first (`K_PLAN_PROPOSED`), then fail closed at `maestro`. */
export function maestroAckPlanReceived(state: SessionState, e: LoopEventInput): LoopEvent | null {
  if (e.kind !== 'K_PLAN_PROPOSED') return null;
  const rejected = checkInput(e, 'maestro');
  if (rejected !== null) return rejected;
  const ck = conflictKeyOf(e);
  if (state.planReceivedKeys.has(ck)) return null;
  state.planReceivedKeys.add(ck);
  return deriveLoopEvent(e, 'plan_received', {
    ...unsealedPause,
    layer: 'maestro',
    kind: 'K_PLAN_RECEIVED',
    reason_code: 'MAESTRO_PLAN_RECEIVED',
    payload: null,
  });
}

/**
 * (D) Turns an end recommendation into the sealed stop (`"{id}::stop"`,
 * `ACC_END_SESSION_AFTER_4_HITL`), once: per session with the default scope, per conflict key
 * with `scope: 'conflict'`. Keyless or mis-paired input fails closed at `maestro`; anything but
 * `K_END_RECOMMENDED`/`END_SESSION_RECOMMENDED` is null. Sets `isStopped` and `stopIssued` and
 * records the conflict key in `stoppedKeys`.
 */
export function maestroMaybeStop(state: SessionState, e: LoopEventInput, options: TerminalScopeOptions = {}): LoopEvent | null {
  const rejected = checkInput(e, 'maestro');
  if (rejected !== null) return rejected;
  if (!(e.decision === 'END_SESSION_RECOMMENDED' && e.kind === 'K_END_RECOMMENDED')) return null;
  const ck = conflictKeyOf(e);
  const alreadyIssued = options.scope === 'conflict' ? state.stoppedKeys.has(ck) : state.stopIssued;
  if (alreadyIssued) return null;
  state.isStopped = true;
  state.stopIssued = true;
  state.stoppedKeys.add(ck);
  return deriveLoopEvent(e, 'stop', {
    layer: 'maestro',
    decision: 'STOPPED',
    kind: 'K_STOPPED',
    reason_code: 'ACC_END_SESSION_AFTER_4_HITL',
    sealed: true,
    overrideable: false,
    payload: null,
  });
}

/**
 * The companion of `HitlCounter.resetIfAllowed(…, 'explicit_new_session_start')`; run both
 * together. Clears both flags and every key set.
 */
export function maestroResetSessionStateOnNewSession(state: SessionState): void {
  state.isStopped = false;
  state.stopIssued = false;
  state.planRequestDispatchedKeys.clear();
  state.planProposedKeys.clear();
  state.planReceivedKeys.clear();
  state.stoppedKeys.clear();
}

const unsealedPause = { decision: 'PAUSE_FOR_HITL', sealed: false, overrideable: true } as const;

/** Missing keys, then pairing: the fail-closed response for the first problem, or null. */
function checkInput(e: LoopEventInput, layer: LoopLayer): LoopEvent | null {
  if (!validateMinKeys(e)) return failClosedEvent(e, 'SPEC_MISSING_KEYS', layer);
  if (!validateKindDecisionPairing(e)) return failClosedEvent(e, 'SPEC_INVALID_INPUT', layer);
  return null;
}
