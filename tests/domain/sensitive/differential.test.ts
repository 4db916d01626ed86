import { describe, expect, it } from 'vitest';
import { sha256 } from '../../../src/adapters/system/hashing.js';
import type { UnchainedAuditRecord } from '../../../src/domain/audit.js';
import { cachedScanner, defaultSensitiveScanner, sanitizeAuditRecord, type SensitiveScanner } from '../../../src/domain/audit-sanitizer.js';
import { detectSensitive, detectSensitiveWithoutShortcuts, hasSensitive, redactSensitive } from '../../../src/domain/sensitive/detector.js';
import { makeTranscript, modelCallRecord, prng, transcriptRecords } from '../../fixtures/council-transcript.js';
import { SENSITIVE_CORPUS } from '../../fixtures/sensitive-corpus.js';

// Seeded, so every run tries the same texts; the suite's size keeps it fast, a soak goes further:
// MAESTRO_DIFFERENTIAL_TEXTS=100000 npx vitest run tests/domain/sensitive/differential.test.ts
const TEXTS = Number(process.env.MAESTRO_DIFFERENTIAL_TEXTS ?? 6000);
const RECORDS = Number(process.env.MAESTRO_DIFFERENTIAL_RECORDS ?? 2000);
// The benchmark transcript is turns drawn from a fixed set of sentences (tests/fixtures/council-transcript.ts):
// 2 MB holds every sentence in every persona's turns many times over, and every boundary between
// them, so a larger one repeats the same cases (the benchmark itself uses 10 MB).
const TRANSCRIPT_BYTES = Number(process.env.MAESTRO_DIFFERENTIAL_TRANSCRIPT_MB ?? 2) * 1024 * 1024;
let transcript: string[] | undefined;
const benchmarkTranscript = (): string[] => {
  transcript ??= makeTranscript(TRANSCRIPT_BYTES);
  return transcript;
};

// Issue 13 item 5 made the detector fast with shortcuts (`starts`: only the offsets
// where a match can begin); they must change nothing. Issue 22 changed the rules on purpose, so
// the oracle is no longer a frozen copy of an older detector but the same rules run the slow way:
// every rule, every pattern at every offset (detectSensitiveWithoutShortcuts), finding for
// finding, offset for offset. The sanitizer's shortcuts (its cache, `key=value` answered by key
// and value) are checked against the plain scanner the same way.

const cat = (...parts: string[]): string => parts.join('');

/**
 * Pieces that sit on the edges the fast detector relies on: the literals it anchors on (`@`,
 * `://`, `:`, `+`, `key`, credential words in every case), the runs before them at and around
 * their length limits (local part 64, scheme 32, IPv6 group 4, key prefix 40 and a qualifier such
 * as `encryption_`, YAML indent 45, AWS label 18), quotes, line breaks, separators, and fragments
 * of real findings.
 */
const PIECES: readonly string[] = [
  '@',
  '@',
  '://',
  ':',
  '::',
  ':',
  '"',
  "'",
  '\n',
  '\n',
  ' ',
  ' ',
  ' ',
  '\t',
  '=',
  ':=',
  '=>',
  ': ',
  '-',
  '_',
  '.',
  ',',
  ';',
  '(',
  ')',
  '[',
  ']',
  '{',
  '}',
  '$',
  '§',
  '+',
  '/',
  '%',
  '#',
  '`',
  'pass',
  'PASS',
  'Pass',
  'pAsS',
  'password',
  'passwd',
  'passphrase',
  'pwd',
  'Pwd',
  'secret',
  'SeCrEt',
  'key',
  'KEY',
  'kEy',
  'api_key',
  'apikey',
  'access-key',
  'client.secret',
  'token',
  'ToKeN',
  'auth_token',
  'bearer_token',
  'credential',
  'Credentials',
  'passecret',
  'tokenkey',
  'keypass',
  'aws_secret_access_key',
  'secret_key',
  'SecretAccessKey',
  'hunter2-Blue-Canoe',
  'Zx81-kLm2-Qp93-Wr47',
  cat('q8Zt4Wm2', 'Rk9Lp3Vx7Nb5'),
  '${DB_PASSWORD}',
  'changeme',
  '<your-key>',
  'os.environ["X"]',
  'settings.db.password',
  cat('Zq8Tm2Wx4Lp9Rk3Vn7Bc', '5Hy1Jd6Fs0Gt2Qw4Ea8U'),
  cat('wJalrXUtnFEMI/K7MDENG/', 'bPxRfiCYEXAMPLEKEY'),
  'alice',
  'jane.doe',
  'first.last+tag',
  'ops%team',
  'example.com',
  'mail.example.co.uk',
  'localhost',
  'git',
  'logo',
  '2x.png',
  'x',
  'ab',
  'é',
  '€',
  'https',
  'postgres',
  'redis',
  'svn+ssh',
  'admin',
  's3cr3t',
  'user',
  'p%40ss',
  'db.example.com',
  '5432',
  '/app',
  '?q=1',
  '#frag',
  '2001',
  'db8',
  '0db8',
  '8a2e',
  'fe80',
  'ffff',
  'abcde',
  'ABCD',
  '0',
  '1',
  '12',
  '123',
  '1234',
  '12345',
  '192.0.2.1',
  '10.0.0.0/8',
  '127.0.0.1',
  'v10.0.0.1',
  '1.3.6.1.4.1',
  '%eth0',
  '4111',
  '1111',
  '4111 1111 1111 1111',
  '378282246310005',
  'DE89 3704 0044 0532 0130 00',
  'GB82WEST12345698765432',
  '123-45-6789',
  '+44 20 7946 0958',
  '(415) 555-0100',
  '415-555-0199',
  'ext. 12',
  'x7',
  cat('sk-proj-', 'Xq3vT9bLm2Wc8Rk5Hy7Nd4Fp6Gs1Jt0Ua_ZeKo-Yi3Qw9ExRt5Yu7Io'),
  cat('sk-ant-api03-', 'AbCdEf0123456789GhIjKl'),
  cat('AKIA', 'Q3ZT7HW2LMX9RB4K'),
  cat('ghp_', '1a2B3c4D5e6F7g8H9i0JkLmNoPqRsTuVwXyZ'),
  cat('glpat-', 'xY7zW3vU9tS1rQ5pO2nM'),
  cat('xoxb-', '123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx'),
  cat('sk_live_', '51Hx9FakeKeyAbCdEf0123456789'),
  cat('AIza', 'SyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW'),
  'Bearer ',
  cat('8f3kZ0qL', 'mT7xR2vN9wB4cY6d'),
  'curl -u ',
  'curl --user "',
  'deploy:Pa55-w0rd-9',
  'eyJhbGciOiJub25lIn0.eyJzdWIiOiJ0ZXN0In0.',
  '-----BEGIN RSA PRIVATE KEY-----',
  '-----END RSA PRIVATE KEY-----',
  'https://hooks.slack.com/services/',
  'T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX',
  // Issue 22: spellings and forms of the keyword rule, placeholders, wrapped tokens, networks, IDN.
  'Pwd',
  'pw',
  'PW',
  'auth',
  'Auth',
  'author',
  'bypass',
  'csrf-token',
  'publicToken',
  'max_tokens',
  'API key',
  'Client Secret',
  'x-api-key',
  'PGPASSWORD',
  'dbPass',
  '<password>',
  '</password>',
  '<token>',
  '--password ',
  '--token=',
  '**',
  '**Password:** ',
  '- ',
  '\r\n',
  '\r',
  '\\n',
  '?',
  '&',
  '`',
  'xoxb-your-token-here',
  'your_password_here',
  'REPLACE_ME',
  'string;',
  'Optional[str]',
  '!vault',
  '$(cat x)',
  '/run/secrets/db',
  'test:test',
  'guest:guest@',
  'admin:admin',
  'Basic ',
  'basic ',
  'ZGVwbG95OlBhNTUtdzByZC05',
  'dGVzdDp0ZXN0',
  'Sup3r-S3cret',
  '9f86d081884c7d659a2feaa0c55ad015',
  'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9',
  '.eyJzdWIiOiIxMjM0NTY3ODkwIn0',
  '.dGVzdC1zaWduYXR1cmUtbm90LXJlYWwtMDEyMzQ1Njc4OQ',
  '.\n',
  'hooks.slack.com/services/',
  'T0A1B2C3D/B4E5F6G7H/Zk3Qm8Lp2Wx7Rt9Vn4Bc1Hy6',
  '/24',
  '/8',
  '/33',
  '::/48',
  '10.2.3.0',
  '0.0.0.0',
  'ü',
  'jürgen',
  'müller.de',
  '用户',
  '例子.中国',
  'xn--mller-kva.de',
  '\u{1F600}',
  '\u{20000}',
  '122000000000003',
  '1220 00000 000003',
  '|',
  '| ',
  ' | ',
  ' is ',
  ' was ',
  'is: ',
  'WITH PASSWORD ',
  "'Tr0ub4dor-3'",
  'await',
  'required',
  '8-64',
  '482913',
  // Issue 35: statements, PHP constants, documentation keys, networks, references, wrapped tokens.
  'IDENTIFIED BY ',
  'identified by ',
  'Identified',
  'IDENTIFIED WITH x BY ',
  '\\040',
  'SET PASSWORD = ',
  'set password for ',
  "PASSWORD('",
  "define('DB_PASSWORD', ",
  "', '",
  "')",
  "['password'] = ",
  'mysql -u root -p',
  'mysqldump ',
  ' -p',
  'sshpass -p ',
  'redis-cli -a ',
  cat('AKIA', 'IOSFODNN7EXAMPLE'),
  cat('ghp_', '0'.repeat(36)),
  '192.168.0.17/24',
  '2001:db8::/32',
  '::17/64',
  'credentialsId: ',
  'a1b2c3d4-e5f6-7890-abcd-ef1234567890',
  'secretName: ',
  'tls-cert-7f3e9a2b1c4d',
  '\\\n',
  '\\r\\n',
];

const run = (random: () => number, chars: string, min: number, max: number): string =>
  Array.from({ length: min + Math.floor(random() * (max - min + 1)) }, () => chars[Math.floor(random() * chars.length)]).join('');

/** Runs of the characters the anchors walk back over, at and around each length limit. */
function runPiece(random: () => number): string {
  const lengths = [1, 2, 3, 4, 5, 31, 32, 33, 39, 40, 41, 44, 45, 46, 63, 64, 65, 85, 86];
  const n = lengths[Math.floor(random() * lengths.length)] ?? 1;
  const classes = ['abcdefghijklmnopqrstuvwxyz', 'aZ09._%+-', '0123456789abcdefABCDEF', 'aZ09+.-', 'aZ09_.-', ' \t', ' \t-'];
  return run(random, classes[Math.floor(random() * classes.length)] ?? 'a', n, n);
}

/** Findings whose variable part is a run at and around its length limit. */
function shapedPiece(random: () => number): string {
  const around = (limit: number): number => limit - 2 + Math.floor(random() * 5);
  const shapes = [
    () => `${run(random, 'abcXYZ', 1, 1)}${run(random, 'aZ09+.-', around(31), around(31))}://admin:s3cr3t@db.example.com`,
    () => `${run(random, 'aZ09._%+-', around(64), around(64))}@example.com`,
    () => `${run(random, '0123456789abcdef', around(4), around(4))}::${run(random, '0123456789abcdef', 1, 5)}`,
    () => Array.from({ length: 3 + Math.floor(random() * 7) }, () => run(random, '0123456789abcdefABCDEF', 0, 5)).join(':'),
    () =>
      `${run(random, 'aZ_ .', 0, 3)}${['aws_secret_access_key', 'AWS_SECRETACCESSKEY', 'awssecret_key', 'Access_Key_Secret', 'secretkey', 'access_key'][Math.floor(random() * 6)]}${run(random, '"\' =:', 1, 4)}${cat('Zq8Tm2Wx4Lp9Rk3Vn7Bc', '5Hy1Jd6Fs0Gt2Qw4Ea8U')}`,
    () => `${run(random, 'aZ09_.-', around(40), around(40))}password=hunter2-Blue-Canoe`,
    () => `${run(random, 'aZ09_.-', around(40), around(40))}encryption_key=hunter2-Blue-Canoe`,
    () => `${run(random, 'aZ09_.-', around(40), around(40))}refresh.token := 'Zx81-kLm2-Qp93-Wr47'`,
    () => `"${run(random, 'aZ09_.-', around(40), around(40))}token": "Zx81-kLm2-Qp93-Wr47"`,
    () =>
      `\n${run(random, ' \t', around(40), around(40))}-${run(random, ' \t', 0, 5)}${run(random, 'aZ09_.-', 0, 41)}secret: s3cr3t-Horse-Battery`,
    () =>
      `\n${run(random, ' \t', 38, 41)}-${run(random, ' \t', 3, 5)}${run(random, 'aZ09_.-', 38, 41)}encryption-secret: s3cr3t-Horse-Battery`,
    () => `${run(random, 'aZ09', around(16), around(16))} ${run(random, 'aZ09_.-', around(40), around(40))}key: "Zx81-kLm2-Qp93-Wr47"`,
    () => `<${run(random, 'aZ09_.-', around(60), around(60))}token>Zx81-kLm2-Qp93-Wr47</${run(random, 'aZ09_.-', 0, 3)}token>`,
    () => `--${run(random, 'aZ09_.-', around(60), around(60))}password ${['Sup3r-S3cret', '-x', '"a b c d"'][Math.floor(random() * 3)]}`,
    () => `${run(random, 'üéaZ09._%+-', around(64), around(64))}@müller.de`,
    () =>
      `eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9${run(random, '\r\n \t', 0, 3)}.${run(random, '\r\n \t', 0, 3)}eyJzdWIiOiIxMjM0NTY3ODkwIn0${run(random, '\r\n ', 0, 3)}.${run(random, '\r\n ', 0, 2)}dGVzdC1zaWduYXR1cmUtbm90LXJlYWwtMDEyMzQ1Njc4OQ`,
    () => {
      const separator = ['\n', '\r\n', '\\\n', '\\n'][Math.floor(random() * 4)] ?? '\n';
      const token = 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dGVzdC1zaWduYXR1cmUtbm90LXJlYWwtMDEyMzQ1Njc4OQ';
      const width = 8 + Math.floor(random() * 70);
      return (token.match(new RegExp(`.{1,${width}}`, 'g')) ?? []).join(`${separator}${run(random, ' \t', 0, 70)}`);
    },
    () =>
      `${['IDENTIFIED', 'identified', 'SET PASSWORD FOR', 'set password'][Math.floor(random() * 4)]}${run(random, ' \t', 1, 9)}${run(random, "aZ09_'@%", 0, 12)}${run(random, ' =', 0, 3)}BY ${run(random, "'", 0, 1)}Tr0ub4dor-3'`,
    () =>
      `${run(random, 'aZ09', 0, 3)}${['192.168.0.', '10.', '2001:db8:', 'fe80::'][Math.floor(random() * 4)]}${run(random, '0123456789:.', 0, 8)}/${run(random, '0123456789', 1, 3)}`,
  ];
  return shapes[Math.floor(random() * shapes.length)]?.() ?? '';
}

function fuzzText(random: () => number): string {
  let text = '';
  const pieces = Math.floor(random() * 40);
  for (let i = 0; i < pieces; i++) {
    const roll = random();
    text += roll < 0.05 ? shapedPiece(random) : roll < 0.2 ? runPiece(random) : PIECES[Math.floor(random() * PIECES.length)];
  }
  return text;
}

describe('the detector with its shortcuts against the same rules run the slow way', () => {
  const same = (text: string): void => {
    expect(detectSensitive(text), JSON.stringify(text)).toEqual(detectSensitiveWithoutShortcuts(text));
    expect(hasSensitive(text), JSON.stringify(text)).toBe(detectSensitiveWithoutShortcuts(text).length > 0);
  };

  it('finds exactly the same on every corpus entry, on the whole corpus, and on its redaction', () => {
    const texts = SENSITIVE_CORPUS.map((e) => e.text);
    const whole = texts.join('\n');
    for (const text of [...texts, whole, redactSensitive(whole).text]) same(text);
  });

  it('finds exactly the same on the benchmark transcript, as one text and turn by turn', () => {
    const turns = benchmarkTranscript();
    const whole = turns.join('\n\n');
    const expected = detectSensitiveWithoutShortcuts(whole);
    expect(new Set(expected.map((f) => f.category)).size).toBeGreaterThan(5); // the transcript does hold findings
    expect(detectSensitive(whole)).toEqual(expected);
    for (const turn of turns.slice(0, 3000)) expect(detectSensitive(turn)).toEqual(detectSensitiveWithoutShortcuts(turn));
  });

  it(`finds exactly the same on ${TEXTS} generated texts built on the edges of its shortcuts`, () => {
    const random = prng(13_5);
    let findings = 0;
    for (let i = 0; i < TEXTS; i++) {
      const text = fuzzText(random);
      findings += detectSensitiveWithoutShortcuts(text).length;
      same(text);
    }
    expect(findings).toBeGreaterThan(5_000); // the generator does reach the rules
  });
});

/** What sanitizing gives: the record, or the error it throws. */
function outcome(sanitize: () => unknown): unknown {
  try {
    return sanitize();
  } catch (error) {
    return { threw: (error as Error).constructor.name, message: (error as Error).message };
  }
}

/** Sanitizes records as the writer wires it (cached, `key=value` answered by key and value) and with the plain detector. */
function sanitizeBoth(scanner: SensitiveScanner = cachedScanner(defaultSensitiveScanner)) {
  const plain: SensitiveScanner = { detect: detectSensitive };
  return (record: UnchainedAuditRecord) => ({
    shortcuts: outcome(() => sanitizeAuditRecord(record, { scanner, sha256 })),
    plain: outcome(() => sanitizeAuditRecord(record, { scanner: plain, sha256 })),
  });
}

const KEYS: readonly string[] = [
  'persona',
  'path',
  'note',
  'Prompt',
  'TEXT',
  'excerpt',
  'password',
  'db_password',
  'aws_secret_access_key',
  'secret_key',
  'api_key',
  'token',
  'curl --user',
  'curl -u',
  'Bearer',
  'url',
  'host',
  'a@example.com',
  '+44 20 7946 0958',
  'card',
  '',
  'x',
  'Pwd',
  'csrf-token',
  'max_tokens',
  'auth',
  'publicToken',
  'Basic',
];

/** A details object of random keys and values: fuzz strings, numbers, nesting, and the odd thing that cannot be written. */
function fuzzDetails(random: () => number, depth = 0): Record<string, unknown> {
  const details: Record<string, unknown> = {};
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)] as T;
  for (let n = Math.floor(random() * 6); n > 0; n--) {
    const key = random() < 0.7 ? pick(KEYS) : fuzzText(random).slice(0, 40);
    const roll = random();
    details[key] =
      roll < 0.45
        ? fuzzText(random)
        : roll < 0.6
          ? pick([4111111111111111, 4155550100, 12345, -1, 0.5, 1e21, 1234567890123, Number.NaN, 378282246310005])
          : roll < 0.7 && depth < 3
            ? fuzzDetails(random, depth + 1)
            : roll < 0.8
              ? [fuzzText(random), pick([1, null, true]), depth < 3 ? fuzzDetails(random, depth + 1) : 'leaf']
              : roll < 0.85
                ? new Date(Date.UTC(2026, 0, 1, 10, 30))
                : roll < 0.87
                  ? new Map()
                  : roll < 0.9
                    ? 'x'.repeat(1000) + fuzzText(random)
                    : pick([null, true, false, undefined]);
  }
  return details;
}

describe('the audit sanitizer with its shortcuts against the plain detector', () => {
  it('writes exactly the same records for the benchmark transcript, both paths', () => {
    const turns = benchmarkTranscript();
    for (const shape of ['excerpts', 'reply'] as const) {
      const sanitize = sanitizeBoth();
      const results = transcriptRecords(turns, shape).map(sanitize);
      const differ = results.findIndex(({ shortcuts, plain }) => JSON.stringify(shortcuts) !== JSON.stringify(plain));
      if (differ !== -1) expect(results[differ]?.shortcuts).toEqual(results[differ]?.plain);
      expect(differ).toBe(-1);
    }
  });

  it('writes exactly the same records for the corpus, as keys, values and lists', () => {
    const sanitize = sanitizeBoth();
    SENSITIVE_CORPUS.forEach(({ text }, i) => {
      const { shortcuts, plain } = sanitize(
        modelCallRecord({ info: text, [text]: 'as key', list: [text], password: text, aws_secret_access_key: text }, i),
      );
      expect(shortcuts, text).toEqual(plain);
    });
  });

  it(`writes exactly the same records (or fails alike) for ${RECORDS} generated ones, cached or not`, () => {
    const random = prng(13_55);
    const sanitizeCached = sanitizeBoth();
    const sanitizePlain = sanitizeBoth(defaultSensitiveScanner);
    for (let i = 0; i < RECORDS; i++) {
      const record = modelCallRecord(fuzzDetails(random), i);
      const cached = sanitizeCached(record);
      expect(cached.shortcuts, JSON.stringify(record.details)).toEqual(cached.plain);
      expect(sanitizePlain(record).shortcuts).toEqual(cached.plain);
    }
  });
});
