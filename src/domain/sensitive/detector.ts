/**
 * The one sensitive-content detector: the audit sanitizer and the policy layer both call it, so
 * what it reports is exactly what never reaches a model or a log.
 *
 * Judgement calls, each pinned by the corpus in tests/fixtures/sensitive-corpus.ts:
 * - Matches are confirmed by structure or checksum wherever one exists (Luhn + card brand, IBAN
 *   length + mod-97, SSN never-issued ranges, JWT header JSON with `alg`, IPv6 group count).
 * - E-mail needs a dotted domain (`foo@bar`, `@decorator`, `pkg@1.2.3` are not addresses), in
 *   any script (`jürgen@müller.de`); `git@host` SSH remotes and `logo@2x.png` are skipped.
 * - Phones need a leading `+` country code or the North American 3-3-4 shape; bare digit runs,
 *   dates and times are never phones.
 * - A bare dotted quad is an IPv4 even when it might be a four-part version (fail closed); a
 *   `v`-prefixed one (`v10.0.0.1`) is a version. Loopback, 0.0.0.0 and broadcast are skipped. A
 *   network whose host bits are zero (`10.0.0.0/8`, `2001:db8::/32`) identifies no one and is
 *   skipped; a host is reported, with its prefix when it has one (`192.168.0.17/24`).
 * - A provider key with its full shape (prefix, alphabet, length) is a key even when it reads like
 *   an example (`AKIAIOSFODNN7EXAMPLE`, zeros, `FAKE`); only a placeholder's shape (`ghp_xxxx…`,
 *   `xoxb-your-token-here`, `<key>`) is not. Untyped values (a password, a bearer token) are also
 *   judged by placeholder words (`changeme`, `example`).
 * - Every credential rule asks the same tables what is not a credential (placeholders.ts), and
 *   the keyword rule the same vocabulary for what names one (credential-names.ts). A user and
 *   password that are equal, or a placeholder password, are a test credential, not a secret.
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

/**
 * A rule ready to run: its pattern compiled once, global to scan a text, sticky to try one offset.
 * Their lastIndex is scratch state, set before each use; nothing a rule calls runs the detector.
 */
interface CompiledRule {
  readonly rule: DetectionRule;
  readonly scan: RegExp;
  readonly sticky: RegExp;
}

const RULES: readonly CompiledRule[] = [...SECRET_RULES, ...PII_RULES].map((rule) => ({
  rule,
  scan: new RegExp(rule.pattern.source, rule.pattern.flags),
  sticky: new RegExp(rule.pattern.source, `${rule.pattern.flags.replace('g', '')}y`),
}));

/** Takes a candidate; true when it wants no more. */
type Found = (candidate: Finding) => boolean;

/**
 * Offers `found` the part of `match` that `rule` selects: `stop` when `found` wants no more,
 * `none` when the rule selected nothing (then a match may still begin inside this one: `key
 * "password=x"` is no assignment of `key`, but holds one of `password`).
 */
function offer(rule: DetectionRule, match: RegExpExecArray, found: Found): 'stop' | 'taken' | 'none' {
  const span = rule.select ? rule.select(match[0], match) : ([0, match[0].length] as const);
  if (span === undefined || span[1] <= span[0]) return 'none';
  return found({ category: rule.category, start: match.index + span[0], end: match.index + span[1] }) ? 'stop' : 'taken';
}

/**
 * Calls `found` with every candidate of every rule, rule by rule, each rule's in text order, until
 * it returns true. Patterns run with exec on regexes owned by this module (reset before each use),
 * as matchAll would on a fresh copy of each. With `shortcuts` off, every rule runs and every
 * pattern is tried at every offset: the reference the shortcuts must agree with.
 */
function scanCandidates(text: string, found: Found, shortcuts = true): void {
  for (const compiled of RULES) {
    const { rule, scan } = compiled;
    if (shortcuts && rule.starts ? scanStarts(text, compiled, found) : scanAll(text, rule, scan, found)) return;
  }
}

/** A global scan of the whole text; true when `found` wants no more. */
function scanAll(text: string, rule: DetectionRule, scan: RegExp, found: Found): boolean {
  scan.lastIndex = 0;
  for (let match = scan.exec(text); match; match = scan.exec(text)) {
    const offered = offer(rule, match, found);
    if (offered === 'stop') return true;
    if (offered === 'none' || match[0].length === 0) scan.lastIndex = match.index + 1;
  }
  return false;
}

/**
 * The same, trying the pattern only where the rule says a match can begin: as a global scan
 * would, the first offset at or after the previous match's end that matches.
 */
function scanStarts(text: string, { rule, sticky }: CompiledRule, found: Found): boolean {
  let from = 0;
  for (const start of rule.starts?.(text) ?? []) {
    if (start < from) continue;
    sticky.lastIndex = start;
    const match = sticky.exec(text);
    if (!match) continue;
    const offered = offer(rule, match, found);
    if (offered === 'stop') return true;
    from = offered === 'none' ? start + 1 : Math.max(sticky.lastIndex, start + 1);
  }
  return false;
}

/**
 * Finds PII and secrets in `text`. Findings are sorted by start and never overlap: of two
 * overlapping candidates the longer is kept, and on equal length the more specific category
 * (earlier in SENSITIVE_CATEGORIES). Runs in time linear in the text's length.
 */
export function detectSensitive(text: string): Finding[] {
  const candidates: Finding[] = [];
  scanCandidates(text, (candidate) => {
    candidates.push(candidate);
    return false;
  });
  return resolveOverlaps(candidates);
}

/**
 * What detectSensitive finds, found the slow way: every rule, every pattern at every offset, none
 * of the shortcuts (`starts`). Only for checking that the shortcuts change nothing
 * (tests/domain/sensitive/differential.test.ts).
 */
export function detectSensitiveWithoutShortcuts(text: string): Finding[] {
  const candidates: Finding[] = [];
  scanCandidates(
    text,
    (candidate) => {
      candidates.push(candidate);
      return false;
    },
    false,
  );
  return resolveOverlaps(candidates);
}

/** True when `text` holds anything detectSensitive would report; stops at the first finding. */
export function hasSensitive(text: string): boolean {
  let found = false;
  scanCandidates(text, () => (found = true));
  return found;
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
  if (candidates.length < 2) return candidates;
  candidates.sort((a, b) => a.start - b.start || b.end - a.end);
  const kept: Finding[] = [];
  let cluster: Finding[] = [];
  let clusterEnd = -1;
  const flush = (): void => {
    const [only] = cluster;
    if (cluster.length === 1 && only) {
      kept.push(only);
      return;
    }
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
