/**
 * Keyword assignments, in the style of detect-secrets' keyword detector: a key that names a
 * credential, then a value, in every form a task, a file or a reply writes one (ASSIGNMENT_FORMS).
 * Which keys count is credential-names.ts; which values do not is placeholders.ts. The finding is
 * the value alone.
 */
import { asciiClass, runStartBefore } from './anchors.js';
import { credentialName, type CredentialName } from './credential-names.js';
import { notACredentialReason, repeatsName } from './placeholders.js';
import { looksSecret, readsAsWord, type DetectionRule, type Span } from './rule.js';

/**
 * How sure the form is that a value is being set:
 * - `explicit`: `=`, a quoted key or value, a flag, a tag: the value is set;
 * - `label`: `key: value` with a bare value, which sets a value at the start of a line (YAML,
 *   headers) but is just as often prose elsewhere (`Reset your password: click here`), and a
 *   call's name and value (`getSecret('db-password', 'prod')` may select as well as set);
 * - `prose`: `the password is x`, a sentence wherever it stands.
 */
type Context = 'explicit' | 'label' | 'prose';

interface AssignmentForm {
  /** What the form looks like, and where it is written so. */
  readonly example: string;
  readonly context: Context;
  /** Source with named groups `k` (the key) and `v` (the value, quotes included); numbered when joined. */
  readonly source: string;
}

/** Characters of a key (`db.password`, `x-api-key`, `--token`). */
const K = '[A-Za-z0-9_.-]';
/** Every credential key holds one of these, in any case (credential-names.ts decides which keys count). */
const KEY_WORDS = 'pass|pw|secret|token|key|auth|credential';
/** A run of key characters. */
const KEY_RUN = `${K}{1,64}`;
/** The same, optionally after a first word and a space (`API key`, `Client Secret`). */
const KEY = `(?:[A-Za-z][A-Za-z0-9]{0,15} )?${K}{1,64}`;
/**
 * Checked once where a match may begin, before the forms are tried: a key word follows within a
 * key's reach (after an opening quote or `<`, and a first word). Keeps the regex to keys that may
 * name a credential without each form looking for itself.
 */
const HOLDS_KEY_WORD = `(?=["'<]?(?:[A-Za-z][A-Za-z0-9]{0,15} )?${K}{0,63}?(?:${KEY_WORDS}))`;
const QUOTED = '"[^"\\n]{0,200}"|\'[^\'\\n]{0,200}\'|`[^`\\n]{0,200}`';
/**
 * An unquoted value ends at white space, a quote, or an escaped line break or tab (`\n` in JSON or
 * a log line); every other printable character may be part of it (`Tr0ub4dor&3`, `Ab1#cd!x`).
 */
const ESCAPED_BREAK = '\\\\[nrt]';
/**
 * What ends a value in code, a query or a connection string (`,` `;` `&` and closing brackets)
 * ends it only where nothing of the value follows: at white space, a quote, the end, another
 * such character, or the next `key=` (`&next=`, `;Encrypt=`, `,user=`); a closing bracket ends it
 * too unless a letter or digit follows (`getToken(x).then`, `f(token=t)`). Elsewhere it is part of
 * the value (`ab&cd3`, `Ab1;xy`, `pa)ss9`).
 */
const STOPS = ',;&)}\\]';
const NEXT_KEY = `[\\w.-]{1,64}(?:[ \\t][\\w.-]{1,64})?[ \\t]?=`;
const BARE = `(?:(?!${ESCAPED_BREAK})(?:[^\\s"'\`${STOPS}]|[,;&](?![\\s"'\`${STOPS}]|$|${NEXT_KEY})|[)}\\]](?=[A-Za-z0-9])(?!${NEXT_KEY}))){1,200}`;
/**
 * A bare value after a label or in a sentence: up to white space or a quote. A `#` is part of it
 * (`Ab1#cdefgh9Z`, `#Xy7kL9qP2wZ`): YAML starts a comment only after white space, and a `#` right
 * after the label is as likely a password's first character as a comment's; a lone `#` (`password:
 * # set in CI`) is too short to be a value. A quote inside the run is part of it too (`Ab1"cd9Z`,
 * `Ab1'cd9Z`), but not one that ends it (`"password: x",`) nor a contraction's (`it's`, `don't`).
 */
const INNER_QUOTE = `(?<=[^\\s"'\`])(?:["\`]|'(?![A-Za-z]{1,2}(?![^\\s.,;:!?)])))(?![\\s"'\`,;)}\\]]|$)`;
const BARE_LABEL = `(?:(?!${ESCAPED_BREAK})(?:[^\\s"'\`]|${INNER_QUOTE})){1,200}`;
const BOLD = '(?:\\*\\*|__)?';
/**
 * What or whom a credential is for, in a sentence (`password for prod`, `token of the CI bot`,
 * `password for admin@example.com`): one to four words, none holding a colon (the label's end).
 */
const OWNER = `(?:[ \\t]{1,4}(?:for|of|to)(?:[ \\t]{1,4}[^\\s:]{1,64}){1,4})`;

/** The forms a credential is written in. Each is one alternative of the rule's pattern. */
export const ASSIGNMENT_FORMS: readonly AssignmentForm[] = [
  {
    // code, .env, shell, .properties, INI, URL queries, connection strings
    example: 'DB_PASSWORD=x, Pwd = x, key := "x", key => \'x\', ?token=x&, Password=x;',
    context: 'explicit',
    source: `(?<![\\w.-])["']?(?<k>${KEY})["']?[ \\t]{0,4}(?:=>|:=|=(?!=))[ \\t]{0,4}(?<v>${QUOTED}|${BARE})`,
  },
  {
    example: '$cfg[\'password\'] = \'x\', os.environ["API_KEY"] = "x" (an index assigned: PHP, Python, Ruby)',
    context: 'explicit',
    source: `(?<=\\[)["'](?<k>${KEY_RUN})["']\\][ \\t]{0,4}=(?![=>])[ \\t]{0,4}(?<v>${QUOTED}|${BARE})`,
  },
  {
    example: "define('DB_PASSWORD', 'x') (PHP's constants, aligned with any number of spaces)",
    context: 'explicit',
    source: `(?<=(?<![\\w$])(?:define|DEFINE)\\([ \\t]{0,8})["'](?<k>${KEY_RUN})["'][ \\t]{0,4},[ \\t]{0,32}(?<v>${QUOTED})(?=[ \\t]{0,8}\\))`,
  },
  {
    example: 'setdefault("SECRET_KEY", "x"), getenv(\'TOKEN\', \'x\') (a call with a name and a value: a default, a setting)',
    context: 'label',
    source: `(?<=[\\w$]\\([ \\t]{0,8})["'](?<k>${KEY_RUN})["'][ \\t]{0,4},[ \\t]{0,32}(?<v>${QUOTED})(?=[ \\t]{0,8}\\))`,
  },
  {
    example: '"password": "x", \'api_key\': x (JSON, Python, JavaScript)',
    context: 'explicit',
    source: `["'](?<k>${KEY})["'][ \\t]{0,4}:[ \\t]{0,4}(?<v>${QUOTED}|[^\\s"',}\\]]{1,200})`,
  },
  {
    example: 'password: "x" (YAML, JavaScript)',
    context: 'explicit',
    source: `(?<![\\w.-])(?<k>${KEY})${BOLD}:${BOLD}[ \\t]{0,4}(?<v>${QUOTED})`,
  },
  {
    example: 'password: x, **Password:** x (YAML, headers, labels)',
    context: 'label',
    source: `(?<![\\w.-])(?<k>${KEY})${BOLD}:${BOLD}[ \\t]{1,4}(?<v>${BARE_LABEL})`,
  },
  {
    example: '| password | x | (a Markdown table row)',
    context: 'label',
    source: `(?<=\\|[ \\t]{0,8})(?<k>${KEY})[ \\t]{0,8}\\|[ \\t]{0,8}(?<v>${QUOTED}|[^|\\s\`]{1,200})[ \\t]{0,8}(?=\\|)`,
  },
  {
    example: '<password>x</password> (XML)',
    context: 'explicit',
    source: `<(?<k>${KEY_RUN})>(?<v>[^<\\n]{1,200})</\\k<k>>`,
  },
  {
    example: 'WITH PASSWORD \'x\', the password "x" (SQL, prose: a quoted value after the key)',
    context: 'explicit',
    source: `(?<![\\w.-])(?<k>${KEY_RUN})[ \\t]{1,4}(?<v>"[^"\\n]{1,200}"|'[^'\\n]{1,200}')`,
  },
  {
    example: 'the wifi password is x, the password for prod is x (prose)',
    context: 'prose',
    source: `(?<![\\w.-])(?<k>${KEY})${OWNER}?[ \\t]{1,4}(?:is|was)(?:[ \\t]{0,4}:)?[ \\t]{1,4}(?<v>${QUOTED}|${BARE_LABEL})`,
  },
  {
    example: 'Password for prod: x, the token for the CI bot: x (prose: what the credential is for, then a label)',
    context: 'prose',
    source: `(?<![\\w.-])(?<k>${KEY})${OWNER}${BOLD}:${BOLD}[ \\t]{1,4}(?<v>${QUOTED}|${BARE_LABEL})`,
  },
  {
    example: '--password x (command-line flags)',
    context: 'explicit',
    source: `(?<![\\w.-])--(?<k>${KEY_RUN})[ \\t]{1,4}(?<v>${QUOTED}|(?!-)${BARE})`,
  },
];

const ASSIGNMENT = new RegExp(
  `${HOLDS_KEY_WORD}(?:${ASSIGNMENT_FORMS.map((form, i) => form.source.replace(/<k>/g, `<k${i}>`).replace(/<v>/g, `<v${i}>`)).join('|')})`,
  'gid', // d: the value's offsets, whatever surrounds it
);

/** The named groups of each form in the joined pattern: `k0`/`v0` are the first form's key and value. */
const KEY_GROUPS = ASSIGNMENT_FORMS.map((_, i) => `k${i}`);
const VALUE_GROUPS = ASSIGNMENT_FORMS.map((_, i) => `v${i}`);

const KEY_WORD = /p(?:ass|w)|secret|token|key|auth|credential/gi; // KEY_WORDS, as a trie
const isKeyChar = asciiClass(/[A-Za-z0-9_.-]/);
const isAlphanumeric = asciiClass(/[A-Za-z0-9]/);
const BEFORE_KEY = new Set(['"', "'", '<']);

/**
 * Where an assignment can begin, from each key word (found overlapping, so every spelling is
 * seen): the start of the run of key characters holding it, the quote or `<` before that, and the
 * first word before it when a single space separates them (`API key`), with its quote.
 */
function assignmentStarts(text: string): number[] {
  const starts: number[] = [];
  KEY_WORD.lastIndex = 0;
  for (let word = KEY_WORD.exec(text); word; word = KEY_WORD.exec(text)) {
    const key = runStartBefore(text, word.index, isKeyChar, 63);
    if (key !== -1) {
      starts.push(key);
      if (BEFORE_KEY.has(text.charAt(key - 1))) starts.push(key - 1);
      const first = text.charAt(key - 1) === ' ' ? runStartBefore(text, key - 1, isAlphanumeric, 16) : -1;
      if (first !== -1 && first < key - 1) {
        starts.push(first);
        if (BEFORE_KEY.has(text.charAt(first - 1))) starts.push(first - 1);
      }
    }
    KEY_WORD.lastIndex = word.index + 1;
  }
  return starts.sort((a, b) => a - b);
}

/** What may stand between the start of a line and a key that starts it: indentation, a list or quote marker, bold. */
const LINE_PREFIX = /(?:^|\n)[ \t]*(?:(?:[-*+>•]|\d{1,3}[.)])[ \t]+)*(?:\*\*|__)?$/;

function startsLine(input: string, index: number): boolean {
  return LINE_PREFIX.test(input.slice(Math.max(0, index - 64), index));
}

/** A URL with no user or password in it. */
const LINK = /^[A-Za-z][A-Za-z0-9+.-]{1,31}:\/\/[^\s@]*$/;

/**
 * Whether `value`, set under `key` in this context, is a credential: not a placeholder, a
 * reference or the key's own name; under a key that only mentions a credential it must look
 * generated; after a label mid-line or in a sentence it must not read as a word.
 */
function isAssignedCredential(value: string, assigned: { key: string; name: CredentialName; context: Context; quoted: boolean }): boolean {
  if (value.length < 4 || repeatsName(assigned.key, value)) return false;
  if (notACredentialReason(value, { unquoted: !assigned.quoted }) !== undefined) return false;
  if (assigned.name === 'mentions') return looksSecret(value);
  // After a label mid-line or in a sentence, a link says where to go (`Reset your password:
  // https://…/reset#form`), not what to type; one holding a password is URL_PASSWORD's.
  if (assigned.context !== 'explicit' && LINK.test(value)) return false;
  // In prose, a word is prose, and so is a number too short for a PIN (`8-64`).
  return assigned.context === 'explicit' || (!readsAsWord(value) && (/\p{L}/u.test(value) || /\d{6}/.test(value)));
}

/** A key right after an escaped line break or tab (`\nDB_PASSWORD` in JSON or a log line), without the escape's letter. */
function unescapedKey(key: string, before: string): string {
  return before === '\\' && /^[nrt][A-Za-z0-9]/.test(key) ? key.slice(1) : key;
}

/** credentialName, remembered: the same few keys come back all the time. */
const NAMES = new Map<string, CredentialName | undefined>();

function nameOf(key: string): CredentialName | undefined {
  if (NAMES.has(key)) return NAMES.get(key);
  if (NAMES.size >= 4096) NAMES.clear();
  const name = credentialName(key);
  NAMES.set(key, name);
  return name;
}

function selectAssignment(match: string, exec: RegExpExecArray): Span | undefined {
  const index = VALUE_GROUPS.findIndex((group) => exec.groups?.[group] !== undefined);
  const form = ASSIGNMENT_FORMS[index];
  const written = exec.groups?.[KEY_GROUPS[index] ?? ''];
  const raw = exec.groups?.[VALUE_GROUPS[index] ?? ''];
  if (!form || written === undefined || raw === undefined) return undefined;
  const key = unescapedKey(written, exec.input.charAt(exec.index + match.indexOf(written) - 1));
  const name = nameOf(key);
  if (!name) return undefined;
  const quoted = raw.length >= 2 && /^["'`]/.test(raw) && raw.endsWith(raw.charAt(0));
  const inner = quoted ? raw.slice(1, -1) : raw;
  // A bare value in a label or a sentence ends before the sentence's punctuation (`password: x1y2, then …`).
  const value = form.context !== 'explicit' && !quoted ? inner.replace(/(?:[,;)]|\.$)+$/, '') : inner.trim();
  const rawStart = (exec.indices?.groups?.[VALUE_GROUPS[index] ?? '']?.[0] ?? exec.index + match.lastIndexOf(raw)) - exec.index;
  const start = rawStart + (quoted ? 1 : 0) + inner.indexOf(value);
  // A one-word key that starts its line is YAML or a header; `The secret: …` is a sentence.
  const context = form.context === 'label' && !key.includes(' ') && startsLine(exec.input, exec.index) ? 'explicit' : form.context;
  return isAssignedCredential(value, { key, name, context, quoted }) ? [start, start + value.length] : undefined;
}

/** The keyword-assignment rule. */
export const ASSIGNMENT_RULE: DetectionRule = {
  category: 'PASSWORD_ASSIGNMENT',
  pattern: ASSIGNMENT,
  starts: assignmentStarts,
  select: selectAssignment,
};
