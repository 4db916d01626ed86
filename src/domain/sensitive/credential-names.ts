/**
 * Whether a key — the left side of `key = value`, a JSON or YAML key, a flag, an XML tag — names a
 * credential, judged on its words in any case and spelling (`Pwd`, `pAsSwOrD`, `db.pass`,
 * `PGPASSWORD`, `clientSecret`, `x-api-key`). The vocabulary is data (`vocabulary.json`); each
 * table's rows are pinned by tests/domain/sensitive/credential-names.test.ts.
 */
import { VOCABULARY } from './vocabulary.js';

/**
 * - `names`: the key names a credential; whatever it is set to (other than a placeholder or a
 *   reference) is a secret.
 * - `mentions`: the key is about a credential without being one (`csrf-token`, `publicToken`,
 *   `token_type`, `max_tokens`, `password_policy`, `auth`); its value counts only if it looks generated.
 */
export type CredentialName = 'names' | 'mentions';

/** Words that name a credential when they end a key, longest first (glued ones too: `PGPASSWORD`, `mysqlpwd`). */
export const CREDENTIAL_WORDS: readonly string[] = VOCABULARY.credential_words.words;

/** Short credential words glued to another only at a camelCase hump (`dbPass`), never inside a word (`bypass`, `compass`). */
const HUMP_ONLY: ReadonlySet<string> = new Set(VOCABULARY.credential_words.hump_only);

/**
 * `key` names a credential after one of these (`api_key`, `privateKey`, `secret_access_key`);
 * `primary_key`, `public_key` and `ssh_key` (an `ssh-rsa AAAA…` public key; a private one is a
 * PRIVATE_KEY block) do not.
 */
export const KEY_QUALIFIERS: ReadonlySet<string> = new Set(VOCABULARY.key_qualifiers.words);

/** Words after the credential word that still name its value (`password_confirmation`, `token_b64`, `secret_key_base`). */
export const VALUE_SUFFIXES: ReadonlySet<string> = new Set(VOCABULARY.value_suffixes.words);

/**
 * Words before the credential word that make it no secret: public, per-request, a count, an
 * identity assertion (`csrf-token`, `max_tokens`, `id-token: write`: an OpenID ID token is a JWT,
 * which the JWT rule finds by its shape whatever the key), or one that exists elsewhere
 * (`existingSecret: app-postgresql` names a Kubernetes Secret).
 */
export const NOT_SECRET_QUALIFIERS: ReadonlySet<string> = new Set(VOCABULARY.not_secret_qualifiers.words);

/** A key that holds one of these anywhere mentions a credential (`token_type`, `passwordHash`, `tokenizer`). */
const MENTION_STEMS = new RegExp(VOCABULARY.mentions.stems.join('|'), 'i');
/** …and so does a word that is exactly one of these (`auth`, `pw_policy`). */
const MENTION_WORDS: ReadonlySet<string> = new Set(VOCABULARY.mentions.words);

/** A segment's camelCase humps: `nextPageToken` → next, Page, Token. */
function humps(segment: string): string[] {
  return segment.split(/(?<=[a-z0-9])(?=[A-Z])/);
}

/**
 * The key's segments (split at anything but letters and digits), trailing digits and trailing
 * value words (`_value`, `Confirmation`) set aside: `DB_PASSWORD_2` → DB, PASSWORD.
 */
function keySegments(key: string): string[] {
  const segments = key.split(/[^A-Za-z0-9]+/).filter((s) => s !== '');
  const isSuffix = (word: string | undefined): boolean =>
    word !== undefined && (VALUE_SUFFIXES.has(word.toLowerCase()) || /^\d+$/.test(word));
  while (segments.length > 1 && isSuffix(segments.at(-1))) segments.pop();
  const lastHumps = humps(segments.at(-1) ?? '');
  if (lastHumps.length > 1 && isSuffix(lastHumps.at(-1))) segments[segments.length - 1] = lastHumps.slice(0, -1).join('');
  if (segments.length > 0) segments[segments.length - 1] = (segments.at(-1) ?? '').replace(/\d+$/, '');
  return segments.filter((s) => s !== '');
}

/** The part of `segment` before the credential word it ends with, or undefined when it ends with none. */
function beforeCredentialWord(segment: string): string | undefined {
  const lower = segment.toLowerCase();
  for (const word of CREDENTIAL_WORDS) {
    if (!lower.endsWith(word)) continue;
    const rest = segment.slice(0, segment.length - word.length);
    const atHump = rest === '' || (/[a-z0-9]$/.test(rest) && /^[A-Z]/.test(segment.slice(rest.length)));
    if (!HUMP_ONLY.has(word) || atHump) return rest;
  }
  // A glued `<qualifier>key`: apikey, secretAccessKey, privatekey (not monkey, publickey).
  if (lower.endsWith('key')) {
    const rest = lower.slice(0, -3);
    const qualifier = [...KEY_QUALIFIERS].find((q) => rest.endsWith(q));
    if (qualifier !== undefined) return segment.slice(0, rest.length - qualifier.length);
  }
  return undefined;
}

/** The words before the credential word that ends the key, or undefined when the key does not end with one. */
function wordsBeforeCredential(segments: readonly string[]): string[] | undefined {
  const last = segments.at(-1);
  if (last === undefined) return undefined;
  const earlier = segments.slice(0, -1);
  if (last.toLowerCase() === 'key') {
    const qualifier = earlier.at(-1);
    return qualifier !== undefined && KEY_QUALIFIERS.has(qualifier.toLowerCase()) ? earlier.slice(0, -1) : undefined;
  }
  const rest = beforeCredentialWord(last);
  return rest === undefined ? undefined : [...earlier, ...(rest === '' ? [] : humps(rest))];
}

function mentionsCredential(segments: readonly string[]): boolean {
  return segments.some((segment, i) => {
    const previous = segments[i - 1]?.toLowerCase();
    if (segment.toLowerCase() === 'key' && previous !== undefined && KEY_QUALIFIERS.has(previous)) return true;
    return MENTION_STEMS.test(segment) || humps(segment).some((h) => MENTION_WORDS.has(h.toLowerCase()));
  });
}

/** Whether `key` names a credential, only mentions one, or neither (undefined). */
export function credentialName(key: string): CredentialName | undefined {
  const segments = keySegments(key);
  const before = wordsBeforeCredential(segments);
  if (before !== undefined) return before.some((w) => NOT_SECRET_QUALIFIERS.has(w.toLowerCase())) ? 'mentions' : 'names';
  return mentionsCredential(segments) ? 'mentions' : undefined;
}
