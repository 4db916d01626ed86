/**
 * The one sensitive-content detector: the audit sanitizer and the policy layer both call it, so
 * what it reports is exactly what never reaches a model or a log.
 *
 * Judgement calls, each pinned by the corpus in tests/fixtures/sensitive-corpus.ts:
 * - Matches are confirmed by structure or checksum wherever one exists (Luhn + card brand, IBAN
 *   length + mod-97, SSN never-issued ranges, JWT header JSON with `alg`, IPv6 group count).
 * - E-mail needs a dotted domain (`foo@bar`, `@decorator`, `pkg@1.2.3` are not addresses);
 *   `git@host` SSH remotes and `logo@2x.png` are skipped.
 * - Phones need a leading `+` country code or the North American 3-3-4 shape; bare digit runs,
 *   dates and times are never phones.
 * - A bare dotted quad is an IPv4 even when it might be a four-part version (fail closed); a
 *   `v`-prefixed one (`v10.0.0.1`) is a version. Loopback, 0.0.0.0 and broadcast are skipped.
 * - Key placeholders (`ghp_xxxx…`, `${DB_PASSWORD}`) are not secrets: key bodies must look
 *   generated (letters and digits, 8+ distinct characters).
 */
import { categoryRank, SENSITIVE_CATEGORIES, type SensitiveCategory } from './categories.js';
import { PII_RULES } from './pii-rules.js';
import type { DetectionRule } from './rule.js';
import { SECRET_RULES } from './secret-rules.js';

export { isSecretCategory, SENSITIVE_CATEGORIES, type SensitiveCategory } from './categories.js';

/** One piece of sensitive content: `text.slice(start, end)` is it. Holds no copy of the value. */
export interface Finding {
  readonly category: SensitiveCategory;
  /** Offset of the first UTF-16 code unit. */
  readonly start: number;
  /** Offset one past the last UTF-16 code unit. */
  readonly end: number;
}

/** Result of redactSensitive: the redacted text and which categories were found. */
export interface Redaction {
  readonly text: string;
  /** Distinct categories found, in SENSITIVE_CATEGORIES order. */
  readonly categories: SensitiveCategory[];
}

const RULES: readonly DetectionRule[] = [...SECRET_RULES, ...PII_RULES];

function* scanCandidates(text: string): Generator<Finding> {
  for (const rule of RULES) {
    if (rule.hints && !rule.hints.some((hint) => text.includes(hint))) continue;
    // matchAll works on a copy of the regex, so the shared pattern's lastIndex is never touched.
    for (const match of text.matchAll(rule.pattern)) {
      const span = rule.select ? rule.select(match[0]) : ([0, match[0].length] as const);
      if (span && span[1] > span[0]) {
        yield { category: rule.category, start: match.index + span[0], end: match.index + span[1] };
      }
    }
  }
}

/**
 * Finds PII and secrets in `text`. Findings are sorted by start and never overlap: of two
 * overlapping candidates the longer is kept, and on equal length the more specific category
 * (earlier in SENSITIVE_CATEGORIES). Runs in time linear in the text's length.
 */
export function detectSensitive(text: string): Finding[] {
  return resolveOverlaps([...scanCandidates(text)]);
}

/** True when `text` holds anything detectSensitive would report; stops at the first finding. */
export function hasSensitive(text: string): boolean {
  for (const _ of scanCandidates(text)) return true;
  return false;
}

/**
 * Replaces every finding with `[REDACTED:<CATEGORY>]`. The marker itself never matches a rule,
 * so redacting twice changes nothing.
 */
export function redactSensitive(text: string): Redaction {
  const findings = detectSensitive(text);
  let out = '';
  let cursor = 0;
  const found = new Set<SensitiveCategory>();
  for (const finding of findings) {
    out += `${text.slice(cursor, finding.start)}[REDACTED:${finding.category}]`;
    cursor = finding.end;
    found.add(finding.category);
  }
  out += text.slice(cursor);
  return { text: out, categories: SENSITIVE_CATEGORIES.filter((c) => found.has(c)) };
}

function byPreference(a: Finding, b: Finding): number {
  return b.end - b.start - (a.end - a.start) || categoryRank(a.category) - categoryRank(b.category) || a.start - b.start;
}

/**
 * Splits the candidates into clusters of transitively overlapping spans (almost always a single
 * candidate) and keeps, greedily by preference, those that do not overlap a better one.
 */
function resolveOverlaps(candidates: Finding[]): Finding[] {
  candidates.sort((a, b) => a.start - b.start || b.end - a.end);
  const kept: Finding[] = [];
  let cluster: Finding[] = [];
  let clusterEnd = -1;
  const flush = (): void => {
    const chosen: Finding[] = [];
    for (const candidate of cluster.sort(byPreference)) {
      if (chosen.every((c) => candidate.end <= c.start || candidate.start >= c.end)) chosen.push(candidate);
    }
    kept.push(...chosen.sort((a, b) => a.start - b.start));
  };
  for (const candidate of candidates) {
    if (candidate.start >= clusterEnd && cluster.length > 0) {
      flush();
      cluster = [];
    }
    cluster.push(candidate);
    clusterEnd = Math.max(clusterEnd, candidate.end);
  }
  if (cluster.length > 0) flush();
  return kept;
}
