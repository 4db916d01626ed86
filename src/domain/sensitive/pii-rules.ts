import { asciiClass, codePointRunsBefore, occurrencesOf, runStartBefore, unicodeClass } from './anchors.js';
import { IBAN_LENGTHS, isIbanValid, isLuhnValid } from './checksums.js';
import { whole, type DetectionRule, type Span } from './rule.js';

// An e-mail needs a dotted domain ending in a 2+ letter TLD, so `foo@bar`, `@decorator`,
// `pkg@1.2.3` and `user@localhost` are not addresses. Letters are any script's (internationalised
// addresses: `jürgen@müller.de`, `用户@例子.中国`), and a TLD may be punycode (`xn--p1ai`).
const LOCAL_CHAR = '[\\p{L}\\p{M}\\p{N}._%+-]';
const LABEL_CHAR = '[\\p{L}\\p{M}\\p{N}-]';
const TLD = '(?:\\p{L}[\\p{L}\\p{M}]{1,62}|[Xx][Nn]--[A-Za-z0-9-]{1,59})';
const EMAIL = new RegExp(`(?<!${LOCAL_CHAR})${LOCAL_CHAR}{1,64}@(?:${LABEL_CHAR}{1,63}\\.){1,16}${TLD}(?!${LABEL_CHAR})`, 'gu');

// Shaped like addresses but not personal: retina asset names (`logo@2x.png`), SSH remotes
// (`git@github.com:org/repo.git`), and the `password@host` tail of a URL's `user:password@host`
// (URL_PASSWORD's, or a test credential's that is no secret: `https://user:password@example.com`).
const URL_USER = /^[^\s:/?#@"'<>[\]]{0,256}$/;

/** True when the address at `at` follows `scheme://user:` (it is then a URL's password and host). */
function followsUrlUser(input: string, at: number): boolean {
  if (input.charAt(at - 1) !== ':') return false;
  const before = input.slice(Math.max(0, at - 300), at - 1);
  const separator = before.lastIndexOf('://');
  return separator > 0 && /[A-Za-z0-9+.-]/.test(before.charAt(separator - 1)) && URL_USER.test(before.slice(separator + 3));
}

function selectEmail(match: string, exec: RegExpExecArray): Span | undefined {
  if (/@\d+(?:\.\d+)?x\./i.test(match) || match.startsWith('git@') || followsUrlUser(exec.input, exec.index)) return undefined;
  return [0, match.length];
}

// International numbers start with `+` and a country code; groups are separated by one space,
// dot or dash (a separator is mandatory between groups so they cannot trade digits), with an
// optional bracketed trunk/area part: +44 (0)20 7946 0958.
const PHONE_INTERNATIONAL =
  /(?<![\w+])\+[1-9]\d{0,2}(?:[ .-]?\(\d{1,4}\)[ .-]?\d{1,8}(?:[ .-]\d{1,8}){0,5}|(?:[ .-]\d{1,8}){1,6}|\d{5,13})(?:[ ,]{0,2}(?:x|ext\.?)[ ]?\d{1,6})?(?!\w|[-.]\d)/g;

// E.164 allows at most 15 digits; fewer than 8 is a score or a version, not a number.
function isInternationalPhone(match: string): boolean {
  const digits = match.replace(/\s*(?:x|ext\.?)\s*\d+$/, '').replace(/\D/g, '').length;
  return digits >= 8 && digits <= 15;
}

// North American numbers without `+1`: (415) 555-0100, 415-555-0100, 415.555.0100, 1-800-555-0100,
// optionally with an extension (x12, ext. 12), as international numbers may have.
// Area code and exchange start with 2-9. Ten bare digits are not matched (too many ids look so).
const PHONE_NANP =
  /(?<![\w+.-])(?:1[ .-]?)?(?:\(\s?[2-9]\d{2}\s?\)\s?|[2-9]\d{2}[ .-])[2-9]\d{2}[ .-]\d{4}(?:[ ,]{0,2}(?:x|ext\.?)[ ]?\d{1,6})?(?!\w|[-.]\d)/g;

// A dotted quad with no leading zeros. Not preceded by a word character, dot, `$` or `§`, so
// `v10.0.0.1`, spec sections (`ES6$25.4.5.4`) and the middle of `1.3.6.1.4.1` (an OID) are left
// alone; a bare four-part version such as `1.2.3.4` cannot be told from an address and IS
// reported (fail closed). A `/prefix` is part of the candidate (10.2.3.0/24, 192.168.0.17/24).
const OCTET = '(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)';
const IPV4 = new RegExp(`(?<![\\w.$§])(?:${OCTET}\\.){3}${OCTET}(?:/(?:3[0-2]|[12]?\\d)(?![\\w.]))?(?!\\w|\\.\\d)`, 'g');
const IPV4_EXACT = new RegExp(`^(?:${OCTET}\\.){3}${OCTET}$`);

/**
 * True for a network written in CIDR notation whose host bits are all zero (`10.0.0.0/8`,
 * `2001:db8::/32`): it names a range, and a range identifies no one. A prefix as long as the
 * address (`/32`, `/128`) or host bits that are set (`192.168.0.17/24`) name one host.
 */
export function isNetwork(bytes: readonly number[], prefix: number): boolean {
  if (prefix >= bytes.length * 8) return false;
  return bytes.every((byte, i) => (byte & ((1 << Math.min(8, Math.max(0, (i + 1) * 8 - prefix))) - 1)) === 0);
}

/** The `/prefix` of a candidate, or undefined when it has none. */
function prefixOf(candidate: string): number | undefined {
  const slash = candidate.lastIndexOf('/');
  return slash === -1 ? undefined : Number(candidate.slice(slash + 1));
}

// Addresses that identify no one and that every developer transcript is full of: loopback,
// unspecified and broadcast, and any network (host bits zero). Hosts in private ranges
// (10.1.2.3, 192.168.0.17/24) are still reported: they map a network.
function isIdentifyingIpv4(candidate: string): boolean {
  const prefix = prefixOf(candidate);
  const address = prefix === undefined ? candidate : candidate.slice(0, candidate.lastIndexOf('/'));
  if (address.startsWith('127.') || address === '0.0.0.0' || address === '255.255.255.255') return false;
  return prefix === undefined || !isNetwork(address.split('.').map(Number), prefix);
}

// IPv6 candidates: hex groups joined by colons (an empty group stands for `::`), optionally
// ending in an embedded IPv4, and a `/prefix` (2001:db8::/32). The candidate must not end in a lone
// colon. isIpv6 then checks the group count, so `10:30:00` (a time) and `00:1a:2b:3c:4d:5e` (a MAC)
// are rejected.
const H16 = '[0-9A-Fa-f]{1,4}';
const IPV6 = new RegExp(
  `(?<![\\w:.])(?:${H16}|(?=::))(?::(?:${H16})?){2,8}(?:(?:\\.\\d{1,3}){3})?(?:(?<=::)|(?<!:))(?!\\w|\\.\\d|:[\\w:])` +
    '(?:/(?:12[0-8]|1[01]\\d|[1-9]?\\d)(?![\\w.]))?',
  'g',
);

const isHexDigit = asciiClass(/[0-9A-Fa-f]/);

/**
 * Where an IPV6 match can begin: at the group (up to 4 hex digits, or none before `::`) before its
 * first colon, which the second colon follows within 5 characters (`::`, `:db8:`).
 */
function ipv6Starts(text: string): number[] {
  const starts: number[] = [];
  let colon = text.indexOf(':');
  while (colon !== -1) {
    const next = text.indexOf(':', colon + 1);
    const start = next !== -1 && next - colon <= 5 ? runStartBefore(text, colon, isHexDigit, 4) : -1;
    if (start !== -1) starts.push(start);
    colon = next;
  }
  return starts;
}

/** The eight 16-bit groups of an IPv6 address (an embedded IPv4 counts as two), or undefined when it is malformed. */
function ipv6Groups(address: string): number[] | undefined {
  const lastColon = address.lastIndexOf(':');
  const tail = address.slice(lastColon + 1);
  let text = address;
  if (tail.includes('.')) {
    if (!IPV4_EXACT.test(tail)) return undefined;
    const [a = 0, b = 0, c = 0, d = 0] = tail.split('.').map(Number);
    text = `${address.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const parsed = halves.map((half) => (half === '' ? [] : half.split(':')));
  if (parsed.flat().some((group) => !/^[0-9A-Fa-f]{1,4}$/.test(group))) return undefined;
  const [head = [], rest = []] = parsed.map((groups) => groups.map((group) => Number.parseInt(group, 16)));
  const known = head.length + rest.length;
  if (halves.length === 2 ? known > 7 : known !== 8) return undefined;
  return [...head, ...new Array<number>(8 - known).fill(0), ...rest];
}

/**
 * True for a well-formed IPv6 address that identifies someone: not loopback `::1`, not a network
 * whose host bits are zero (`2001:db8::/32`, `fe80::/10`). A host with a prefix (`2001:db8::17/64`) is one.
 */
export function isIpv6(withPrefix: string): boolean {
  const candidate = withPrefix.replace(/\/\d+$/, '');
  // Rust/C++ paths such as `ab::cd` are hex-shaped; real addresses almost always hold a digit.
  if (!/\d/.test(candidate) || /^(?:0{0,4}:){2,7}0{0,3}1$/.test(candidate)) return false;
  const groups = ipv6Groups(candidate);
  if (groups === undefined) return false;
  const prefix = prefixOf(withPrefix);
  const bytes = groups.flatMap((group) => [group >> 8, group & 0xff]);
  return prefix === undefined || !isNetwork(bytes, prefix);
}

// Cards: 13-19 digits, compact or in the printed groupings (4-4-4-4[-3], 4-4-4-2/3, Amex/Diners
// 4-6-5/4-6-4, UATP 4-5-6) with one consistent separator; then brand prefix/length and Luhn.
const CARD =
  /(?<![\w.-])(?:[2-6]\d{12,18}|[2-6]\d{3}([ -])\d{4}\1\d{4}\1\d{2,4}(?:\1\d{3})?|3\d{3}([ -])\d{6}\2\d{4,5}|1\d{14}|1\d{3}([ -])\d{5}\3\d{6})(?!\w|-\d)/g;

/** True when the digits carry a known card brand's prefix (IIN) and a length that brand issues. */
export function hasCardBrand(digits: string): boolean {
  const n = digits.length;
  const p2 = Number(digits.slice(0, 2));
  const p3 = Number(digits.slice(0, 3));
  const p4 = Number(digits.slice(0, 4));
  if (digits.startsWith('1')) return n === 15; // UATP (airline cards)
  if (digits.startsWith('4')) return n === 13 || n === 16 || n === 19; // Visa
  if ((p2 >= 51 && p2 <= 55) || (p4 >= 2221 && p4 <= 2720)) return n === 16; // Mastercard
  if (p2 === 34 || p2 === 37) return n === 15; // Amex
  if (p4 === 6011 || p2 === 65 || (p3 >= 644 && p3 <= 649)) return n >= 16; // Discover
  if (p4 >= 3528 && p4 <= 3589) return n >= 16; // JCB
  if (p2 === 36 || p2 === 38 || p2 === 39 || (p3 >= 300 && p3 <= 305)) return n >= 14; // Diners
  if (p2 === 62) return n >= 16; // UnionPay
  return p2 === 50 || (p2 >= 56 && p2 <= 69); // Maestro
}

function isCardNumber(digits: string): boolean {
  return digits.length >= 13 && digits.length <= 19 && hasCardBrand(digits) && isLuhnValid(digits);
}

// A 3-digit group after a full 16-digit number may be a CVV rather than part of a 19-digit card.
function selectCard(match: string): Span | undefined {
  if (isCardNumber(match.replace(/[ -]/g, ''))) return [0, match.length];
  const lastSep = match.search(/[ -]\d{3}$/);
  if (lastSep > 0 && isCardNumber(match.slice(0, lastSep).replace(/[ -]/g, ''))) return [0, lastSep];
  return undefined;
}

// IBAN: country, check digits, then the BBAN compact or in groups of four, separated by spaces or
// by dashes (used consistently). The country's registered length decides where it ends, so a
// following 4-letter word is not swallowed.
const IBAN =
  /(?<![A-Za-z0-9])[A-Za-z]{2}\d{2}(?:[A-Za-z0-9]{11,30}|(?: [A-Za-z0-9]{4}){2,7}(?: [A-Za-z0-9]{1,4})?|(?:-[A-Za-z0-9]{4}){2,7}(?:-[A-Za-z0-9]{1,4})?)(?![A-Za-z0-9])/g;

function selectIban(match: string): Span | undefined {
  const length = IBAN_LENGTHS[match.slice(0, 2).toUpperCase()];
  if (length === undefined) return undefined;
  const separator = match.includes('-') ? '-' : ' ';
  let seen = 0;
  let end = 0;
  while (end < match.length && seen < length) {
    if (match[end] !== separator) seen++;
    end++;
  }
  if (seen < length || (end < match.length && match[end] !== separator)) return undefined;
  return isIbanValid(match.slice(0, end).split(separator).join('').toUpperCase()) ? [0, end] : undefined;
}

// US SSN with a dash or space (used consistently). Never issued: area 000, 666 or 9xx; group 00;
// serial 0000.
const SSN = /(?<![\w-])(?!000|666|9\d\d)\d{3}([- ])(?!00)\d{2}\1(?!0000)\d{4}(?!\w|-\d)/g;

/** Rules for personal data (PII). */
export const PII_RULES: readonly DetectionRule[] = [
  // A match begins where the local part (the run before `@`, at most 64 characters) begins.
  { category: 'EMAIL', pattern: EMAIL, starts: codePointRunsBefore('@', unicodeClass(/[\p{L}\p{M}\p{N}._%+-]/u), 64), select: selectEmail },
  { category: 'PHONE', pattern: PHONE_INTERNATIONAL, starts: occurrencesOf('+'), select: whole(isInternationalPhone) },
  { category: 'PHONE', pattern: PHONE_NANP },
  { category: 'IPV4', pattern: IPV4, select: whole(isIdentifyingIpv4) },
  { category: 'IPV6', pattern: IPV6, starts: ipv6Starts, select: whole(isIpv6) },
  { category: 'CARD', pattern: CARD, select: selectCard },
  { category: 'IBAN', pattern: IBAN, select: selectIban },
  { category: 'SSN', pattern: SSN },
];
