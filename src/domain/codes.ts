import { z } from 'zod';
import data from './codes.json' with { type: 'json' };
/**
 * The one catalogue of event and reason codes, with what each means: `codes.json`, data, checked
 * here at load. The audit log writes only these (the builders in audit.ts and decision.ts take
 * nothing else, so a new code must be added there to compile), the artifact's decision trail and
 * `maestro hitl show` / `maestro show` explain them from here, and `maestro schema --codes` prints
 * the table.
 */
const CodeTable = z.record(z.string().regex(/^[A-Z][A-Z0-9_]*$/), z.string().min(1));

/** What happened: the `event` of an audit record. */
export const EVENT_CODES: Readonly<typeof data.event_codes> = CodeTable.parse(data.event_codes) as typeof data.event_codes;
export type EventCode = keyof typeof EVENT_CODES;

/** Why: the `reason_code` of a decision. */
export const REASON_CODES: Readonly<typeof data.reason_codes> = CodeTable.parse(data.reason_codes) as typeof data.reason_codes;
export type ReasonCode = keyof typeof REASON_CODES;

/** Codes of runs that a bug ended: `RUN_FAILED_<AppError code>`. */
export function failureReason(errorCode: string | undefined): ReasonCode {
  const code = errorCode ? `RUN_FAILED_${errorCode}` : 'RUN_FAILED_INTERNAL';
  return isReasonCode(code) ? code : 'RUN_FAILED_INTERNAL';
}

export function isReasonCode(code: string): code is ReasonCode {
  return Object.hasOwn(REASON_CODES, code);
}

/** What a reason code means, for people; codes written by older versions fall back to the code. */
export function explainReason(code: string): string {
  return isReasonCode(code) ? REASON_CODES[code] : code;
}

/** A reason code that came in as a string (a knowledge outcome, a stored record): checked against the catalogue. */
export function asReasonCode(code: string): ReasonCode {
  if (!isReasonCode(code)) throw new Error(`reason code "${code}" is not in the catalogue (src/domain/codes.json)`);
  return code;
}
