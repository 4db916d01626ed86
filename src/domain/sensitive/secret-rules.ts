import { decodeBase64Url } from './checksums.js';
import { looksRandom, looksRandomMixedCase, whole, type DetectionRule, type Span } from './rule.js';

// PEM / OpenSSH / PGP private keys. With no END line within 16 KiB (a truncated paste), the
// header and whatever key-like text follows it is still taken: better over-redact than leak.
const KEY_LABEL = '(?:[A-Z0-9]+ ){0,3}PRIVATE KEY(?: BLOCK)?';
const PRIVATE_KEY = new RegExp(
  `-----BEGIN ${KEY_LABEL}-----(?:[\\s\\S]{0,16384}?-----END ${KEY_LABEL}-----|[A-Za-z0-9+/=\\s\\\\:,-]{0,16384})`,
  'g',
);

// Three base64url parts; the header always starts `{"` (= `eyJ`). The signature may be empty
// (alg "none").
const JWT = /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{2,}\.[A-Za-z0-9_-]*/g;

export function isJwt(token: string): boolean {
  const header = decodeBase64Url(token.slice(0, token.indexOf('.')));
  if (header === undefined) return false;
  try {
    const parsed: unknown = JSON.parse(header);
    return typeof parsed === 'object' && parsed !== null && typeof (parsed as { alg?: unknown }).alg === 'string';
  } catch {
    // Not JSON: an `eyJ…` string that is not a token. A value, not an error.
    return false;
  }
}

// scheme://user:password@host[:port]. The span runs to the end of the host so the password's
// `@host.tld` tail is never reported as an e-mail instead.
const URL_PASSWORD =
  /(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{1,31}:\/\/[^\s:/?#@"'<>[\]]{0,256}:[^\s/?#@"'<>]{1,256}@[A-Za-z0-9._~%!$&*+=@:[\]-]{1,256}/g;

// Template variables and masks are not credentials: ${DB_PASS}, $PASS, {{pass}}, %PASS%, ****.
const PLACEHOLDER_PASSWORD = /^(?:\$\{?\w+\}?|\{\{\s*\w+\s*\}\}|%\w+%|\*+|x+|\.\.\.)$/i;

function selectUrlPassword(match: string): Span | undefined {
  const afterScheme = match.indexOf('://') + 3;
  const colon = match.indexOf(':', afterScheme);
  const at = match.indexOf('@', colon);
  if (PLACEHOLDER_PASSWORD.test(match.slice(colon + 1, at))) return undefined;
  // A sentence's full stop is not part of the host.
  return [0, match.replace(/\.+$/, '').length];
}

function bodyAfter(prefixLength: number, check: (body: string) => boolean) {
  return whole((match) => check(match.slice(prefixLength)));
}

// AWS secret keys are 40 unmarked base64 characters, so only their usual labels make them safe
// to recognise; the span is the value alone.
const AWS_SECRET_KEY =
  /(?<![A-Za-z0-9])(?:aws_?)?secret_?access_?key["']?\s{0,4}[:=]\s{0,4}["']?[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])/gi;

/** Rules for credentials. */
export const SECRET_RULES: readonly DetectionRule[] = [
  { category: 'PRIVATE_KEY', pattern: PRIVATE_KEY, hints: ['PRIVATE KEY'] },
  { category: 'JWT', pattern: JWT, hints: ['eyJ'], select: whole(isJwt) },
  { category: 'URL_PASSWORD', pattern: URL_PASSWORD, hints: ['://'], select: selectUrlPassword },
  {
    category: 'API_KEY_ANTHROPIC',
    pattern: /(?<![A-Za-z0-9_-])sk-ant-[A-Za-z0-9_-]{20,}/g,
    hints: ['sk-ant-'],
    select: bodyAfter(7, looksRandom),
  },
  {
    category: 'API_KEY_OPENAI',
    pattern: /(?<![A-Za-z0-9_-])sk-(?!ant-)(?:(?:proj|svcacct|admin)-)?[A-Za-z0-9_-]{20,}/g,
    hints: ['sk-'],
    select: bodyAfter(3, looksRandomMixedCase),
  },
  {
    category: 'AWS_ACCESS_KEY',
    pattern: /(?<![A-Za-z0-9])(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Za-z0-9])/g,
    hints: ['AKIA', 'ASIA', 'ABIA', 'ACCA'],
  },
  {
    category: 'AWS_SECRET_KEY',
    pattern: AWS_SECRET_KEY,
    select: (match) => [match.length - 40, match.length],
  },
  {
    category: 'GITHUB_TOKEN',
    pattern: /(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})(?![A-Za-z0-9_])/g,
    hints: ['ghp_', 'gho_', 'ghu_', 'ghs_', 'ghr_', 'github_pat_'],
    select: whole((match) => looksRandom(match.slice(match.lastIndexOf('_') + 1))),
  },
  {
    category: 'GITLAB_TOKEN',
    pattern: /(?<![A-Za-z0-9_-])gl(?:pat|dt|rt|ptt|cbt|ft|imt|oas)-[A-Za-z0-9_-]{20,}/g,
    hints: ['glpat-', 'gldt-', 'glrt-', 'glptt-', 'glcbt-', 'glft-', 'glimt-', 'gloas-'],
    select: whole((match) => looksRandom(match.slice(match.indexOf('-') + 1))),
  },
  {
    category: 'SLACK_TOKEN',
    pattern: /(?<![A-Za-z0-9_-])(?:xox[abposr]|xapp)-[A-Za-z0-9-]{10,}/g,
    hints: ['xox', 'xapp-'],
    select: bodyAfter(5, looksRandom),
  },
  {
    category: 'SLACK_WEBHOOK',
    pattern: /https:\/\/hooks\.slack\.com\/(?:services|workflows|triggers)\/[A-Za-z0-9_/-]{20,}/g,
    hints: ['hooks.slack.com'],
  },
  {
    category: 'STRIPE_KEY',
    pattern: /(?<![A-Za-z0-9_])(?:(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,247}|whsec_[A-Za-z0-9]{24,})(?![A-Za-z0-9_])/g,
    hints: ['_live_', '_test_', 'whsec_'],
    select: whole((match) => looksRandom(match.slice(match.lastIndexOf('_') + 1))),
  },
  {
    category: 'GOOGLE_API_KEY',
    pattern: /(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{35}(?![A-Za-z0-9_-])/g,
    hints: ['AIza'],
  },
];
