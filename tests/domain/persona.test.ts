import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { parsePersonaFile, sortPersonas } from '../../src/domain/persona.js';

const file = (front: string, body = 'You are careful.') => `---\n${front}\n---\n${body}\n`;
const parseAs = (text: string, fileId = 'critic') => parsePersonaFile(text, parse, { fileId, file: `personas/${fileId}.md` });

describe('persona files', () => {
  it('parses front matter and keeps the Markdown body as the system prompt', () => {
    const parsed = parseAs(file('id: critic\nname: Critic\norder: 2\nfocus_domains: [risk]', '# Role\nFind flaws.'));
    expect(parsed).toMatchObject({
      ok: true,
      value: { id: 'critic', name: 'Critic', order: 2, privileges: ['READ_FILE'], weight: 1, prompt: '# Role\nFind flaws.' },
    });
  });

  it.each([
    ['no front matter', 'just text', 'must start with YAML front matter'],
    ['an id that differs from the file name', file('id: other\nname: X\norder: 1'), 'must match the file name "critic.md"'],
    ['an unknown key', file('id: critic\nname: X\norder: 1\ncolour: red'), 'unknown key "colour"'],
    ['a missing order', file('id: critic\nname: X'), 'order:'],
    ['an unknown privilege', file('id: critic\nname: X\norder: 1\nprivileges: [DELETE_FILE]'), 'privileges.0:'],
    // The line in the file's own numbering (the front matter starts on line 2), with the line itself.
    ['broken YAML', file('id: critic\nname: [unclosed'), 'line 3: not valid YAML in the front matter ('],
    ['an unknown key near a known one', file('id: critic\nname: X\norder: 1\nfocus_domain: [risk]'), 'did you mean "focus_domains"?'],
    ['an empty body', file('id: critic\nname: X\norder: 1', ''), 'system prompt'],
  ])('rejects %s with the problem named', (_what, text, expected) => {
    const parsed = parseAs(text);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.issues.join('\n')).toContain(expected);
  });

  it('orders by `order`, then by id, whatever the input order', () => {
    const sorted = sortPersonas([
      { id: 'b', order: 2 },
      { id: 'z', order: 1 },
      { id: 'a', order: 2 },
    ]);
    expect(sorted.map((p) => p.id)).toEqual(['z', 'a', 'b']);
  });
});
