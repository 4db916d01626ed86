/**
 * What a credential's value is when it is not a credential: a placeholder someone is meant to
 * replace, a reference to where the real value lives, a word that is no value at all, or an obvious
 * test credential. Every credential rule asks these tables (keyword assignments, passwords in URLs,
 * `curl -u`, `Authorization: Basic`, provider tokens), so a value is judged alike wherever it stands.
 * The tables are data (`vocabulary.json`); tests/domain/sensitive/placeholders.test.ts walks every row.
 */
import { VOCABULARY, type ValueRow } from './vocabulary.js';

/**
 * Whole values that stand for "the real one goes here", compared case-insensitively once quotes,
 * brackets and trailing punctuation are set aside. Also the passwords of the obvious test
 * credentials (`test:test`, `user:password`).
 */
export const PLACEHOLDER_WORDS: ReadonlySet<string> = new Set(VOCABULARY.placeholder_words.words);

/**
 * Placeholders by their shape, which may stand anywhere in a value (`xoxb-your-token-here`,
 * `sk-xxxx…`, `pk_<key>`): nothing in them was generated, and a key with a provider's full shape is
 * judged by these rows alone (keyPlaceholderReason). `AKIAIOSFODNN7EXAMPLE` has a key's shape and no
 * placeholder's: it is a key, even though AWS printed it in its documentation.
 */
export const PLACEHOLDER_SHAPES: readonly ValueRow[] = VOCABULARY.placeholder_shapes.rows;

/**
 * A word that marks a value someone typed as an example: only for values without a key's
 * structure (a password, a bearer token, a value under a key that mentions a credential).
 */
export const PLACEHOLDER_INSIDE: ValueRow = VOCABULARY.placeholder_inside.row;

/** References to where the value lives, quoted or not: variables, templates, tags. */
export const REFERENCE_PATTERNS: readonly ValueRow[] = VOCABULARY.reference_patterns.rows;

/** Code, when unquoted: what is assigned is an expression that yields the secret, not the secret. */
export const EXPRESSION_PATTERNS: readonly ValueRow[] = VOCABULARY.expression_patterns.rows;

/** Words that are no value: nothing, a yes or no, a type annotation (`password: string;`). */
export const NON_VALUE_WORDS: ReadonlySet<string> = new Set(VOCABULARY.non_value_words.words);

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
