/**
 * What maestro writes into a workspace at run time, as the `.gitignore` lines that keep it out of git.
 * `maestro init` writes (or merges) exactly these lines, and a test creates every kind of file with
 * the real code and checks that git ignores it: a new kind of runtime file belongs here.
 *
 * Left out on purpose: an artifact at the path a command names (the user asked for that file), the
 * `<name>.<timestamp>.bak` copy of a person's file found at an artifact's path (their own words,
 * which `git status` should keep showing), a cassette (`--record FILE`) and `audit export --out DIR`.
 */
export interface RuntimeFileKind {
  /** The `.gitignore` line (relative to the workspace root, where init writes the file). */
  readonly pattern: string;
  /** Which files it covers, for people reading this table. */
  readonly what: string;
}

/** Every kind of runtime data, in the order init writes the lines. */
export const RUNTIME_FILES: readonly RuntimeFileKind[] = [
  {
    pattern: '.maestro/',
    what:
      'runs (journals, checkpoints, drafts), claims, rejected commands, decisions, watcher pid files, audit logs and their heads, ' +
      'the loop policy, and the locks, temporary and corrupt files of all of these',
  },
  { pattern: 'outputs/', what: 'artifacts at the default output path, outputs/<run_id>.md' },
  { pattern: 'session_states/*.json', what: "each persona's memory, session_states/<persona>_session.json" },
  { pattern: 'session_states/*.json.lock', what: "the lock held while a persona's memory is written" },
  {
    pattern: 'session_states/archive/',
    what: 'older runs of persona memory (<persona>_history.jsonl) and the memory set aside by `session reset`',
  },
  { pattern: '*.corrupt-*', what: 'a corrupt state file moved aside, <file>.corrupt-<timestamp>, wherever maestro finds one' },
  {
    // `.<name>.<pid>.<8 hex>.tmp` (see atomicTempPath): an atomic write that a crash cut short can
    // leave one next to any file maestro replaces whole, artifacts included, so the line is not
    // anchored to a folder; the 8 hex digits keep it from matching a person's `.something.tmp`.
    pattern: `.*.[0-9]*.${'[0-9a-f]'.repeat(8)}.tmp`,
    what: 'the temporary file of an atomic write, left next to its target by a crash',
  },
];

/** The comment above the lines init adds to a `.gitignore`. */
export const RUNTIME_IGNORE_HEADER = '# maestro runtime data: never commit it (added by maestro init)';

/** Where the lock of `file` is held while it is read-modify-written (see adapters/fs/file-lock.ts). */
export function lockPathFor(file: string): string {
  return `${file}.lock`;
}

/** Where a corrupt `file` is moved aside when it is found at `at`: never overwritten, never deleted. */
export function corruptPathFor(file: string, at: Date): string {
  return `${file}.corrupt-${at.toISOString().replace(/[:.]/g, '-')}`;
}

/** What merging the runtime lines into a `.gitignore` changes: the text to append and the lines it adds. */
export interface IgnoreMerge {
  /** Appended to the file as it is ('' when every line is there already). */
  readonly append: string;
  readonly added: readonly string[];
}

/**
 * The runtime lines that `existing` (a `.gitignore`'s text, or undefined when there is none) lacks,
 * as text to append under the header. The file's own lines keep their order and bytes, and the new
 * ones use its line endings (CRLF when it has any), so an editor or git sees one consistent file.
 */
export function mergeIgnoreLines(
  existing: string | undefined,
  lines: readonly string[] = RUNTIME_FILES.map((k) => k.pattern),
): IgnoreMerge {
  const text = existing ?? '';
  const present = new Set(text.split(/\r?\n/).map((l) => l.trim()));
  const added = lines.filter((l, i) => !present.has(l) && lines.indexOf(l) === i);
  if (added.length === 0) return { append: '', added };
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  // The file's last line may lack its newline; a blank line then sets our block apart.
  const lead = text === '' ? '' : (/\r?\n$/.test(text) ? '' : eol) + eol;
  return { append: `${lead}${[RUNTIME_IGNORE_HEADER, ...added].join(eol)}${eol}`, added };
}
