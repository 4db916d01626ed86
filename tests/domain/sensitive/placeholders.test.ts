import { describe, expect, it } from 'vitest';
import {
  EXPRESSION_PATTERNS,
  isTestCredential,
  keyPlaceholderReason,
  NON_VALUE_WORDS,
  notACredentialReason,
  PLACEHOLDER_INSIDE,
  PLACEHOLDER_SHAPES,
  PLACEHOLDER_WORDS,
  placeholderReason,
  REFERENCE_PATTERNS,
  repeatsName,
} from '../../../src/domain/sensitive/placeholders.js';

// Issue 22 item 11: what a credential's value is when it is not a credential, one table each.

/** Values each row of the tables must recognise, by the row's `why`. */
const ROW_EXAMPLES: Readonly<Record<string, readonly string[]>> = {
  empty: ['', '   '],
  'a mask (xxxx, ****, ••••, ...)': ['xxxx', 'sk-XXXXXXXXXXXX', '****', 'ab***cd', '••••••', 'abc...', 'Hunter…'],
  'a mask of one repeated character': ['xx', '##', '__', '--'],
  'an instruction to the reader (your-…, …-here)': [
    'your_password_here',
    'YOUR_API_KEY',
    'xoxb-your-token-here',
    'sk-YourKey',
    'insert-token-here',
    'put key here',
  ],
  'an angle-bracketed name (<your-key>)': ['<your-key>', '<token>', 'pk_<key>', '<generate'],
  'a placeholder word inside (example, changeme, placeholder, dummy, redacted)': [
    'EXAMPLEKEY123',
    'my-example-token',
    'ChangeMe123',
    'change_it',
    'replace-me-1',
    'Placeholder1',
    'dummy-secret-9',
    '[REDACTED:PASSWORD_ASSIGNMENT]',
  ],
  'a shell or environment variable ($VAR, ${VAR}, %VAR%, $(cmd))': [
    '$DB_PASSWORD',
    '${DB_PASSWORD}',
    '${DB_PASSWORD:-x}',
    'pre-${X}-post',
    '%DB_PASSWORD%',
    '$(cat /run/secrets/db)',
    '${POSTGRES_PASSWORD:?set',
  ],
  'a format field (%s, %(password)s, {password}, {0})': ['%s', '%(password)s', '{password}', '{0}'],
  'a bind parameter (:password, @pw, ?)': [':password', '@pw', '?'],
  'a template ({{ var }}, {% … %}, ${{ secrets.X }})': ['{{ vault_db_password }}', '{% raw %}x{% endraw %}'],
  'a YAML tag (!vault, !Ref)': ['!vault', '!Ref DbPassword'],
  'a keyword that starts an expression (await getToken(), new Secret(…))': ['await', 'yield', 'typeof', 'lambda', 'function'],
  'a call (getenv("X"), input())': ['getenv("X")', 'os.getenv(', 'input()', 'self.fetch_token()'],
  'an attribute path (settings.db.password, args.token)': ['settings.db.password', 'args.token', 'req.body?.secret;', 'this.password'],
  'an index into a lookup (ENV["X"], os.environ[…])': ['ENV["X"]', 'os.environ["DB"]', 'secrets[0]'],
  'a file path (/run/secrets/db, ~/.pgpass, C:\\keys\\db)': [
    '/run/secrets/db',
    '~/.pgpass',
    './secret.txt',
    'C:\\keys\\db',
    '/home/dev/project',
  ],
};

/** Real-looking secrets: none of the tables may claim them. */
const REAL_VALUES = [
  'Hunter2-Quilt',
  'Tr0ub4dor&3',
  'correcthorsebatterystaple',
  'Zx81-kLm2-Qp93-Wr47',
  'p@ss w0rd!',
  '9f86d081884c7d659a2f',
  'S3cr3t/Path',
  'yourself2024',
  'sphere-42',
];

describe('the placeholder, reference and expression tables', () => {
  const rows = [...PLACEHOLDER_SHAPES, PLACEHOLDER_INSIDE, ...REFERENCE_PATTERNS, ...EXPRESSION_PATTERNS];

  it('have an example for every row, and every example hits its own row first', () => {
    expect(rows.map((r) => r.why).sort()).toEqual(Object.keys(ROW_EXAMPLES).sort());
    for (const row of rows) {
      for (const value of ROW_EXAMPLES[row.why] ?? []) {
        expect(row.pattern.test(value), `${row.why}: ${value}`).toBe(true);
        expect(notACredentialReason(value, { unquoted: true }), value).toBeDefined();
      }
    }
  });

  it.each(REAL_VALUES.map((v) => [v] as const))('claim no real value: %s', (value) => {
    expect(notACredentialReason(value, { unquoted: true })).toBeUndefined();
    expect(placeholderReason(value)).toBeUndefined();
  });

  it('treat expressions as values when they are quoted (a literal string that reads like code)', () => {
    for (const value of ['settings.db.password', 'getenv("X")', '/run/secrets/db']) {
      expect(notACredentialReason(value, { unquoted: true }), value).toBeDefined();
      expect(notACredentialReason(value, { unquoted: false }), value).toBeUndefined();
    }
  });

  it.each([...PLACEHOLDER_WORDS].map((w) => [w] as const))('placeholder word %s, in any case and quoting', (word) => {
    for (const value of [word, word.toUpperCase(), `"${word}"`, `${word};`]) expect(placeholderReason(value), value).toBeDefined();
  });

  it.each([...NON_VALUE_WORDS].map((w) => [w] as const))('%s is no value', (word) => {
    for (const value of [word, word.toUpperCase(), `${word};`, `${word},`])
      expect(notACredentialReason(value, { unquoted: true }), value).toBe('not a value');
  });

  it('reads a type annotation through Optional[…] and a trailing ?', () => {
    for (const value of ['Optional[str]', 'Option<String>', 'string?', 'SecretStr'])
      expect(notACredentialReason(value, { unquoted: true }), value).toBe('not a value');
  });
});

describe("keyPlaceholderReason: the body of a value with a provider key's full shape", () => {
  // Issue 35 item 9: only a placeholder's shape makes a key-shaped value a placeholder, never what it spells.
  it.each([
    'IOSFODNN7EXAMPLE',
    'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
    '0'.repeat(36),
    'FAKE1234FAKE5678FAKE',
    'test0123456789abcdefTEST',
  ])('is a key: %s', (body) => {
    expect(keyPlaceholderReason(body)).toBeUndefined();
  });
  it.each(['', 'XXXXXXXXXXXXXXXX', 'xxxx1234', '****************', 'YOUR_API_KEY_HERE_1234567890', 'your-token-here', '<key>', '...'])(
    'is a placeholder: %j',
    (body) => {
      expect(keyPlaceholderReason(body)).toBeDefined();
    },
  );
  it("still lets placeholder words mark a value without a key's structure", () => {
    expect(placeholderReason('my-example-token')).toBeDefined();
    expect(placeholderReason('IOSFODNN7EXAMPLE')).toBeDefined();
  });
});

describe('repeatsName', () => {
  it('is true when the value only repeats the key or its last words', () => {
    expect(repeatsName('password', 'password')).toBe(true);
    expect(repeatsName('DB_PASSWORD', 'db_password')).toBe(true);
    expect(repeatsName('DB_PASSWORD', 'Password')).toBe(true);
    expect(repeatsName('API_KEY', 'api-key')).toBe(true);
  });
  it('is false for anything else', () => {
    expect(repeatsName('password', 'word')).toBe(false);
    expect(repeatsName('DB_PASSWORD', 'db')).toBe(false);
    expect(repeatsName('password', 'Hunter2')).toBe(false);
    expect(repeatsName('password', '!!!')).toBe(false);
  });
});

describe('isTestCredential', () => {
  it.each([
    ['test', 'test'],
    ['admin', 'admin'],
    ['guest', 'GUEST'],
    ['postgres', 'postgres'],
    ['alice', ''],
    ['user', 'password'],
    ['me', 'changeme'],
    ['bob', '****'],
    ['$USER', '$TOKEN'],
    ['deploy', '${DEPLOY_PASSWORD}'],
    ['ci', '<password>'],
  ])('%s:%s is a test credential', (user, password) => expect(isTestCredential(user, password)).toBe(true));

  it.each([
    ['alice', 'Sup3r-S3cret'],
    ['admin', 'admin123'],
    ['root', 'toor'],
    ['$USER', 'Hunter2-Quilt'],
    ['', 'hunter2'],
  ])('%s:%s is a credential', (user, password) => expect(isTestCredential(user, password)).toBe(false));
});
