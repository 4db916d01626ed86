import { asciiClass, lineStartBefore, runStartBefore, runsBefore } from './anchors.js';
import { decodeBase64Url } from './checksums.js';
import { looksRandom, looksRandomMixedCase, whole, type DetectionRule, type Span } from './rule.js';

// PEM / OpenSSH / PGP private keys. With no END line within 16 KiB (a truncated paste), the
// header and whatever key-like text follows it is still taken: better over-redact than leak.
const KEY_LABEL = '(?:[A-Z0-9]+ ){0,3}PRIVATE KEY(?: BLOCK)?';
const PRIVATE_KEY = new RegExp(
  `-----BEGIN ${KEY_LABEL}-----(?:[\\s\\S]{0,16384}?-----END ${KEY_LABEL}-----|[A-Za-z0-9+/=\\s\\\\:,-]{0,16384})`,
  'g',
);

// Three base64url parts; the header starts `{"` (= `eyJ`), or `{` and a line break or a space when
// it was pretty-printed (`ewo`, `ew0K`, `eyAi`/`eyAK`). The signature may be empty (alg "none").
const JWT = /(?<![A-Za-z0-9_-])(?:eyJ|ewo|ew0K|eyA)[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{2,}\.[A-Za-z0-9_-]*/g;

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
// to recognise (aws_secret_access_key, secret_key, aws_access_key …); the span is the value alone.
const AWS_SECRET_KEY =
  /(?<![A-Za-z0-9])(?:aws_?)?(?:secret_?access_?key|secret_?key|access_?key(?:_?secret)?)["']?\s{0,4}[:=]\s{0,4}["']?[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])/gi;

const KEY_WORD = /key/gi;
const isAlphanumeric = asciiClass(/[A-Za-z0-9]/);
const isLabelChar = asciiClass(/[A-Za-z0-9_]/);
const MAX_LABEL_BEFORE_KEY = 'aws_secret_access_'.length;

/**
 * Where an AWS_SECRET_KEY match can begin: its label holds `key` and begins at most 18 label
 * characters before it (`aws_secret_access_key`), where a run of letters and digits begins.
 */
function awsSecretStarts(text: string): number[] {
  const starts: number[] = [];
  KEY_WORD.lastIndex = 0;
  for (let word = KEY_WORD.exec(text); word; word = KEY_WORD.exec(text)) {
    const key = word.index;
    for (let at = key - 1; at >= Math.max(0, key - MAX_LABEL_BEFORE_KEY) && isLabelChar(text.charCodeAt(at)); at--) {
      if (at === 0 || !isAlphanumeric(text.charCodeAt(at - 1))) starts.push(at);
    }
  }
  return starts.sort((a, b) => a - b);
}

// Keyword assignments, in the style of detect-secrets' keyword detector: a key that names a
// credential, then `=`, `:=`, `=>` or `:` (JSON/YAML key), then a value. The span is the value.
const CREDENTIAL_KEY =
  '[A-Za-z0-9_.-]{0,40}?(?:pass(?:word|wd|phrase)?|pwd|secret|(?:api|access|auth|private|client|signing|encryption)[_.-]?(?:key|secret)|apikey|(?:auth|access|refresh|api|bearer|session|bot|id)?[_.-]?token|credentials?)';
const ASSIGNMENT = new RegExp(
  [
    // KEY = value, KEY=value, key := "value", key => 'value' (code, .env, shell, INI)
    String.raw`(?<![A-Za-z0-9_.-])${CREDENTIAL_KEY}(?![A-Za-z0-9])["']?\s{0,4}(?:=>|:=|=)\s{0,4}(?:"[^"\n]{4,200}"|'[^'\n]{4,200}'|[^\s"'${'`'},;&)}\]]{4,200})`,
    // "key": "value" (JSON)
    String.raw`"${CREDENTIAL_KEY}"\s{0,4}:\s{0,4}"[^"\n]{4,200}"`,
    // key: value at the start of a line (YAML)
    String.raw`(?<=^|\n)[ \t]{0,40}-?[ \t]{0,4}${CREDENTIAL_KEY}:[ \t]{1,4}(?:"[^"\n]{4,200}"|'[^'\n]{4,200}'|[^\s"'#]{4,200})`,
  ].join('|'),
  'gi',
);

// Placeholders and references are not credentials: ${VAR}, $VAR, {{ x }}, <your-key>, %VAR%,
// xxxx, ****, changeme, an environment lookup or a call, our own [REDACTED:…] marker.
const NOT_A_VALUE =
  /^(?:\$\{?[\w.]+\}?|\{\{.*\}\}|<[^>]*>|%\w+%|.*EXAMPLE.*|x{3,}|\*{3,}|\.{3,}|-+|_+|changeme|change_me|password|passwd|secret|token|none|null|nil|true|false|undefined|example|dummy|redacted|your[_-].*|\[.*|(?:process\.env|os\.environ|os\.getenv|env|getenv|settings|config|self|this)\b.*|.*\(.*)$/i;

// Every credential key holds one of these words (`api_key` holds `key`, `passphrase` holds `pass` …).
const CREDENTIAL_WORD = /pass|pwd|secret|key|token|credential/gi;
// Kept from the first detector so that findings stay the same: the rule runs only on a text that
// holds one of these spellings somewhere (`Pwd=…` or `pAsSwOrD=…` alone is not reported).
const KNOWN_SPELLINGS: ReadonlySet<string> = new Set([
  'pass', 'PASS', 'Pass', 'pwd', 'PWD', 'secret', 'SECRET', 'Secret', 'token', 'TOKEN', 'Token', 'key', 'KEY', 'Key', 'credential', 'CREDENTIAL', 'Credential',
]);
const isKeyChar = asciiClass(/[A-Za-z0-9_.-]/);
// How far before the word a key can begin: [A-Za-z0-9_.-]{0,40}?, then a qualifier such as `encryption_`.
const MAX_KEY_PREFIX = 40 + 'encryption_'.length;
const MAX_YAML_INDENT = 40 + 1 + 4; // [ \t]{0,40}-?[ \t]{0,4} before the key

/**
 * Where an ASSIGNMENT match can begin, from each credential word: the start of the key (the run
 * of key characters holding the word; the code form), the quote before it (the JSON form), and
 * the start of its line (the YAML form). Words are found overlapping too (`passecret`), so every
 * spelling is seen.
 */
function assignmentStarts(text: string): number[] {
  const starts: number[] = [];
  let knownSpelling = false;
  CREDENTIAL_WORD.lastIndex = 0;
  for (let word = CREDENTIAL_WORD.exec(text); word; word = CREDENTIAL_WORD.exec(text)) {
    knownSpelling ||= KNOWN_SPELLINGS.has(word[0]);
    const key = runStartBefore(text, word.index, isKeyChar, MAX_KEY_PREFIX);
    const line = lineStartBefore(text, word.index, MAX_KEY_PREFIX + MAX_YAML_INDENT);
    if (line !== -1) starts.push(line);
    if (key > 0 && text.charCodeAt(key - 1) === 34) starts.push(key - 1);
    if (key !== -1) starts.push(key);
    CREDENTIAL_WORD.lastIndex = word.index + 1;
  }
  return knownSpelling ? starts.sort((a, b) => a - b) : [];
}

function selectAssignedValue(match: string): Span | undefined {
  const m = /(?:=>|:=|=|:)\s{0,4}(?=["']?[^\s])/.exec(match.replace(/^[^"]*"[^"]*"\s{0,4}(?=:)/, (k) => ' '.repeat(k.length)));
  if (!m) return undefined;
  let start = m.index + m[0].length;
  let end = match.length;
  const quote = match[start];
  if (quote === '"' || quote === "'") {
    start += 1;
    end = match.lastIndexOf(quote) > start ? match.lastIndexOf(quote) : end;
  }
  const value = match.slice(start, end).trim();
  if (value.length < 4 || NOT_A_VALUE.test(value)) return undefined;
  // An unquoted attribute path (settings.db.password) is a reference, not a value.
  if (quote !== '"' && quote !== "'" && /^[A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)+$/.test(value)) return undefined;
  return [start, start + value.length];
}

// `Authorization: Bearer <opaque>` and bare `Bearer <token>`: an opaque token of 20+ characters
// that looks generated (prose such as "Bearer authentication" is not).
const BEARER = /(?<![A-Za-z0-9])[Bb]earer[ \t]{1,4}[A-Za-z0-9._~+/-]{20,2048}=*/g;

// `curl -u user:pass` / `--user user:pass` (gitleaks' curl-auth-user): the span is `user:pass`.
const CURL_AUTH = /\bcurl\b[^\n]{0,256}?[ \t](?:-u|--user)(?:[ \t]{1,4}|=)["']?[^\s"':]{1,128}:[^\s"']{1,256}/g;

function selectCurlAuth(match: string): Span | undefined {
  const flag = /[ \t](?:-u|--user)(?:[ \t]{1,4}|=)["']?/.exec(match);
  if (!flag) return undefined;
  const start = flag.index + flag[0].length;
  if (match.startsWith('[REDACTED:', start)) return undefined; // already redacted
  const password = match.slice(match.indexOf(':', start) + 1);
  if (NOT_A_VALUE.test(password) || password.length < 3) return undefined;
  return [start, match.length];
}

/** Rules for credentials. */
export const SECRET_RULES: readonly DetectionRule[] = [
  { category: 'PRIVATE_KEY', pattern: PRIVATE_KEY, hints: ['PRIVATE KEY'] },
  { category: 'JWT', pattern: JWT, hints: ['eyJ', 'ewo', 'ew0K', 'eyA'], select: whole(isJwt) },
  // A match begins where the scheme (the run before `://`, 2–32 characters) begins.
  { category: 'URL_PASSWORD', pattern: URL_PASSWORD, starts: runsBefore('://', asciiClass(/[A-Za-z0-9+.-]/), 32), select: selectUrlPassword },
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
    // AWS's documented example key (AKIAIOSFODNN7EXAMPLE) and its kin are not credentials.
    select: whole((match) => !match.endsWith('EXAMPLE')),
  },
  {
    category: 'AWS_SECRET_KEY',
    pattern: AWS_SECRET_KEY,
    starts: awsSecretStarts,
    // AWS's documented example secret (…EXAMPLEKEY) is not a credential.
    select: (match) => (match.endsWith('EXAMPLEKEY') ? undefined : [match.length - 40, match.length]),
  },
  {
    category: 'GITHUB_TOKEN',
    pattern: /(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})(?![A-Za-z0-9_])/g,
    hints: ['ghp_', 'gho_', 'ghu_', 'ghs_', 'ghr_', 'github_pat_'],
    select: whole((match) => looksRandom(match.slice(match.lastIndexOf('_') + 1))),
  },
  {
    // gitleaks' GitLab families: personal, project, deploy, runner, CI job, feed, incoming mail,
    // feature-flag, Kubernetes agent, OAuth app and SCIM tokens (a CI job token may carry a
    // `<number>_` routing prefix before its body), and runner registration tokens.
    category: 'GITLAB_TOKEN',
    pattern: /(?<![A-Za-z0-9_-])(?:gl(?:pat|dt|rt|ptt|cbt|ft|imt|oas|agent|soat|ffct)-[A-Za-z0-9_-]{20,}|GR1348941[A-Za-z0-9_-]{20,})/g,
    hints: ['glpat-', 'gldt-', 'glrt-', 'glptt-', 'glcbt-', 'glft-', 'glimt-', 'gloas-', 'glagent-', 'glsoat-', 'glffct-', 'GR1348941'],
    select: whole((match) => looksRandom(match.startsWith('GR1348941') ? match.slice(9) : match.slice(match.indexOf('-') + 1))),
  },
  {
    // Bot, user, app, refresh (xoxe-, xoxe.xoxp-) and configuration tokens.
    category: 'SLACK_TOKEN',
    pattern: /(?<![A-Za-z0-9_-])(?:xox[abposre]|xapp|xoxe\.xox[bp])-[A-Za-z0-9-]{10,}/g,
    hints: ['xox', 'xapp-'],
    select: whole((match) => looksRandom(match.slice(match.indexOf('-') + 1))),
  },
  {
    category: 'SLACK_WEBHOOK',
    pattern: /https:\/\/hooks\.slack\.com\/(?:services|workflows|triggers)\/[A-Za-z0-9_/-]{20,}/g,
    hints: ['hooks.slack.com'],
  },
  {
    category: 'STRIPE_KEY',
    pattern: /(?<![A-Za-z0-9_])(?:(?:sk|rk)_(?:live|test|prod)_[A-Za-z0-9]{16,247}|whsec_[A-Za-z0-9]{24,})(?![A-Za-z0-9_])/g,
    hints: ['_live_', '_test_', '_prod_', 'whsec_'],
    select: whole((match) => looksRandom(match.slice(match.lastIndexOf('_') + 1))),
  },
  {
    category: 'GOOGLE_API_KEY',
    pattern: /(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{35}(?![A-Za-z0-9_-])/g,
    hints: ['AIza'],
  },
  {
    category: 'BEARER_TOKEN',
    pattern: BEARER,
    hints: ['earer'],
    select: (match) => {
      const token = match.replace(/^[Bb]earer[ \t]+/, '');
      return looksRandom(token) ? [match.length - token.length, match.length] : undefined;
    },
  },
  { category: 'BASIC_AUTH', pattern: CURL_AUTH, hints: ['curl'], select: selectCurlAuth },
  {
    category: 'PASSWORD_ASSIGNMENT',
    pattern: ASSIGNMENT,
    starts: assignmentStarts,
    select: selectAssignedValue,
  },
];
