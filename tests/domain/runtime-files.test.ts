import { describe, expect, it } from 'vitest';
import { corruptPathFor, mergeIgnoreLines, RUNTIME_FILES, RUNTIME_IGNORE_HEADER } from '../../src/domain/runtime-files.js';

const LINES = RUNTIME_FILES.map((k) => k.pattern);

describe('mergeIgnoreLines', () => {
  it('writes the header and every runtime line into a new .gitignore', () => {
    const merge = mergeIgnoreLines(undefined);
    expect(merge.added).toEqual(LINES);
    expect(merge.append).toBe(`${RUNTIME_IGNORE_HEADER}\n${LINES.join('\n')}\n`);
  });

  it("adds only the lines a project's .gitignore lacks, after its own, in the table's order", () => {
    const own = 'node_modules/\n  outputs/  \n# build\ndist/\n*.corrupt-*\n';
    const merge = mergeIgnoreLines(own);
    expect(merge.added).toEqual(LINES.filter((l) => l !== 'outputs/' && l !== '*.corrupt-*'));
    const merged = own + merge.append;
    expect(merged.startsWith(own)).toBe(true);
    expect(merged.split('\n').slice(5)).toEqual(['', RUNTIME_IGNORE_HEADER, ...merge.added, '']);
  });

  it('keeps CRLF line endings and ends an unterminated last line first', () => {
    const own = 'node_modules/\r\n*.log';
    const merged = own + mergeIgnoreLines(own).append;
    expect(merged.replace(/\r\n/g, '')).not.toContain('\n');
    expect(merged).toBe(`node_modules/\r\n*.log\r\n\r\n${[RUNTIME_IGNORE_HEADER, ...LINES].join('\r\n')}\r\n`);
  });

  it('changes nothing when every line is there already (a second init)', () => {
    const once = mergeIgnoreLines('dist/\n');
    expect(mergeIgnoreLines(`dist/\n${once.append}`)).toEqual({ append: '', added: [] });
  });

  it('does not count a commented-out line as present', () => {
    expect(mergeIgnoreLines('# .maestro/\n').added).toContain('.maestro/');
  });
});

describe('corruptPathFor', () => {
  it('names the moved-aside file after the original and a file-name-safe timestamp', () => {
    expect(corruptPathFor('/w/session_states/a_session.json', new Date('2025-03-04T05:06:07.089Z'))).toBe(
      '/w/session_states/a_session.json.corrupt-2025-03-04T05-06-07-089Z',
    );
  });
});
