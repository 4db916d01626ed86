/**
 * Passwords given in a statement rather than set under a key: a SQL statement that creates or
 * changes a user, and a command line whose flag takes the password. Shell and database histories
 * (`.mysql_history`, `.bash_history`) are full of both. Each form is one row; the value is judged
 * as every credential is (placeholders.ts), and the finding is the value alone.
 */
import { notACredentialReason } from './placeholders.js';
import { readsAsWord, type DetectionRule, type Span } from './rule.js';

/** One way a statement carries a password: the value is the named group `v`, quotes included. */
export interface StatementForm {
  /** What the form looks like, and where it is written so. */
  readonly example: string;
  readonly source: string;
  /** The words around the value also read as prose: a value with a space or that reads as a word is prose too. */
  readonly proseLike?: boolean;
}

/** A quoted value, or one inside a JSON string (`-p\"x\"`), where its quotes are escaped. */
const QUOTED = '"[^"\\n]{1,200}"|\'[^\'\\n]{1,200}\'|`[^`\\n]{1,200}`|\\\\"[^"\\\\\\n]{1,200}\\\\"';
/** An unquoted value: it ends where a shell word or a SQL statement ends, and never begins with an escape. */
const BARE = '(?!\\\\)[^\\s"\'`;|&)]{1,200}';
/** White space between SQL words; libedit's `.mysql_history` writes a space as `\040`. */
const SQL_SPACE = '(?:\\s|\\\\040){1,8}';
const SQL_NAME = '(?:\'[^\'\\n]{0,64}\'|"[^"\\n]{0,64}"|`[^`\\n]{0,64}`|[\\w$.]{1,64})';
/** A user as SQL names one: `bob`, `'bob'@'localhost'`, `"app"@"%"`. */
const SQL_USER = `${SQL_NAME}(?:@${SQL_NAME})?`;

/** A SQL keyword in any case (`identified`, `Identified`, `IDENTIFIED`), where it is no part of a longer word. */
function keyword(word: string): string {
  return `(?<![A-Za-z_])${[...word].map((c) => `[${c}${c.toLowerCase()}]`).join('')}(?![A-Za-z_])`;
}

const BY_OR_AS = `(?:${keyword('BY')}|${keyword('AS')})`;

/**
 * SQL: the statements that set a user's password (ALTER/CREATE … PASSWORD 'x' is a keyword
 * assignment). A quoted value in any case; an unquoted one (Oracle) only after the keywords in
 * capitals, as SQL is written: "identified by their e-mail" is prose.
 */
export const SQL_FORMS: readonly StatementForm[] = [
  {
    example: "CREATE USER 'app'@'%' IDENTIFIED BY 'x'; IDENTIFIED WITH caching_sha2_password BY 'x'; CREATE USER scott IDENTIFIED BY tiger",
    source:
      `(?<![A-Za-z_])IDENTIFIED${SQL_SPACE}(?:WITH${SQL_SPACE}${SQL_NAME}${SQL_SPACE})?(?:BY|AS)${SQL_SPACE}` +
      `(?:PASSWORD${SQL_SPACE}|VALUES${SQL_SPACE})?(?<v>${QUOTED}|${BARE})`,
  },
  {
    example: "create user app identified by 'x' (in lower case, as prose is written too: 'identified by \"the badge\"')",
    source:
      `${keyword('IDENTIFIED')}${SQL_SPACE}(?:${keyword('WITH')}${SQL_SPACE}${SQL_NAME}${SQL_SPACE})?${BY_OR_AS}${SQL_SPACE}` +
      `(?:${keyword('PASSWORD')}${SQL_SPACE}|${keyword('VALUES')}${SQL_SPACE})?(?<v>${QUOTED})`,
    proseLike: true,
  },
  {
    example: "SET PASSWORD FOR 'bob'@'localhost' = PASSWORD('x'); set password = 'x' (MySQL)",
    // Begins at PASSWORD, the rarer word, where sqlStarts looks; SET is looked for behind it.
    source:
      `${keyword('PASSWORD')}(?<=${keyword('SET')}${SQL_SPACE}${keyword('PASSWORD')})(?:${SQL_SPACE}${keyword('FOR')}${SQL_SPACE}${SQL_USER})?(?:${SQL_SPACE})?=(?:${SQL_SPACE})?` +
      `(?:(?:${keyword('OLD_PASSWORD')}|${keyword('PASSWORD')})\\((?:${SQL_SPACE})?)?(?<v>${QUOTED})`,
  },
];

/**
 * Command-line tools whose flag takes the password, by the flag: `glued` when the password must
 * follow the flag with no space (`mysql -p` alone asks for it, and `mysql -p app` names a database).
 */
export const PASSWORD_FLAGS: readonly { commands: string; flag: string; glued: boolean }[] = [
  {
    commands: 'mysql|mysqldump|mysqladmin|mysqlimport|mysqlcheck|mysqlshow|mysqlpump|mysqlbinlog|mariadb(?:-[a-z]+)?',
    flag: '-p',
    glued: true,
  },
  { commands: 'sshpass', flag: '-p', glued: false },
  { commands: 'redis-cli|valkey-cli', flag: '-a', glued: false },
  { commands: 'mongo|mongosh|mongodump|mongorestore|mongoexport|mongoimport', flag: '-p', glued: false },
];

/**
 * PASSWORD_FLAGS as forms: the flag and its value, among the arguments of the command (before `;`,
 * `&&`, `|`). A match begins at the space before the flag, where commandStarts looks; the command
 * is looked for behind it.
 */
export const COMMAND_FORMS: readonly StatementForm[] = PASSWORD_FLAGS.map(({ commands, flag, glued }) => ({
  example: `${commands.split('|')[0]} … ${flag}${glued ? '' : ' '}SECRET`,
  // The command is looked for behind the flag once the flag is found, so a scan tries it only there.
  source: `[ \\t]${flag}(?<=(?<![\\w.-])(?:${commands})(?:\\.exe)?(?:[ \\t][^\\n;&|]{0,256})?[ \\t]${flag})${glued ? '' : '[ \\t]{0,4}'}(?<v>${QUOTED}|(?!-)${BARE})`,
}));

/** Where a command form can begin: a space or tab, then a password flag. */
const FLAGS = [...new Set(PASSWORD_FLAGS.map((row) => row.flag))];
function commandStarts(text: string): number[] {
  const starts: number[] = [];
  for (const flag of FLAGS) {
    for (let at = text.indexOf(flag, 1); at !== -1; at = text.indexOf(flag, at + 1)) {
      if (text.charAt(at - 1) === ' ' || text.charAt(at - 1) === '\t') starts.push(at - 1);
    }
  }
  return starts.sort((a, b) => a - b);
}

/** Joins forms into one pattern, each form's value group numbered (`v0`, `v1` …). */
function joined(forms: readonly StatementForm[], flags: string): RegExp {
  return new RegExp(forms.map((form, i) => `(?:${form.source.replace('<v>', `<v${i}>`)})`).join('|'), flags);
}

/** The value's span for `forms`: a literal that is no placeholder, reference or expression (and, after prose-like words, no word). */
function selectValueOf(forms: readonly StatementForm[]): (match: string, exec: RegExpExecArray) => Span | undefined {
  return (_match, exec) => {
    const index = forms.findIndex((_, i) => exec.groups?.[`v${i}`] !== undefined);
    const raw = exec.groups?.[`v${index}`];
    const at = exec.indices?.groups?.[`v${index}`];
    if (raw === undefined || at === undefined) return undefined;
    const quotes = /^\\?["'`]/.exec(raw)?.[0].length ?? 0;
    const quoted = quotes > 0;
    const value = quoted ? raw.slice(quotes, -quotes) : raw.replace(/[;,]+$/, '');
    if (notACredentialReason(value, { unquoted: !quoted }) !== undefined) return undefined;
    if (forms[index]?.proseLike && (/\s/.test(value) || readsAsWord(value))) return undefined;
    const start = at[0] - exec.index + quotes;
    return [start, start + value.length];
  };
}

/** Where a SQL form can begin: at each `IDENTIFIED` or `PASSWORD`, in any case. */
const SQL_KEYWORD = /identified|password/gi;
function sqlStarts(text: string): number[] {
  return [...text.matchAll(SQL_KEYWORD)].map((m) => m.index);
}

/** Rules for passwords in statements. */
export const STATEMENT_RULES: readonly DetectionRule[] = [
  { category: 'PASSWORD_ASSIGNMENT', pattern: joined(SQL_FORMS, 'gd'), starts: sqlStarts, select: selectValueOf(SQL_FORMS) },
  {
    category: 'PASSWORD_ASSIGNMENT',
    pattern: joined(COMMAND_FORMS, 'gd'),
    starts: commandStarts,
    select: selectValueOf(COMMAND_FORMS),
  },
];
