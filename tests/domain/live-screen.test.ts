import { describe, expect, it } from 'vitest';
import { LiveScreen } from '../../src/domain/live-screen.js';
import { detectSensitive, redactSensitive } from '../../src/domain/sensitive/detector.js';
import { SENSITIVE_CORPUS } from '../fixtures/sensitive-corpus.js';

/** Streams `pieces` through a screen; returns what it released after each piece, and after the flush. */
function stream(pieces: readonly string[]): string[] {
  const screen = new LiveScreen();
  return [...pieces.map((p) => screen.push(p)), screen.flush()];
}

/** Ways a model's stream cuts a text: one piece, word by word (as the test server does), every character, fixed sizes. */
function chunkings(text: string): [string, string[]][] {
  const sized = (n: number): string[] => Array.from({ length: Math.ceil(text.length / n) }, (_, i) => text.slice(i * n, i * n + n));
  return [
    ['whole', [text]],
    ['words', text.match(/\S+\s*|\s+/g) ?? []],
    ['characters', [...text]],
    ...[2, 3, 5, 7, 13].map((n): [string, string[]] => [`${n} at a time`, sized(n)]),
  ];
}

describe('LiveScreen: a streamed reply shown live, screened', () => {
  it('releases plain prose word by word, as it arrives', () => {
    expect(stream(['The ', 'cache ', 'for ', 'billing ', 'should ', 'be ', 'Redis.'])).toEqual([
      'The ',
      'cache ',
      'for ',
      'billing ',
      'should ',
      'be ',
      '',
      'Redis.',
    ]);
  });

  it('keeps the last word until it is complete (a key cut across pieces is never shown in part)', () => {
    const key = ['AKIA', 'Q3ZT7HW2', 'LMX9RB4K'];
    expect(stream(['The key is ', key[0] as string, key[1] as string, key[2] as string, ' in the vault.'])).toEqual([
      'The key is ',
      '',
      '',
      '',
      '',
      '[REDACTED:AWS_ACCESS_KEY] in the vault.',
    ]);
  });

  it('holds the rest of a line from a word that could start something spanning several words', () => {
    expect(stream(['Call ', '+44 ', '20 ', '7946 ', '0958 ', 'today.\n', 'Then ', 'decide.'])).toEqual([
      'Call ',
      '',
      '',
      '',
      '',
      '[REDACTED:PHONE] today.\n',
      'Then ',
      '',
      'decide.',
    ]);
    // The line ends on `staple"`, which could go on in the next line: it waits for the reply's end here.
    expect(stream(['password = "correct ', 'horse battery', ' staple"\n'])).toEqual([
      'password ',
      '',
      '',
      '= "[REDACTED:PASSWORD_ASSIGNMENT]"\n',
    ]);
  });

  it('keeps a line that ends on such a word until the next line shows how it goes on', () => {
    expect(stream(['aws_secret_access_key =\n', 'Zq8Tm2Wx4Lp9Rk3Vn7Bc5Hy1Jd6Fs0Gt2Qw4Ea8U', '\nok ', 'done'])).toEqual([
      '',
      '',
      'aws_secret_access_key =\n[REDACTED:AWS_SECRET_KEY]\nok ',
      '',
      'done',
    ]);
  });

  it('keeps a private key that is still streaming under the one marker already shown', () => {
    const body = 'MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun';
    const out = stream(['-----BEGIN PRIVATE KEY-----\n', 'Then ', `${body}\n`, `${body}\n`, 'more ', 'text ']);
    expect(out.join('')).toBe(redactSensitive(`-----BEGIN PRIVATE KEY-----\nThen ${body}\n${body}\nmore text `).text);
    expect(out.join('').match(/REDACTED/g)).toHaveLength(1);
    expect(out.join('')).not.toContain(body);
  });

  it('scans each piece once: a long one-line JSON reply in small pieces costs about what it costs whole', () => {
    const line = JSON.stringify({ items: Array.from({ length: 1500 }, (_, i) => ({ id: i, note: `item ${i} costs 12.5 and has a: b` })) });
    const pieces = line.match(/[\s\S]{1,4}/g) ?? [];
    const started = performance.now();
    expect(stream(pieces).join('')).toBe(redactSensitive(line).text);
    // Scanning what is held again on every piece took 40 s here; one pass takes well under one.
    expect(performance.now() - started).toBeLessThan(5000);
  });

  it.each(SENSITIVE_CORPUS.map((e) => [e.text] as const))(
    'corpus %j, however it is cut and wherever it stands: what is shown is exactly the redacted reply',
    (text) => {
      for (const full of [text, `Before that, ${text}\nAfter this line we go on with plain words.`, `## Heading\n\n- ${text} and more\n`]) {
        const values = detectSensitive(full).map((f) => full.slice(f.start, f.end));
        for (const [how, pieces] of chunkings(full)) {
          const shown = stream(pieces).join('');
          expect(shown, how).toBe(redactSensitive(full).text);
          // Nothing a finding covers is ever shown, not even in a piece released before the finding was
          // complete: what is shown is only ever added to, so what was shown after any piece is a prefix of
          // all that was shown, and a value found in none of it was in no piece released on the way.
          for (const value of values) expect(shown.includes(value), `${how}: ${value}`).toBe(false);
        }
      }
    },
  );
});
