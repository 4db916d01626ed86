/**
 * A reply that is one JSON object (a parallel assessment, an anonymous ranking, a supervisor's
 * decision, any structured answer) as lines a person reads in `--follow`, instead of the object
 * itself: what it decided first, then its reasons, then each other field on a line. Whatever the
 * object holds is shown (no schema is assumed); a reply that is not one object is left as it is.
 */
export function readableReply(reply: string): string[] | undefined {
  const value = objectIn(reply);
  if (!value) return undefined;
  const { action, target, confidence, rationale, instruction, ...rest } = value;
  const head = [
    typeof action === 'string' ? `⇒ ${action}${typeof target === 'string' && target ? ` → ${target}` : ''}` : undefined,
    typeof confidence === 'number' ? `confidence ${confidence.toFixed(2)}` : undefined,
  ].filter((part) => part !== undefined);
  const lines = head.length > 0 ? [head.join(' · ')] : [];
  for (const text of [instruction, rationale]) if (typeof text === 'string' && text) lines.push(cut(text));
  for (const [key, field] of Object.entries(rest)) lines.push(cut(`${key}: ${fieldText(field)}`));
  return lines;
}

/** Steps whose reply is asked for as a JSON object (a verdict, an assessment, a ranking, a supervisor's decision): held back whole. */
export function structuredStep(step: string): boolean {
  return STRUCTURED_STEPS.has(step);
}
const STRUCTURED_STEPS = new Set(['verdict', 'assessment', 'review', 'decision']);

/** Whether a reply's first characters say it is a JSON object (held back while it streams, then shown readable). */
export function looksStructured(start: string): boolean {
  return /^\s*(\{|```json)/.test(start);
}

/** The longest line shown; the reply as kept (`show`, the audit log) holds it whole. */
const MAX_LINE = 240;

function cut(line: string): string {
  const flat = line.replace(/\s+/g, ' ');
  return flat.length > MAX_LINE ? `${flat.slice(0, MAX_LINE - 1)}…` : flat;
}

/** One field: text and numbers as they are, a list joined, scores by name (`know 0.66 · do 0.74`), anything else compact. */
function fieldText(field: unknown): string {
  if (field === null || typeof field !== 'object') return String(field);
  if (Array.isArray(field)) return field.every((v) => v === null || typeof v !== 'object') ? field.join(', ') : JSON.stringify(field);
  const entries = Object.entries(field);
  const scores = entries.map(([name, v]) => (isScored(v) ? `${name} ${v.score}` : undefined));
  if (entries.length > 0 && scores.every((s) => s !== undefined)) return scores.join(' · ');
  return entries.map(([name, v]) => `${name} ${typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v)}`).join(' · ');
}

function isScored(value: unknown): value is { score: unknown } {
  return typeof value === 'object' && value !== null && 'score' in value;
}

/** The reply's one JSON object, in ``` fences or not; undefined for anything else (prose, a list, broken JSON). */
function objectIn(reply: string): Record<string, unknown> | undefined {
  const body = reply
    .trim()
    .replace(/^```(?:json)?\s*/, '')
    .replace(/\s*```$/, '');
  try {
    const value = JSON.parse(body) as unknown;
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
