import { AUDIT_HEADER_FIELDS, AUDIT_REDACTION_FAILED, type UnchainedAuditRecord } from './audit.js';
import type { Sha256 } from './audit-chain.js';
import { AppError } from './errors.js';
import { isSecretCategory, isSensitiveCategory, orderedCategories } from './sensitive/categories.js';
import { detectSensitive } from './sensitive/detector.js';

/** One finding: `text.slice(start, end)` is sensitive. */
export interface ScanFinding {
  readonly category: string;
  readonly start: number;
  readonly end: number;
}

/** The sensitive-content detector as the sanitizer sees it; injectable so tests can pass one that fails. */
export interface SensitiveScanner {
  detect(text: string): readonly ScanFinding[];
  /**
   * Optional shortcut: the same answer as `detect(`${key}=${value}`)`, from a scanner that can give
   * it without building that string (cachedScanner looks it up by key, then by value).
   */
  detectAssignment?(key: string, value: string): readonly ScanFinding[];
}

/** The project's one detector (`domain/sensitive`). */
export const defaultSensitiveScanner: SensitiveScanner = { detect: detectSensitive };

/**
 * The same scanner with its answers for short strings remembered (the detector is a pure function).
 * Records repeat the same keys and short values (`persona`, `RUN`, `READ_FILE`) all the time, and
 * scanning them again is most of the sanitizer's cost. `key=value` texts are remembered by key and
 * value, so asking again builds no string. Errors are never cached.
 */
export function cachedScanner(scanner: SensitiveScanner, options: { maxEntries?: number; maxChars?: number } = {}): SensitiveScanner {
  const maxEntries = options.maxEntries ?? 10_000;
  const maxChars = options.maxChars ?? 128;
  const texts = new Map<string, readonly ScanFinding[]>();
  const assignments = new Map<string, Map<string, readonly ScanFinding[]>>();
  let entries = 0;
  const remember = (): void => {
    if (entries < maxEntries) return;
    texts.clear();
    assignments.clear();
    entries = 0;
  };
  return {
    detect(text: string): readonly ScanFinding[] {
      if (text.length > maxChars) return scanner.detect(text);
      const known = texts.get(text);
      if (known) return known;
      const found = scanner.detect(text);
      remember();
      texts.set(text, found);
      entries++;
      return found;
    },
    detectAssignment(key: string, value: string): readonly ScanFinding[] {
      const short = key.length + 1 + value.length <= maxChars;
      const known = short ? assignments.get(key)?.get(value) : undefined;
      if (known) return known;
      const found = scanner.detectAssignment ? scanner.detectAssignment(key, value) : scanner.detect(`${key}=${value}`);
      if (short) {
        remember();
        const values = assignments.get(key) ?? new Map<string, readonly ScanFinding[]>();
        assignments.set(key, values.set(value, found));
        entries++;
      }
      return found;
    },
  };
}

export interface SanitizerDeps {
  readonly scanner: SensitiveScanner;
  readonly sha256: Sha256;
}

/** A record could not be made safe to persist; the writer falls back to a payload-free record. */
export class AuditRedactionError extends AppError {
  readonly code = 'AUDIT_REDACTION_FAILED' as const;
}

/**
 * Keys whose string (or structured) values are raw model or user text. Their values are never
 * written: only `{ omitted, sha256, chars }` and category-level signals. Compared case-insensitively.
 */
export const RAW_TEXT_KEYS: ReadonlySet<string> = new Set([
  'prompt',
  'prompts',
  'reply',
  'replies',
  'response',
  'completion',
  'content',
  'message',
  'messages',
  'task',
  'task_description',
  'text',
  'body',
  'transcript',
  'note',
  'rationale',
  'reasoning',
  'draft',
]);

/** Longer strings are treated as raw text whatever their key: digests, not content. */
export const MAX_AUDIT_STRING_CHARS = 1024;

/**
 * `local@host` with a host that starts with a letter, in any script (`root@localhost`, `foo@bar`,
 * `a@example.com`, `jürgen@zuhause`): policy I6 allows no e-mail-like token in a log, whether the
 * detector calls it an e-mail or not. `lodash@4.17.21`, `logo@2x.png` and `@decorator` are not e-mail-like.
 */
const EMAIL_LIKE = /[\p{L}\p{N}._%+-]@\p{L}[\p{L}\p{N}-]*/u;

/** True when `text` holds an e-mail-like token (EMAIL_LIKE). */
export function hasEmailLikeToken(text: string): boolean {
  return EMAIL_LIKE.test(text);
}

const MAX_DEPTH = 32;
/** How much of a value its key can influence (`aws_secret_access_key=<40 chars>` is only a secret in context). */
const KEY_CONTEXT_CHARS = 128;

/**
 * Runs every key and every value of a record through the detector and replaces each finding by
 * `[REDACTED:<CATEGORY>]` (numbers too: a number that reads as a card or phone number becomes the
 * marker). Raw text (RAW_TEXT_KEYS, or anything longer than MAX_AUDIT_STRING_CHARS) is replaced by
 * its digest. Returns plain JSON data. Throws AuditRedactionError when it cannot finish safely.
 */
export function sanitizeAuditRecord(record: UnchainedAuditRecord, deps: SanitizerDeps): UnchainedAuditRecord {
  const out = sanitizeValue(record, undefined, deps, 0) as Record<string, unknown>;
  for (const field of AUDIT_HEADER_FIELDS) {
    if (out[field] !== record[field]) throw new AuditRedactionError(`the record field "${field}" would change under redaction`);
  }
  return out as UnchainedAuditRecord;
}

/**
 * Category names of anything sensitive left in `text` (a whole serialized record), plus
 * `EMAIL_LIKE` for an `@` token the detector does not call an e-mail. Empty means clean.
 */
export function findSensitiveResidue(text: string, scanner: SensitiveScanner): string[] {
  const found = new Set(scanner.detect(text).map((f) => categoryLabel(f.category)));
  if (hasEmailLikeToken(text)) found.add('EMAIL_LIKE');
  return [...found].sort();
}

/** The record written instead of one that could not be made safe: the decision only, no payload. */
export function redactionFailedRecord(record: UnchainedAuditRecord): UnchainedAuditRecord {
  return {
    v: record.v,
    run_id: record.run_id,
    seq: record.seq,
    ts: record.ts,
    event: AUDIT_REDACTION_FAILED,
    layer: record.layer,
    decision: record.decision,
    reason_code: AUDIT_REDACTION_FAILED,
    sealed: record.sealed,
    overrideable: record.overrideable,
    final_decider: record.final_decider,
  };
}

function sanitizeValue(value: unknown, key: string | undefined, deps: SanitizerDeps, depth: number): unknown {
  if (depth > MAX_DEPTH) throw new AuditRedactionError(`details nest deeper than ${MAX_DEPTH} levels`);
  if (
    key !== undefined &&
    RAW_TEXT_KEYS.has(key.toLowerCase()) &&
    value !== null &&
    value !== undefined &&
    typeof value !== 'boolean' &&
    typeof value !== 'number'
  ) {
    return digest(typeof value === 'string' ? value : (JSON.stringify(value) ?? ''), deps);
  }
  if (typeof value === 'string') return value.length > MAX_AUDIT_STRING_CHARS ? digest(value, deps) : redactString(value, key, deps);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return null;
    const found = deps.scanner.detect(String(value));
    return found.length > 0 ? marker(found[0]?.category ?? 'SENSITIVE') : value;
  }
  if (value === null || typeof value === 'boolean' || value === undefined) return value;
  if (value instanceof Date) return redactString(value.toISOString(), key, deps);
  if (Array.isArray(value)) return value.map((v) => (v === undefined ? null : sanitizeValue(v, undefined, deps, depth + 1)));
  const proto: unknown = Object.getPrototypeOf(value);
  if (typeof value === 'object' && (proto === Object.prototype || proto === null)) {
    const out: Record<string, unknown> = {};
    const entries = value as Record<string, unknown>;
    for (const k of Object.keys(entries)) {
      const v = entries[k];
      if (v === undefined) continue;
      let safeKey = redactString(k, undefined, deps);
      for (let n = 2; Object.hasOwn(out, safeKey); n += 1) safeKey = `${redactString(k, undefined, deps)}#${n}`;
      out[safeKey] = sanitizeValue(v, k, deps, depth + 1);
    }
    return out;
  }
  throw new AuditRedactionError(`a ${typeof value === 'object' ? 'non-plain object' : typeof value} cannot be written to the audit log`);
}

function redactString(text: string, key: string | undefined, deps: SanitizerDeps): string {
  return redactInContext(text, key, deps.scanner).text;
}

/**
 * Redacts `text` as the audit log does; when it is a value under `key`, findings that only exist in
 * `key=value` context count too (`aws_secret_access_key` makes its 40 characters a secret).
 */
export function redactInContext(
  text: string,
  key: string | undefined,
  scanner: SensitiveScanner = defaultSensitiveScanner,
): { text: string; categories: string[] } {
  const own = scanner.detect(text);
  const inContext = key !== undefined && text.length > 0 ? detectAfterKey(key, text.slice(0, KEY_CONTEXT_CHARS), scanner) : [];
  if (own.length === 0 && inContext.length === 0) return { text, categories: [] };
  const spans = [...own, ...inContext];
  spans.sort((a, b) => a.start - b.start || b.end - a.end);
  let out = '';
  let cursor = 0;
  const categories = new Set<string>();
  for (const span of spans) {
    if (span.end <= cursor) continue;
    if (span.start >= cursor) {
      out += `${text.slice(cursor, span.start)}${marker(span.category)}`;
      categories.add(categoryLabel(span.category));
    }
    cursor = span.end;
  }
  return { text: out + text.slice(cursor), categories: [...categories] };
}

/** Findings of `key=value` that reach into `value`, as offsets into `value`. */
function detectAfterKey(key: string, value: string, scanner: SensitiveScanner): ScanFinding[] {
  const offset = key.length + 1;
  const found = scanner.detectAssignment ? scanner.detectAssignment(key, value) : scanner.detect(`${key}=${value}`);
  if (found.length === 0) return [];
  const spans: ScanFinding[] = [];
  for (const f of found) {
    if (f.end > offset) spans.push({ category: f.category, start: Math.max(0, f.start - offset), end: f.end - offset });
  }
  return spans;
}

function digest(text: string, deps: SanitizerDeps): Record<string, unknown> {
  const found = deps.scanner.detect(text);
  if (found.length === 0) return { omitted: 'raw_text', sha256: deps.sha256(text), chars: text.length };
  const labels = orderedCategories(found.map((f) => categoryLabel(f.category)));
  const secrets = labels.filter((c) => isSensitiveCategory(c) && isSecretCategory(c));
  const pii = labels.filter((c) => !secrets.includes(c));
  return {
    omitted: 'raw_text',
    sha256: deps.sha256(text),
    chars: text.length,
    ...(pii.length > 0 ? { pii_categories: pii } : {}),
    ...(secrets.length > 0 ? { secret_categories: secrets } : {}),
  };
}

function marker(category: string): string {
  return `[REDACTED:${categoryLabel(category)}]`;
}

/** Category names go into the log, so only UPPER_SNAKE names pass through as they are. */
function categoryLabel(category: string): string {
  return /^[A-Z][A-Z0-9_]{0,39}$/.test(category) ? category : 'SENSITIVE';
}
