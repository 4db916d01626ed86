import type { LoopEventInput } from '../../src/domain/loop-policy/events.js';
import { FINAL_SYSTEM } from '../../src/domain/loop-policy/vocabulary.js';

/** The reference's `mk_event` defaults: a counting HITL pause in session `S1` on fingerprint `fp1`. */
const MK_EVENT_DEFAULTS: Omit<LoopEventInput, 'event_id'> = {
  timestamp: '2026-01-02T12:00:00+09:00',
  session_id: 'S1',
  run_id: 'R1',
  layer: 'acc_gate',
  decision: 'PAUSE_FOR_HITL',
  kind: 'K_HITL_PAUSE',
  reason_code: 'SOME_BLOCK',
  conflict_fingerprint: 'fp1',
  sealed: false,
  overrideable: true,
  final_decider: FINAL_SYSTEM,
  payload: null,
};

/** Test builder (the reference's `mk_event`): an input event with the defaults above, then `overrides`. */
export function makeLoopEvent(eventId: string, overrides: Partial<Omit<LoopEventInput, 'event_id'>> = {}): LoopEventInput {
  return Object.freeze({ ...MK_EVENT_DEFAULTS, ...overrides, event_id: eventId });
}
