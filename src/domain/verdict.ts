import { z } from 'zod';

export const VERDICT_ACTIONS = ['proceed', 'investigate', 'escalate'] as const;
export const VerdictAction = z.enum(VERDICT_ACTIONS);
export type VerdictAction = z.infer<typeof VerdictAction>;

/** What a persona must answer when asked for its verdict (strict JSON). */
export const VerdictReply = z.strictObject({
  action: VerdictAction,
  confidence: z.number().min(0).max(1),
  rationale: z.string().trim().min(1).max(500),
});
export type VerdictReply = z.infer<typeof VerdictReply>;

/** A persona's verdict as the council records it; `valid: false` means it was missing or malformed. */
export interface Verdict extends VerdictReply {
  readonly persona: string;
  readonly valid: boolean;
  /** Why the reply was not accepted, when `valid` is false. */
  readonly problem?: string;
}

/**
 * Reads a verdict from a reply: the last JSON object in it that has an `action` key.
 * Missing or malformed counts as `escalate` with confidence 1 — fail closed.
 */
export function parseVerdict(persona: string, reply: string): Verdict {
  const candidate = lastJsonObject(reply);
  if (candidate === undefined) return failClosed(persona, 'no JSON verdict found in the reply');
  const result = VerdictReply.safeParse(candidate);
  if (!result.success) {
    const first = result.error.issues[0];
    return failClosed(persona, `malformed verdict (${first ? `${first.path.join('.') || '(root)'}: ${first.message}` : 'invalid'})`);
  }
  return { persona, valid: true, ...result.data };
}

function failClosed(persona: string, problem: string): Verdict {
  return { persona, valid: false, problem, action: 'escalate', confidence: 1, rationale: `fail-closed: ${problem}` };
}

/** The last balanced `{...}` in the text that parses as a JSON object with an `action` key. */
function lastJsonObject(text: string): unknown {
  const limited = text.length > 20_000 ? text.slice(-20_000) : text;
  for (let end = limited.lastIndexOf('}'); end >= 0; end = limited.lastIndexOf('}', end - 1)) {
    let depth = 0;
    for (let start = end; start >= 0; start--) {
      const ch = limited[start];
      if (ch === '}') depth++;
      else if (ch === '{' && --depth === 0) {
        try {
          const value: unknown = JSON.parse(limited.slice(start, end + 1));
          if (value !== null && typeof value === 'object' && !Array.isArray(value) && 'action' in value) return value;
        } catch {
          // not JSON at this span; keep looking further left
        }
        break;
      }
    }
  }
  return undefined;
}
