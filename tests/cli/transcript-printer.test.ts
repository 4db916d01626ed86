import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { Chalk } from 'chalk';
import { describe, expect, it } from 'vitest';
import { TRANSCRIPT_KINDS, type TranscriptEvent } from '../../src/cli/transcript-feed.js';
import { REPO_ROOT } from '../fakes/fixtures.js';
import { TranscriptPrinter } from '../../src/cli/transcript-printer.js';

const RUN = '20260101T000000Z-abcdef';

/** A stream that records each write separately, so tests see what was written when. */
function recorder(): { stream: NodeJS.WritableStream; writes: string[]; text: () => string } {
  const writes: string[] = [];
  const stream = { write: (s: string) => (writes.push(s), true) } as unknown as NodeJS.WritableStream;
  return { stream, writes, text: () => writes.join('') };
}

function printer(live: boolean): { print: (e: TranscriptEvent) => void; writes: string[]; text: () => string; endLine: () => void } {
  const r = recorder();
  const p = new TranscriptPrinter(r.stream, { chalk: new Chalk({ level: 0 }), live });
  return { print: (e) => p.print(e), writes: r.writes, text: r.text, endLine: () => p.endLine() };
}

const started = (persona: string, step = 'assessment'): TranscriptEvent => ({
  kind: 'step_started',
  run_id: RUN,
  step_id: `${step}:${persona}`,
  step,
  persona,
  round: 1,
  rounds: 1,
});
const text = (persona: string, delta: string, step = 'assessment'): TranscriptEvent => ({
  kind: 'text',
  run_id: RUN,
  step_id: `${step}:${persona}`,
  persona,
  delta,
});
const finished = (
  persona: string,
  reply: string,
  extra: Partial<Extract<TranscriptEvent, { kind: 'step_finished' }>> = {},
  step = 'assessment',
): TranscriptEvent => ({
  kind: 'step_finished',
  run_id: RUN,
  step_id: `${step}:${persona}`,
  step,
  persona,
  model: 'local/m',
  duration_ms: 1500,
  reply,
  text_superseded: false,
  ...extra,
});

describe('TranscriptPrinter', () => {
  it('keeps two runs in flight apart when their steps have the same id (watch --concurrency)', () => {
    const p = printer(false);
    const other = (e: TranscriptEvent): TranscriptEvent => ({ ...e, run_id: '20260101T000001Z-fedcba' });
    p.print(started('auditor'));
    p.print(other(started('auditor')));
    p.print(other(text('auditor', 'second run speaks\n')));
    p.print(text('auditor', 'first run speaks\n'));
    p.print(finished('auditor', 'first run speaks'));
    p.print(other(finished('auditor', 'second run speaks')));
    const out = p.text();
    // Each run's step under its own header, the first run's reply with it, the second's after it.
    expect(out.split('── auditor assessing the task')).toHaveLength(3);
    expect(out.indexOf('first run speaks')).toBeLessThan(out.lastIndexOf('── auditor assessing the task'));
    expect(out.indexOf('second run speaks')).toBeGreaterThan(out.lastIndexOf('── auditor assessing the task'));
  });

  it('on a terminal, writes each piece of a reply as it comes, indented', () => {
    const p = printer(true);
    p.print(started('auditor', 'turn'));
    const before = p.writes.length;
    p.print(text('auditor', 'The risk ', 'turn'));
    expect(p.writes.slice(before).join('')).toBe('  The risk ');
    p.print(text('auditor', 'is the\nrollback.', 'turn'));
    p.print(finished('auditor', 'The risk is the\nrollback.', {}, 'turn'));
    expect(p.text()).toBe('── round 1/1 · auditor speaking\n  The risk is the\n  rollback.\n  (auditor · local/m · 1.5 s)\n');
  });

  it('off a terminal, writes whole lines only', () => {
    const p = printer(false);
    p.print(started('auditor', 'turn'));
    const before = p.writes.length;
    p.print(text('auditor', 'The risk ', 'turn'));
    p.print(text('auditor', 'is the', 'turn'));
    expect(p.writes.length).toBe(before);
    p.print(text('auditor', '\nrollback', 'turn'));
    expect(p.writes.slice(before).join('')).toBe('  The risk is the\n');
    p.print(finished('auditor', 'The risk is the\nrollback', {}, 'turn'));
    expect(p.text()).toContain('  The risk is the\n  rollback\n  (auditor');
  });

  it('keeps replies of steps that run at once apart: a later step waits for the one before it', () => {
    const p = printer(true);
    p.print(started('alpha'));
    p.print(started('beta'));
    p.print(text('beta', 'B1 '));
    p.print(text('alpha', 'A1 '));
    p.print(text('beta', 'B2'));
    p.print(finished('beta', 'B1 B2'));
    p.print(text('alpha', 'A2'));
    p.print(finished('alpha', 'A1 A2'));
    expect(p.text()).toBe(
      [
        '── alpha assessing the task',
        '  A1 A2',
        '  (alpha · local/m · 1.5 s)',
        '── beta assessing the task',
        '  B1 B2',
        '  (beta · local/m · 1.5 s)',
        '',
      ].join('\n'),
    );
  });

  it('shows a verdict as the council reads it, and the reply as kept when the live text was superseded', () => {
    const p = printer(false);
    p.print(started('auditor', 'verdict'));
    p.print(text('auditor', 'not json', 'verdict'));
    p.print(
      finished(
        'auditor',
        '{"action":"investigate","confidence":0.4,"rationale":"no rollback"}',
        { text_superseded: true, verdict: { action: 'investigate', confidence: 0.4, rationale: 'no rollback', valid: true } },
        'verdict',
      ),
    );
    expect(p.text()).toBe(
      [
        '── round 1/1 · auditor giving a verdict',
        '  ↻ that call was asked again (a retry, or a fallback route); the reply as kept:',
        '  ⇒ verdict: investigate · confidence 0.40 · no rollback',
        '  (auditor · local/m · 1.5 s)',
        '',
      ].join('\n'),
    );
  });

  it('holds back a reply that is a JSON object while it streams and shows it as readable lines (parallel, supervisor)', () => {
    const assessment = JSON.stringify({
      action: 'investigate',
      confidence: 0.7,
      rationale: 'the rollback is not planned',
      vectors: { know: { score: 0.66, rationale: 'long' }, do: { score: 0.74, rationale: 'long' } },
    });
    for (const live of [true, false]) {
      const p = printer(live);
      p.print(started('auditor'));
      for (const piece of ['  ', assessment.slice(0, 10), assessment.slice(10, 50), assessment.slice(50)]) p.print(text('auditor', piece));
      expect(p.text()).toBe('── auditor assessing the task\n');
      p.print(finished('auditor', assessment));
      expect(p.text()).toBe(
        [
          '── auditor assessing the task',
          '  ⇒ investigate · confidence 0.70',
          '  the rollback is not planned',
          '  vectors: know 0.66 · do 0.74',
          '  (auditor · local/m · 1.5 s)',
          '',
        ].join('\n'),
      );
    }
    const decision = '```json\n{"action":"delegate","target":"strategist","instruction":"weigh the options"}\n```';
    const p = printer(false);
    p.print(started('coordinator', 'decision'));
    p.print(text('coordinator', decision, 'decision'));
    p.print(finished('coordinator', decision, {}, 'decision'));
    p.print(started('auditor', 'review'));
    p.print(text('auditor', '{"ranking":["B","A"],"rationale":"B cites the plan"}', 'review'));
    p.print(finished('auditor', '{"ranking":["B","A"],"rationale":"B cites the plan"}', {}, 'review'));
    // A reply that only starts like JSON is shown as it was, once it is complete.
    p.print(started('strategist', 'turn'));
    p.print(text('strategist', '{not json} but prose\n', 'turn'));
    p.print(finished('strategist', '{not json} but prose\n', {}, 'turn'));
    expect(p.text()).toBe(
      [
        '── iteration 1/1 · coordinator deciding what comes next',
        '  ⇒ delegate → strategist',
        '  weigh the options',
        '  (coordinator · local/m · 1.5 s)',
        "── auditor ranking the others' assessments",
        '  B cites the plan',
        '  ranking: B, A',
        '  (auditor · local/m · 1.5 s)',
        '── round 1/1 · strategist speaking',
        '  {not json} but prose',
        '  (strategist · local/m · 1.5 s)',
        '',
      ].join('\n'),
    );
  });

  it('prints knowledge outcomes, arbitration and notices on lines of their own', () => {
    const p = printer(true);
    p.print({ kind: 'run_started', run_id: RUN, mode: 'round_robin', personas: ['a', 'b'], rounds: 2 });
    p.print(started('a', 'turn'));
    p.print(text('a', 'Reading it: [ORCHESTRATOR_REQUEST: READ_FILE(docs/x.md)]', 'turn'));
    p.print({
      kind: 'knowledge',
      run_id: RUN,
      step_id: 'turn:a',
      persona: 'a',
      action: 'READ_FILE',
      argument: 'docs/x.md',
      status: 'error',
      reason_code: 'KNOWLEDGE_NOT_FOUND',
      message: 'not found',
    });
    p.print(finished('a', 'Reading it: [ORCHESTRATOR_REQUEST: READ_FILE(docs/x.md)]', {}, 'turn'));
    p.print({
      kind: 'arbitrated',
      run_id: RUN,
      strategy: 'majority_vote',
      final_action: 'proceed',
      agreement: 0.5,
      reasoning: 'one each',
      votes: { a: 'proceed', b: 'escalate' },
    });
    p.print({ kind: 'notice', run_id: RUN, message: 'heads up' });
    expect(p.text()).toBe(
      [
        `▶ ${RUN} · 2 round(s) · a, b`,
        '── round 1/1 · a speaking',
        '  Reading it: [ORCHESTRATOR_REQUEST: READ_FILE(docs/x.md)]',
        '  ↳ READ_FILE(docs/x.md): error — not found',
        '  (a · local/m · 1.5 s)',
        '⚖ arbitration (majority_vote): proceed · 1 of 2 voted proceed',
        '  votes: a proceed · b escalate',
        '  one each',
        `! ${RUN} heads up`,
        '',
      ].join('\n'),
    );
  });

  it("endLine ends a reply cut short by someone else's line, once", () => {
    const p = printer(true);
    p.print(started('a', 'turn'));
    p.print(text('a', 'half a line', 'turn'));
    p.endLine();
    p.endLine();
    expect(p.text().endsWith('  half a line\n')).toBe(true);
  });
});

describe('the transcript event kinds', () => {
  it("each has a row in the README's table, and so has the outcome line", async () => {
    const readme = await readFile(path.join(REPO_ROOT, 'README.md'), 'utf8');
    for (const kind of [...TRANSCRIPT_KINDS, 'outcome']) expect(readme, kind).toMatch(new RegExp(`^\\| \`${kind}\` \\|`, 'm'));
  });
});
