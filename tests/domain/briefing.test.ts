import { describe, expect, it } from 'vitest';
import { composeBriefing } from '../../src/domain/briefing.js';
import { BRIEFING_HEADER } from '../../src/domain/prompts.js';
import { aKnowledgeResult } from '../fixtures/domain-builders.js';

const input = (path: string, content: string, over: Parameters<typeof aKnowledgeResult>[0] = {}) => {
  const { action: _a, argument: _b, ...result } = aKnowledgeResult({ path, content, ...over });
  return { path, result };
};

describe('composeBriefing: the first message every persona gets', () => {
  it('starts with the briefing header and the task, trimmed, and says when there are no input artifacts', () => {
    expect(composeBriefing({ task: '  Choose the queue for billing.\n\n', inputs: [] })).toBe(
      `${BRIEFING_HEADER}\n\nTASK: Choose the queue for billing.\n\nNo input artifacts were provided.`,
    );
  });

  it('gives each input artifact whole, between markers that name its path, in the order given', () => {
    const text = composeBriefing({
      task: 'Review',
      inputs: [input('docs/b.md', 'second file'), input('docs/a.md', 'first line\nsecond line')],
    });
    expect(text).toContain('Input artifacts (provided by the person who gave the task):');
    expect(text).toContain('- INPUT ARTIFACT: docs/a.md\n<<<BEGIN docs/a.md\nfirst line\nsecond line\nEND docs/a.md>>>');
    expect(text.indexOf('docs/b.md')).toBeLessThan(text.indexOf('docs/a.md'));
    expect(text).not.toContain('No input artifacts');
  });

  it('says when an artifact was cut short, with the reason the reader gave', () => {
    const text = composeBriefing({
      task: 'Review',
      inputs: [input('big.log', 'head of the file', { truncated: true, message: 'truncated to 65536 bytes' })],
    });
    expect(text).toContain('END big.log>>> (truncated to 65536 bytes)');
  });

  it('does not add a note to a whole artifact, and shows an artifact without content as empty', () => {
    const text = composeBriefing({ task: 'Review', inputs: [input('empty.md', '', { content: undefined, message: 'ok' })] });
    expect(text).toContain('<<<BEGIN empty.md\n\nEND empty.md>>>');
    expect(text).not.toContain('(ok)');
  });
});
