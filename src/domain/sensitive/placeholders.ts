/**
 * What a credential's value is when it is not a credential: a placeholder someone is meant to
 * replace, a reference to where the real value lives, a word that is no value at all, or an obvious
 * test credential. Every credential rule asks these tables (keyword assignments, passwords in URLs,
 * `curl -u`, `Authorization: Basic`, provider tokens), so a value is judged alike wherever it stands.
 * The tables are data; tests/domain/sensitive/placeholders.test.ts walks every row.
 */

/** One row of a table: why a value is not a credential, and how to recognise it. */
export interface ValueRow {
  readonly why: string;
  readonly pattern: RegExp;
}

/**
 * Whole values that stand for "the real one goes here", compared case-insensitively once quotes,
 * brackets and trailing punctuation are set aside. Also the passwords of the obvious test
 * credentials (`test:test`, `user:password`).
 */
export const PLACEHOLDER_WORDS: ReadonlySet<string> = new Set([
  'changeme',
  'change_me',
  'change-me',
  'changeit',
  'replaceme',
  'replace_me',
  'replace-me',
  'placeholder',
  'example',
  'sample',
  'dummy',
  'test',
  'testing',
  'demo',
  'todo',
  'tbd',
  'fixme',
  'unset',
  'notset',
  'not_set',
  'n/a',
  'password',
  'passwd',
  'pass',
  'pwd',
  'secret',
  'token',
  'apikey',
  'api_key',
  'api-key',
  'key',
  'value',
  'redacted',
  'hidden',
  'masked',
  'foo',
  'bar',
  'baz',
  'foobar',
  'empty',
  'blank',
]);

/** What `your…` is glued to in a placeholder (`yourkey`, `YourApiToken`); `yourself` is no placeholder. */
const YOUR_NOUNS = 'key|token|secret|pass|pwd|user|name|id|app|org|account|project|client|access';

/**
 * Placeholders by their shape, which may stand anywhere in a value (`xoxb-your-token-here`,
 * `sk-xxxx…`, `pk_<key>`): nothing in them was generated, and a key with a provider's full shape is
 * judged by these rows alone (keyPlaceholderReason). `AKIAIOSFODNN7EXAMPLE` has a key's shape and no
 * placeholder's: it is a key, even though AWS printed it in its documentation.
 */
export const PLACEHOLDER_SHAPES: readonly ValueRow[] = [
  { why: 'empty', pattern: /^\s*$/ },
  { why: 'a mask (xxxx, ****, ••••, ...)', pattern: /x{4,}|\*{3,}|•{3,}|\.{3,}|…/i },
  { why: 'a mask of one repeated character', pattern: /^([xX*•#_-])\1+$/ },
  {
    why: 'an instruction to the reader (your-…, …-here)',
    pattern: new RegExp(`(?:^|[^a-z])your(?:[^a-z]|$|(?:api)?(?:${YOUR_NOUNS}))|[-_ ]here$`, 'i'),
  },
  // A bare value ends at a space, so `<generate one with openssl>` reaches a rule as `<generate`.
  { why: 'an angle-bracketed name (<your-key>)', pattern: /<[^<>]*>|^<[A-Za-z]/ },
];

/**
 * A word that marks a value someone typed as an example: only for values without a key's
 * structure (a password, a bearer token, a value under a key that mentions a credential).
 */
export const PLACEHOLDER_INSIDE: ValueRow = {
  why: 'a placeholder word inside (example, changeme, placeholder, dummy, redacted)',
  pattern: /example|change[-_]?(?:me|it)|replace[-_]?me|placeholder|dummy|redacted/i,
};

/** References to where the value lives, quoted or not: variables, templates, tags. */
export const REFERENCE_PATTERNS: readonly ValueRow[] = [
  {
    why: 'a shell or environment variable ($VAR, ${VAR}, %VAR%, $(cmd))',
    // `^\$\{`: a bare value ends at a space, so `${DB_PASSWORD:?set it}` reaches a rule as `${DB_PASSWORD:?set`.
    pattern: /^\$\{?[\w.:-]+\}?$|\$\{[^}]*\}|^\$\{|^%\w+%$|^\$\(/,
  },
  { why: 'a template ({{ var }}, {% … %}, ${{ secrets.X }})', pattern: /\{\{.*\}\}|\{%.*%\}/ },
  { why: 'a YAML tag (!vault, !Ref)', pattern: /^![A-Za-z]/ },
  { why: 'a format field (%s, %(password)s, {password}, {0})', pattern: /^%(?:\(\w+\))?s$|^\{\w*\}$/ },
];

/** Code, when unquoted: what is assigned is an expression that yields the secret, not the secret. */
export const EXPRESSION_PATTERNS: readonly ValueRow[] = [
  {
    why: 'a keyword that starts an expression (await getToken(), new Secret(…))',
    pattern: /^(?:await|yield|new|typeof|lambda|function|async|require|import)$/,
  },
  { why: 'a call (getenv("X"), input())', pattern: /^[A-Za-z_$][\w.$]*\(/ },
  { why: 'an attribute path (settings.db.password, args.token)', pattern: /^[A-Za-z_$][\w$]*(?:\??\.[A-Za-z_$][\w$]*)+[;,]?$/ },
  { why: 'an index into a lookup (ENV["X"], os.environ[…])', pattern: /^[A-Za-z_$][\w.$]*\[/ },
  { why: 'a bind parameter (:password, @pw, ?)', pattern: /^[:@][A-Za-z_]\w*$|^\?$/ },
  { why: 'a file path (/run/secrets/db, ~/.pgpass, C:\\keys\\db)', pattern: /^(?:~|\.{1,2})\/\S+$|^\/[\w.-]+\/[\w./-]+$|^[A-Za-z]:\\/ },
];

/** Words that are no value: nothing, a yes or no, a type annotation (`password: string;`). */
export const NON_VALUE_WORDS: ReadonlySet<string> = new Set([
  'null',
  'nil',
  'none',
  'undefined',
  'true',
  'false',
  'yes',
  'no',
  'on',
  'off',
  'enabled',
  'disabled',
  'required',
  'optional',
  'string',
  'str',
  'number',
  'int',
  'integer',
  'bool',
  'boolean',
  'bytes',
  'any',
  'unknown',
  'object',
  'char',
  'secretstr',
  'secretstring',
  'securestring',
]);

/** The value with quotes, brackets around a type (`Optional[str]`) and trailing `;` or `,` set aside, lower case. */
function bareWord(value: string): string {
  return value
    .trim()
    .replace(/[;,]+$/, '')
    .replace(/^["'`]+|["'`]+$/g, '')
    .replace(/^(?:optional|option|nullable)[[<](\w+)[\]>]$/i, '$1')
    .replace(/\?$/, '')
    .toLowerCase();
}

/**
 * Why a value with no key's structure (a password, an opaque token) is a placeholder to replace:
 * a placeholder word, whole or inside, or a placeholder's shape. Undefined when it is not one.
 */
export function placeholderReason(value: string): string | undefined {
  if (PLACEHOLDER_WORDS.has(bareWord(value))) return 'a placeholder word';
  if (PLACEHOLDER_INSIDE.pattern.test(value)) return PLACEHOLDER_INSIDE.why;
  return keyPlaceholderReason(value);
}

/**
 * Why the body of a value that has a provider key's full shape (prefix, alphabet, length) is
 * nonetheless a placeholder: only a placeholder's shape (a mask, an instruction, an empty or
 * bracketed name) counts, never a word in it (`EXAMPLE`, `FAKE`, `test`) or zeros.
 */
export function keyPlaceholderReason(body: string): string | undefined {
  return PLACEHOLDER_SHAPES.find((row) => row.pattern.test(body))?.why;
}

/**
 * Why `value` is not a credential at all (a placeholder, a reference, an expression when
 * `unquoted`, a word that is no value), or undefined when it may be one.
 */
export function notACredentialReason(value: string, options: { unquoted: boolean }): string | undefined {
  const trimmed = value.trim();
  if (NON_VALUE_WORDS.has(bareWord(trimmed))) return 'not a value';
  const placeholder = placeholderReason(trimmed);
  if (placeholder) return placeholder;
  const rows = options.unquoted ? [...REFERENCE_PATTERNS, ...EXPRESSION_PATTERNS] : REFERENCE_PATTERNS;
  return rows.find((row) => row.pattern.test(trimmed))?.why;
}

/** Letters and digits only, lower case: `DB_PASSWORD`, `db-password` and `dbPassword` compare equal. */
function folded(text: string): string {
  return text.toLowerCase().replace(/[^a-z0-9]/g, '');
}

/**
 * True when `value` only repeats `key` or its last words (`password=password`, `API_KEY=api_key`,
 * `DB_PASSWORD: Password`): a stand-in, not a value.
 */
export function repeatsName(key: string, value: string): boolean {
  const segments = key.split(/[^A-Za-z0-9]+/).filter((s) => s !== '');
  const wanted = folded(value);
  return wanted !== '' && segments.some((_, i) => folded(segments.slice(i).join('')) === wanted);
}

/**
 * True for a user and password that are an obvious test or default credential, not a secret: the
 * password equals the user (`admin:admin`, `guest:guest`, `test:test`), or it is a placeholder
 * (`user:password`, `me:changeme`, `$USER:$TOKEN`, `bob:****`). Such a pair guards nothing worth
 * stopping a run for; anything else is a credential.
 */
export function isTestCredential(user: string, password: string): boolean {
  if (password.trim() === '') return true;
  if (folded(user) !== '' && folded(user) === folded(password)) return true;
  return notACredentialReason(password, { unquoted: false }) !== undefined;
}
