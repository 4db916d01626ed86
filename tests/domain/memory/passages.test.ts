import { describe, expect, it } from 'vitest';
import { legacyPassages, renderPassage, runPassages } from '../../../src/domain/memory/passages.js';
import { passagesOf } from '../../../src/domain/memory/text.js';

const step = (persona: string, kind: string, prompt: string, reply: string) => ({ persona, kind, prompt, reply });

describe("a run's passages: what a persona said and was shown", () => {
  it('keeps its own replies (a verdict as one line) and the replies of others found in its prompts, nothing else', () => {
    const steps = [
      step('alpha', 'turn', 'BRIEFING', 'Redis fits the billing service.'),
      step(
        'beta',
        'turn',
        'BRIEFING\n--- Since you last spoke ---\n[alpha, round 1]\nRedis fits the billing service.',
        'Expire invoices after 5 minutes.',
      ),
      step('gamma', 'turn', 'BRIEFING', 'Gamma was never shown to alpha.'),
      step('alpha', 'turn', '--- Since you last spoke ---\n[beta, round 1]\nExpire invoices after 5 minutes.', 'Agreed.'),
      step('alpha', 'verdict', 'verdict please', '{"action": "proceed", "confidence": 0.8, "rationale": "sound"}'),
      step('beta', 'verdict', 'verdict please', 'not json'),
    ];
    const passages = runPassages({ runId: 'r1', at: '2026-11-20T09:00:00.000Z', persona: 'alpha', task: 'Choose the cache', steps });
    expect(passages.map((p) => [p.from, p.text])).toEqual([
      ['self', 'Redis fits the billing service.'],
      ['self', 'Agreed.'],
      ['self', 'Verdict: proceed (confidence 0.80): sound'],
      ['beta', 'Expire invoices after 5 minutes.'],
    ]);
    expect(passages.every((p) => p.run_id === 'r1' && p.at === '2026-11-20T09:00:00.000Z')).toBe(true);
    expect(renderPassage(passages[3]!)).toBe('- (beta said, 2026-11-20) Expire invoices after 5 minutes.');
  });

  it('keeps a task longer than its summary holds as passages of its own, screened as asked', () => {
    const task = `Migrate the ledger. ${'The ledger holds every invoice since 2019 and must stay readable during the move. '.repeat(3)}`;
    const passages = runPassages({ runId: 'r1', at: 'x', persona: 'alpha', task, steps: [], screen: (t) => t.replace('ledger', 'LEDGER') });
    expect(passages.length).toBeGreaterThan(1);
    expect(passages.every((p) => p.from === 'task')).toBe(true);
    expect(passages[0]?.text.startsWith('Migrate the LEDGER.')).toBe(true);
  });

  it('cuts text into passages of at most 200 characters at sentence ends, Markdown marks out, nothing without words', () => {
    const text = [
      '## Risks',
      '',
      `- **Rollback** is untested. ${'The replica lags by minutes at peak. '.repeat(8)}`,
      '',
      '---',
      '',
      'Done.',
    ].join('\n');
    const pieces = passagesOf(text);
    expect(pieces.every((p) => p.length <= 200)).toBe(true);
    expect(pieces[0]?.startsWith('Risks Rollback is untested. The replica lags')).toBe(true);
    expect(pieces.join(' ')).not.toMatch(/[#*]|---/);
    expect(pieces.at(-1)).toMatch(/Done\.$/);
  });

  it('reads a version-2 message: a reply as it is, a prompt as what was shown since the persona last spoke, without files and labels', () => {
    const shown = legacyPassages({
      role: 'user',
      content: [
        '=== TASK BRIEFING ===\n\nTASK: Choose the cache',
        '--- Since you last spoke ---\n[beta, round 1]\nMemcached is cheaper.\nCONTEXT_PROVIDED (requested by beta): READ_FILE(a.md) — 10 bytes\n<<<BEGIN a.md\nsecret plan\nEND a.md>>>',
        'Round 2 of 3: give your analysis or next step.',
      ].join('\n\n'),
      run_id: 'r0',
      ts: '2026-01-01T00:00:00.000Z',
    });
    expect(shown.map((p) => [p.from, p.text])).toEqual([['council', 'Memcached is cheaper.']]);
    expect(legacyPassages({ role: 'user', content: '=== TASK BRIEFING ===\n\nTASK: x', run_id: 'r0', ts: 't' })).toEqual([]);
  });
});
