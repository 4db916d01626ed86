import { z } from 'zod';
import { jsonSchemaOf, readStructured, type Tolerance } from './structured-reply.js';

export const VERDICT_ACTIONS = ['proceed', 'investigate', 'escalate'] as const;
export const VerdictAction = z.enum(VERDICT_ACTIONS);
export type VerdictAction = z.infer<typeof VerdictAction>;

/** What a persona must answer when asked for its verdict (strict JSON; also sent as the JSON Schema). */
export const VerdictReply = z.strictObject({
  action: VerdictAction,
  confidence: z.number().min(0).max(1),
  rationale: z.string().trim().min(1).max(500),
});
export type VerdictReply = z.infer<typeof VerdictReply>;

/** The verdict's JSON Schema, as sent to endpoints that take one (`json_mode: json_schema`). */
export const VERDICT_SCHEMA = { name: 'verdict', schema: jsonSchemaOf(VerdictReply) };

/** A persona's verdict as the council records it; `valid: false` means it was missing or malformed. */
export interface Verdict extends VerdictReply {
  readonly persona: string;
  readonly valid: boolean;
  /** Why the reply was not accepted, when `valid` is false. */
  readonly problem?: string;
  /** What the tolerant reader accepted that strict JSON would not (for the audit record). */
  readonly tolerated?: readonly Tolerance[];
  /** Keys the reply carried beyond the schema's, ignored. */
  readonly extraKeys?: number;
}

/**
 * Reads a verdict from a reply through the tolerant reader (fences, prose, key and enum case,
 * numbers as text, a confidence in percent). What is still invalid counts as `escalate` with
 * confidence 1 — fail closed.
 */
export function parseVerdict(persona: string, reply: string): Verdict {
  // A run reads each verdict several times (the retry check, its audit record, the arbitration):
  // the last few readings are kept, frozen, since a reading is a pure function of persona and reply.
  const key = `${persona}\u0000${reply}`;
  const known = recentVerdicts.get(key);
  if (known) return known;
  const read = readVerdict(persona, reply);
  const verdict = Object.freeze({ ...read, ...(read.tolerated ? { tolerated: Object.freeze([...read.tolerated]) } : {}) });
  recentVerdicts.set(key, verdict);
  if (recentVerdicts.size > 32) recentVerdicts.delete(recentVerdicts.keys().next().value as string);
  return verdict;
}

const recentVerdicts = new Map<string, Verdict>();

function readVerdict(persona: string, reply: string): Verdict {
  const read = readStructured(reply, VerdictReply, { percentages: ['confidence'] });
  const seen = {
    ...(read.tolerated.length > 0 ? { tolerated: read.tolerated } : {}),
    ...(read.extraKeys > 0 ? { extraKeys: read.extraKeys } : {}),
  };
  if (!read.ok) return { ...failClosed(persona, `malformed verdict (${read.error})`), ...seen };
  return { persona, valid: true, ...read.value, ...seen };
}

/** The instruction that asks again for a verdict, quoting what was wrong with the first one. */
export function verdictRetryPrompt(problem: string): string {
  return `That was not a valid verdict (${problem}). Reply with ONE JSON object and nothing else: {"action": "proceed" | "investigate" | "escalate", "confidence": <0..1>, "rationale": "<one line>"}`;
}

/** What the audit record of a verdict step says about its reading: categories and counts only. */
export function verdictAuditDetails(verdict: Verdict): Record<string, unknown> {
  return {
    verdict_valid: verdict.valid,
    ...(verdict.tolerated ? { verdict_tolerated: [...verdict.tolerated] } : {}),
    ...(verdict.extraKeys ? { verdict_extra_keys: verdict.extraKeys } : {}),
  };
}

function failClosed(persona: string, problem: string): Verdict {
  return { persona, valid: false, problem, action: 'escalate', confidence: 1, rationale: `fail-closed: ${problem}` };
}
