import { asciiClass, runsBefore } from './anchors.js';
import { ASSIGNMENT_RULE } from './assignment-rule.js';
import { decodeBase64, decodeBase64Url } from './checksums.js';
import { isTestCredential, keyPlaceholderReason } from './placeholders.js';
import { STATEMENT_RULES } from './statement-rules.js';
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
// A token wrapped over lines is still one token: a break is a line end (CR, LF or CRLF, after a
// `\` continuation or not) or an escaped one inside a string (`\n`, `\r\n`), then indentation (a
// YAML block scalar nests deep). Breaks may stand around its dots and inside its header and payload
// (a dot must still follow); after its last dot, a signature-long run may follow a break, and the
// signature goes on over every next line that holds nothing but the token (and a digit: a line of
// letters is a word, which is shown while a reply streams).
const LINE_BREAK = '(?:\\\\?(?:\\r\\n?|\\n)|\\\\r\\\\n|\\\\n)[ \\t]{0,64}';
const B64URL = '[A-Za-z0-9_-]';
// At most 64 wrapped lines a part: a candidate that is no token is given up after as many, not at
// the end of the text (a column of `eyJ…` lines would otherwise cost quadratic time).
const WRAPPED = `(?:${LINE_BREAK}${B64URL}+){0,64}`;
const SIGNATURE_LINES = `(?:${LINE_BREAK}(?=${B64URL}*\\d)${B64URL}+(?=[\\r\\n"'\\\\]|$)){0,64}`;
const JWT = new RegExp(
  `(?<!${B64URL})(?:eyJ|ewo|ew0K|eyA)${B64URL}{5,}${WRAPPED}(?:${LINE_BREAK})?\\.(?:${LINE_BREAK})?` +
    `${B64URL}{2,}${WRAPPED}(?:${LINE_BREAK})?\\.(?:${LINE_BREAK}(?=${B64URL}{16}))?${B64URL}*${SIGNATURE_LINES}`,
  'g',
);

/** True when a candidate, its line breaks and escapes taken out, is three base64url parts whose header is JSON with an `alg`. */
export function isJwt(wrapped: string): boolean {
  const token = wrapped.replace(/\\[rn]|\\|\s+/g, '');
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

/** Percent-decoded, or as it is when it does not decode. */
function percentDecoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    // A stray `%` is part of the text: a value, not an error.
    return text;
  }
}

function selectUrlPassword(match: string): Span | undefined {
  const afterScheme = match.indexOf('://') + 3;
  const colon = match.indexOf(':', afterScheme);
  const at = match.indexOf('@', colon);
  if (isTestCredential(percentDecoded(match.slice(afterScheme, colon)), percentDecoded(match.slice(colon + 1, at)))) return undefined;
  // A sentence's full stop is not part of the host.
  return [0, match.replace(/\.+$/, '').length];
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
  const colon = match.indexOf(':', start);
  const password = match.slice(colon + 1);
  if (password.length < 3 || isTestCredential(match.slice(start, colon), password)) return undefined;
  return [start, match.length];
}

// `Authorization: Basic <base64 of user:password>`, the scheme in any case: the span is the encoded pair.
const BASIC_HEADER = /(?<![A-Za-z0-9])(?:[Bb]asic|BASIC)[ \t]{1,4}[A-Za-z0-9+/]{4,512}={0,2}(?![A-Za-z0-9+/=])/g;

function selectBasicHeader(match: string): Span | undefined {
  const encoded = match.replace(/^\S+[ \t]+/, '');
  const pair = decodeBase64(encoded);
  // Prose ("Basic auth") decodes to bytes without a colon, or with control characters.
  const colon = pair?.indexOf(':') ?? -1;
  if (pair === undefined || colon < 0 || /[\x00-\x1f\x7f]/.test(pair)) return undefined;
  return isTestCredential(pair.slice(0, colon), pair.slice(colon + 1)) ? undefined : [match.length - encoded.length, match.length];
}

/**
 * A provider key's pattern is its full shape (prefix, alphabet, length, groups); a match is a key
 * unless its body has a placeholder's shape (a mask, an instruction, a bracketed name). What the
 * body spells does not matter: `AKIAIOSFODNN7EXAMPLE`, `ghp_000…` and `sk_test_…FAKE…` are keys.
 */
function isKeyBody(body: string): boolean {
  return keyPlaceholderReason(body) === undefined;
}

/** The key whose body begins after `prefixLength` characters, unless that body is a placeholder's shape. */
function keyAfter(prefixLength: number): (match: string) => Span | undefined {
  return whole((match) => isKeyBody(match.slice(prefixLength)));
}

/** `sk-` alone is also how prose begins (`sk-learn`): without a longer prefix, the body must be one run of 32+ letters and digits or look generated. */
const OPENAI_TYPED = /^sk-(?:proj|svcacct|admin)-/;
function isOpenAiKey(match: string): boolean {
  const typed = OPENAI_TYPED.exec(match);
  if (typed) return isKeyBody(match.slice(typed[0].length));
  const body = match.slice(3);
  return /^[A-Za-z0-9]{32,}$/.test(body) ? isKeyBody(body) : looksRandomMixedCase(body);
}

/** Rules for credentials. */
export const SECRET_RULES: readonly DetectionRule[] = [
  { category: 'PRIVATE_KEY', pattern: PRIVATE_KEY },
  { category: 'JWT', pattern: JWT, select: whole(isJwt) },
  // A match begins where the scheme (the run before `://`, 2–32 characters) begins.
  {
    category: 'URL_PASSWORD',
    pattern: URL_PASSWORD,
    starts: runsBefore('://', asciiClass(/[A-Za-z0-9+.-]/), 32),
    select: selectUrlPassword,
  },
  {
    category: 'API_KEY_ANTHROPIC',
    pattern: /(?<![A-Za-z0-9_-])sk-ant-[A-Za-z0-9_-]{20,}/g,
    select: keyAfter(7),
  },
  {
    category: 'API_KEY_OPENAI',
    pattern: /(?<![A-Za-z0-9_-])sk-(?!ant-)(?:(?:proj|svcacct|admin)-)?[A-Za-z0-9_-]{20,}/g,
    select: whole(isOpenAiKey),
  },
  {
    category: 'AWS_ACCESS_KEY',
    pattern: /(?<![A-Za-z0-9])(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Za-z0-9])/g,
    select: keyAfter(4),
  },
  {
    category: 'AWS_SECRET_KEY',
    pattern: AWS_SECRET_KEY,
    starts: awsSecretStarts,
    select: (match) => (isKeyBody(match.slice(-40)) ? [match.length - 40, match.length] : undefined),
  },
  {
    category: 'GITHUB_TOKEN',
    // Classic tokens: 36+ letters and digits; fine-grained: 22, an underscore, then 59+.
    pattern: /(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59,255})(?![A-Za-z0-9_])/g,
    select: whole((match) => isKeyBody(match.slice(match.indexOf('_') + 1))),
  },
  {
    // gitleaks' GitLab families: personal, project, deploy, runner, CI job, feed, incoming mail,
    // feature-flag, Kubernetes agent, OAuth app and SCIM tokens (a CI job token may carry a
    // `<number>_` routing prefix before its body), and runner registration tokens.
    category: 'GITLAB_TOKEN',
    pattern: /(?<![A-Za-z0-9_-])(?:gl(?:pat|dt|rt|ptt|cbt|ft|imt|oas|agent|soat|ffct)-[A-Za-z0-9_-]{20,}|GR1348941[A-Za-z0-9_-]{20,})/g,
    select: whole((match) => isKeyBody(match.startsWith('GR1348941') ? match.slice(9) : match.slice(match.indexOf('-') + 1))),
  },
  {
    // Bot, user, app, refresh (xoxe-, xoxe.xoxp-) and configuration tokens: after the prefix, a
    // number (team, app or version) and a dash, then the rest (`xoxb-your-token-here` has no such shape).
    category: 'SLACK_TOKEN',
    pattern: /(?<![A-Za-z0-9_-])(?:xox[abposre]|xapp|xoxe\.xox[bp])-\d{1,13}-[A-Za-z0-9-]{8,}/g,
    select: whole((match) => isKeyBody(match.slice(match.indexOf('-') + 1))),
  },
  {
    // With or without its scheme; Slack's documented T00000000/B00000000/XXXX… is a placeholder.
    category: 'SLACK_WEBHOOK',
    pattern: /(?<![A-Za-z0-9.-])(?:https?:\/\/)?hooks\.slack\.com\/(?:services|workflows|triggers)\/[A-Za-z0-9_/-]{20,}/g,
    select: (match) => keyAfter(match.indexOf('.com/') + 5)(match),
  },
  {
    category: 'STRIPE_KEY',
    pattern: /(?<![A-Za-z0-9_])(?:(?:sk|rk)_(?:live|test|prod)_[A-Za-z0-9]{16,247}|whsec_[A-Za-z0-9]{24,})(?![A-Za-z0-9_])/g,
    select: whole((match) => isKeyBody(match.slice(match.lastIndexOf('_') + 1))),
  },
  {
    category: 'GOOGLE_API_KEY',
    pattern: /(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{35}(?![A-Za-z0-9_-])/g,
    select: keyAfter(4),
  },
  {
    category: 'BEARER_TOKEN',
    pattern: BEARER,
    select: (match) => {
      const token = match.replace(/^[Bb]earer[ \t]+/, '');
      return looksRandom(token) ? [match.length - token.length, match.length] : undefined;
    },
  },
  { category: 'BASIC_AUTH', pattern: CURL_AUTH, select: selectCurlAuth },
  { category: 'BASIC_AUTH', pattern: BASIC_HEADER, select: selectBasicHeader },
  ASSIGNMENT_RULE,
  ...STATEMENT_RULES,
];
