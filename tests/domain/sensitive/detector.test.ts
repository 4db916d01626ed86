import { describe, expect, it } from 'vitest';
import { decodeBase64Url, isIbanValid, isLuhnValid } from '../../../src/domain/sensitive/checksums.js';
import {
  detectSensitive,
  hasSensitive,
  isSecretCategory,
  redactSensitive,
  SENSITIVE_CATEGORIES,
} from '../../../src/domain/sensitive/detector.js';
import { hasCardBrand, isIpv6 } from '../../../src/domain/sensitive/pii-rules.js';
import { isJwt } from '../../../src/domain/sensitive/secret-rules.js';
import { formatScoreTable, scoreCorpus, SENSITIVE_CORPUS } from '../../fixtures/sensitive-corpus.js';

describe('sensitive corpus', () => {
  const score = scoreCorpus();
  const positives = score.entries.filter((r) => r.entry.expect.length > 0);
  const negatives = score.entries.filter((r) => r.entry.expect.length === 0);

  it('is large enough and covers every category', () => {
    expect(SENSITIVE_CORPUS.length).toBeGreaterThanOrEqual(60);
    const covered = new Set(SENSITIVE_CORPUS.flatMap((e) => e.expect));
    expect(SENSITIVE_CATEGORIES.filter((c) => !covered.has(c))).toEqual([]);
    expect(negatives.length).toBeGreaterThanOrEqual(20);
  });

  it.each(positives.map((r) => [r.entry.text, r] as const))('finds exactly the expected categories in %j', (_text, r) => {
    expect([...r.found].sort()).toEqual([...r.entry.expect].sort());
  });

  it.each(negatives.map((r) => [r.entry.text, r] as const))('leaves %j untouched', (text, r) => {
    expect(r.found).toEqual([]);
    expect(redactSensitive(text).text).toBe(text);
    expect(hasSensitive(text)).toBe(false);
  });

  it('reports per-category precision and recall', () => {
    console.log(`\nSensitive-content detector on ${SENSITIVE_CORPUS.length} corpus entries\n${formatScoreTable(score)}\n`);
    for (const c of score.categories) {
      expect(c.recall, c.category).toBe(1);
      expect(c.precision, c.category).toBe(1);
    }
  });
});

describe('isLuhnValid', () => {
  it.each(['4111111111111111', '5555555555554444', '378282246310005', '79927398713', '0'])('accepts %s', (n) => {
    expect(isLuhnValid(n)).toBe(true);
  });
  it.each(['4111111111111112', '79927398710', '1234567812345678', '', '4111 1111 1111 1111'])('rejects %j', (n) => {
    expect(isLuhnValid(n)).toBe(false);
  });
});

describe('hasCardBrand', () => {
  it('checks brand prefix and length together', () => {
    expect(hasCardBrand('4111111111111111')).toBe(true);
    expect(hasCardBrand('411111111111111')).toBe(false); // Visa is never 15 digits
    expect(hasCardBrand('378282246310005')).toBe(true);
    expect(hasCardBrand('3782822463100050')).toBe(false); // Amex is 15
    expect(hasCardBrand('1234567812345670')).toBe(false);
  });
});

describe('isIbanValid', () => {
  it.each(['GB82WEST12345698765432', 'DE89370400440532013000', 'FR1420041010050500013M02606', 'NO9386011117947', 'BE68539007547034'])(
    'accepts %s',
    (iban) => expect(isIbanValid(iban)).toBe(true),
  );
  it.each([
    ['GB82WEST12345698765433', 'wrong check digits'],
    ['GB82WEST1234569876543', 'too short for GB'],
    ['XX82WEST12345698765432', 'unknown country'],
    ['GB82 WEST 1234 5698 7654 32', 'not compact'],
    ['gb82west12345698765432', 'not upper case'],
  ])('rejects %s (%s)', (iban) => expect(isIbanValid(iban)).toBe(false));
});

describe('isIpv6', () => {
  it.each(['2001:db8::1', 'fe80::1', '::2', '1:2:3:4:5:6:7:8', '::ffff:192.0.2.1', '64:ff9b::192.0.2.33'])('accepts %s', (a) => {
    expect(isIpv6(a)).toBe(true);
  });
  it.each([
    '10:30:45',
    '00:1a:2b:3c:4d:5e',
    '1::2::3',
    '1:2:3:4:5:6:7:8:9',
    'ab::cd',
    '::ffff:999.0.2.1',
    '12345::1',
    '::1',
    '0:0:0:0:0:0:0:1',
  ])('rejects %s', (a) => expect(isIpv6(a)).toBe(false));
});

describe('networks and hosts (issue 35)', () => {
  const found = (text: string) => detectSensitive(text).map((f) => [f.category, text.slice(f.start, f.end)]);
  it.each([
    '10.0.0.0/8',
    '172.16.0.0/12',
    '192.168.1.0/24',
    '198.51.100.128/25',
    '2001:db8::/32',
    'fe80::/10',
    '::/0',
    '2001:db8:abcd:12::/64',
  ])('a network with zero host bits identifies no one: %s', (network) => expect(found(`allow ${network} only`)).toEqual([]));
  it.each([
    ['192.168.0.17/24', 'IPV4'],
    ['10.1.2.3', 'IPV4'],
    ['10.1.2.3/32', 'IPV4'],
    ['198.51.100.129/25', 'IPV4'],
    ['2001:db8::17/64', 'IPV6'],
    ['2001:db8::/128', 'IPV6'],
    ['::ffff:192.0.2.1/96', 'IPV6'],
  ])('a host is personal data, with or without a prefix: %s', (host, category) => {
    expect(found(`the host ${host} answered`)).toEqual([[category, host]]);
  });
});

describe('isJwt and decodeBase64Url', () => {
  it('decodes unpadded base64url', () => {
    expect(decodeBase64Url('eyJhbGciOiJub25lIn0')).toBe('{"alg":"none"}');
    expect(decodeBase64Url('a-_b')).toBeDefined();
    expect(decodeBase64Url('ab+c')).toBeUndefined();
    expect(decodeBase64Url('abcde')).toBeUndefined();
  });
  it('needs a JSON header with a string alg', () => {
    expect(isJwt('eyJhbGciOiJub25lIn0.eyJzdWIiOiJ0ZXN0In0.')).toBe(true);
    expect(isJwt('eyJ0eXAiOiJub3BlIn0.eyJzdWIiOiJ4In0.c2ln')).toBe(false);
    expect(isJwt('eyJub3QganNvbg.eyJ4.c2ln')).toBe(false);
  });
});

describe('isSecretCategory', () => {
  it('separates credentials from personal data', () => {
    expect(isSecretCategory('API_KEY_OPENAI')).toBe(true);
    expect(isSecretCategory('PRIVATE_KEY')).toBe(true);
    expect(isSecretCategory('URL_PASSWORD')).toBe(true);
    expect(isSecretCategory('EMAIL')).toBe(false);
    expect(isSecretCategory('CARD')).toBe(false);
    expect(SENSITIVE_CATEGORIES.filter(isSecretCategory)).toHaveLength(16);
  });
});

describe('detectSensitive', () => {
  it('returns sorted offsets that slice out the value', () => {
    const text = 'mail bob@example.com, call +44 20 7946 0958';
    const findings = detectSensitive(text);
    expect(findings).toEqual([
      { category: 'EMAIL', start: 5, end: 20 },
      { category: 'PHONE', start: 27, end: 43 },
    ]);
    expect(findings.map((f) => text.slice(f.start, f.end))).toEqual(['bob@example.com', '+44 20 7946 0958']);
  });

  it('keeps the longer of two overlapping findings', () => {
    // The e-mail candidate "s3cret@db.example.com" and the IPv4-less host sit inside the URL.
    const text = 'postgres://admin:s3cret@db.example.com:5432/app';
    expect(detectSensitive(text)).toEqual([{ category: 'URL_PASSWORD', start: 0, end: 43 }]);
  });

  it('lets an IPv6 address with an embedded IPv4 win over the IPv4 inside it', () => {
    expect(detectSensitive('::ffff:192.0.2.1')).toEqual([{ category: 'IPV6', start: 0, end: 16 }]);
  });

  it('prefers the more specific category on equal spans (Anthropic over OpenAI)', () => {
    const key = ['sk-ant-', 'api03-AbCdEf0123456789GhIjKl'].join('');
    expect(detectSensitive(key)).toEqual([{ category: 'API_KEY_ANTHROPIC', start: 0, end: key.length }]);
  });

  it('reports only the value of a labelled AWS secret key', () => {
    const secret = ['Zq8Tm2Wx4Lp9Rk3Vn7Bc', '5Hy1Jd6Fs0Gt2Qw4Ea8U'].join('');
    const text = `aws_secret_access_key=${secret}`;
    expect(detectSensitive(text)).toEqual([{ category: 'AWS_SECRET_KEY', start: 22, end: 62 }]);
    // AWS's documented example secret has a key's full shape: it is one (issue 35).
    const example = ['wJalrXUtnFEMI/K7MDENG/', 'bPxRfiCYEXAMPLEKEY'].join('');
    expect(detectSensitive(`aws_secret_access_key=${example}`)).toEqual([{ category: 'AWS_SECRET_KEY', start: 22, end: 62 }]);
    expect(detectSensitive(`aws_secret_access_key=${'x'.repeat(40)}`)).toEqual([]);
  });

  it('finds a wrapped JWT whole, to its last line, and stops there (issue 35)', () => {
    // Every line of the signature here holds a digit: a line of letters alone reads as a word, which a
    // streamed reply shows at once (live-screen.ts), so it is not taken (see the next test).
    const token = [
      'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9',
      'eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IlRlc3QgVXNlciJ9',
      'c2lnbmF0dXJl9LTAxMjM0NTY3ODktYWJjZGVmZ2hpa1',
    ].join('.');
    const lines = (width: number) => token.match(new RegExp(`.{1,${width}}`, 'g')) ?? [];
    for (const [wrapped, after] of [
      [lines(64).join('\n'), '\nThanks'],
      [lines(76).join('\r\n'), '\r\nnext: 1'],
      [lines(40).join('\\\n    '), '"'],
      [lines(50).join('\\n'), '\\nmore text'],
      [lines(60).join(`\n${' '.repeat(30)}`), '\nkey: value'],
    ] as const) {
      const text = `token: ${wrapped}${after}`;
      expect(detectSensitive(text), JSON.stringify(text)).toEqual([{ category: 'JWT', start: 7, end: 7 + wrapped.length }]);
    }
  });

  it('leaves a last signature line of letters alone: a word, shown as a reply streams (a fragment of a signature grants nothing)', () => {
    const text = 'eyJhbGciOiJub25lIn0.eyJzdWIiOiJ0ZXN0In0.c2lnbmF0dXJlLTAx\nMjM0\nabcDEF\nThanks';
    expect(detectSensitive(text)).toEqual([{ category: 'JWT', start: 0, end: text.indexOf('\nabcDEF') }]);
  });

  it('ends an IBAN at its country length, not at the next 4-letter word', () => {
    const text = 'BE68 5390 0754 7034 THEN';
    expect(detectSensitive(text)).toEqual([{ category: 'IBAN', start: 0, end: 19 }]);
  });

  it('returns nothing for empty text', () => {
    expect(detectSensitive('')).toEqual([]);
  });
});

describe('redactSensitive', () => {
  it('replaces each finding with its category marker', () => {
    const result = redactSensitive('Mail alice@example.com or bob@example.org from 192.0.2.1; card 4111 1111 1111 1111.');
    expect(result).toEqual({
      text: 'Mail [REDACTED:EMAIL] or [REDACTED:EMAIL] from [REDACTED:IPV4]; card [REDACTED:CARD].',
      categories: ['CARD', 'EMAIL', 'IPV4'],
    });
  });

  it('is idempotent', () => {
    const once = redactSensitive(SENSITIVE_CORPUS.map((e) => e.text).join('\n'));
    expect(redactSensitive(once.text)).toEqual({ text: once.text, categories: [] });
  });

  it('leaves no finding behind anywhere in the corpus', () => {
    for (const entry of SENSITIVE_CORPUS) {
      expect(hasSensitive(redactSensitive(entry.text).text), entry.text).toBe(false);
    }
  });

  it('returns the text unchanged when nothing is found', () => {
    expect(redactSensitive('nothing to see here')).toEqual({ text: 'nothing to see here', categories: [] });
  });
});

describe('performance', () => {
  it('stays linear on pathological runs', () => {
    // Long runs that tempt backtracking: word characters before a missing @, digits with
    // separators, hex with colons, base64 with no dots, an unterminated PEM header.
    const inputs = [
      'a'.repeat(200_000),
      `${'a.'.repeat(50_000)}@`,
      '1 '.repeat(100_000),
      '1-'.repeat(100_000),
      'ab:'.repeat(60_000),
      `eyJ${'A'.repeat(200_000)}`,
      '+1 '.repeat(60_000),
      '-----BEGIN RSA PRIVATE KEY-----\n'.repeat(2_000),
      `sk-${'a'.repeat(200_000)}`,
      'x://'.repeat(50_000),
      // The offsets the fast paths try: credential words, `key`, colons, `@`, `+`, hints.
      'pass'.repeat(50_000),
      'Passecret'.repeat(20_000),
      ' password=x\n'.repeat(20_000),
      'aws_key_'.repeat(25_000),
      ':'.repeat(200_000),
      'a:'.repeat(100_000),
      '@'.repeat(200_000),
      '+'.repeat(200_000),
      'eyJsk-'.repeat(30_000),
      // Issue 22: wrapped tokens, forms of the keyword rule, Basic headers, networks, any script.
      'eyJhbGciOi\r\n'.repeat(20_000),
      `eyJ${'A\n.'.repeat(60_000)}`,
      'Basic '.repeat(40_000),
      `Basic ${'A'.repeat(200_000)}`,
      `${'ü'.repeat(200_000)}@`,
      'ü@'.repeat(100_000),
      `${'\u{20000}'.repeat(100_000)}@x.de`,
      'password: '.repeat(30_000),
      '"key": '.repeat(30_000),
      '<token>'.repeat(30_000),
      '--token '.repeat(30_000),
      'API key '.repeat(30_000),
      'a key='.repeat(30_000),
      `password=${'a\\n'.repeat(60_000)}`,
      '10.0.0.0/'.repeat(30_000),
      '::/'.repeat(60_000),
      'hooks.slack.com/services/'.repeat(10_000),
      '| password | '.repeat(20_000),
      'password is '.repeat(20_000),
      "PASSWORD '".repeat(30_000),
      '**password**:'.repeat(20_000),
      // Issue 35: statements, constants, escaped and continued line breaks, signature lines.
      'IDENTIFIED '.repeat(20_000),
      'identified by '.repeat(20_000),
      'IDENTIFIED\\040BY\\040'.repeat(15_000),
      'set password for '.repeat(15_000),
      'mysql '.repeat(40_000),
      'mysql -p'.repeat(30_000),
      "define('token', ".repeat(15_000),
      "['password'] = ".repeat(15_000),
      'eyJhbGciOi\\n'.repeat(20_000),
      'eyJhbGciOi\\\n'.repeat(20_000),
      `eyJhbGciOiJub25lIn0.eyJ0In0.${'\n1a'.repeat(60_000)}`,
      `eyJhbGciOiJub25lIn0.eyJ0In0.${'\n 1'.repeat(60_000)}`,
    ];
    for (const input of inputs) {
      // A quadratic pattern would take minutes here; the test timeout is the guard.
      detectSensitive(input);
    }
  });
});
