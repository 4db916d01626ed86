import { describe, expect, it } from 'vitest';
import { pauseDecision, runDecision, sealedStopDecision, userDecision } from '../../src/domain/decision.js';
import { renderTranscript } from '../../src/domain/transcript.js';
import { aKnowledgeResult, aMediatorReading, aRunState, aStep, verdictJson } from '../fixtures/domain-builders.js';

const RUN = '20260101T000000Z-abc123';
const steps = [
  aStep('turn:r1:alpha', {
    reply: 'We should use a queue.',
    usage: { prompt_tokens: 100, completion_tokens: 20 },
    knowledge: [aKnowledgeResult()],
  }),
  aStep('turn:r1:beta', { reply: '   ', usage: { prompt_tokens: 150, completion_tokens: 5 }, calls: 2 }),
  aStep('verdict:alpha', { reply: verdictJson('proceed', 0.8, 'sound | cheap') }),
  aStep('verdict:beta', { reply: 'I would rather not say.' }),
];
/** The transcript's section under a `## ` heading. */
const section = (text: string, title: string): string => text.split('\n## ').find((s) => s.startsWith(`${title}\n`)) ?? '';

describe('renderTranscript: the story of a run', () => {
  it('heads with the run, its status, the council, the model and the usage', () => {
    const text = renderTranscript(
      aRunState({ status: 'completed', steps, finished_at: '2026-01-01T00:01:00.000Z', artifact: 'outputs/run.md' }),
    );
    expect(text.startsWith(`# Run ${RUN} — completed\n`)).toBe(true);
    expect(text).toContain('- Council: alpha, beta · 2 round(s) · arbitration confidence_weighted · synthesizer alpha');
    expect(text).toContain('- Started: 2026-01-01T00:00:00.000Z · finished: 2026-01-01T00:01:00.000Z');
    expect(text).toContain('- Model calls: 5 · 250 prompt + 25 completion tokens');
    // Steps checkpointed before prompts were split say so, rather than splitting nothing.
    expect(text).toContain('- Prompt tokens: instructions 0 · memory 0 · task and inputs 0 · deliberation 0 · not split 250 · cached 0');
    expect(text).toContain('- Artifact: outputs/run.md');
  });

  it("counts the mediator's classification in the header's calls and tokens, as every other view does", () => {
    const classification = { model: 'offline/offline-rehearsal-v1', calls: 1, usage: { prompt_tokens: 30, completion_tokens: 4 } };
    const text = renderTranscript(aRunState({ status: 'completed', steps, classification }));
    expect(text).toContain('- Model calls: 6 · 280 prompt + 29 completion tokens');
  });

  it("lists the mediator's classification first in the transcript, with the route and model that answered it", () => {
    const classification = { model: 'local/m', calls: 2, usage: { prompt_tokens: 30, completion_tokens: 4 } };
    const advice = aMediatorReading({ deliverables: ['summary'], acts: [{ class: 'send', object: 'the board' }] });
    const text = section(renderTranscript(aRunState({ steps, classification, advice })), 'Transcript');
    expect(text.indexOf('###')).toBe(text.indexOf('### mediator · task classification'));
    expect(text).toContain('_local/m · 2 calls_');
    expect(text).toContain('acts: send (the board) · particular cases: none · intent clear: yes');
    expect(text.indexOf('### mediator')).toBeLessThan(text.indexOf('### alpha · round 1'));
    expect(section(renderTranscript(aRunState({ steps })), 'Transcript')).not.toContain('### mediator');
  });

  it('shows every reply in order, with its knowledge requests, and says when a reply was empty or took more calls', () => {
    const text = section(renderTranscript(aRunState({ steps })), 'Transcript');
    expect(text.indexOf('### alpha · round 1')).toBeLessThan(text.indexOf('### beta · round 1'));
    expect(text).toContain('We should use a queue.\n\n> READ_FILE(docs/plan.md) → provided `docs/plan.md`, 12 bytes');
    expect(text).toContain('_offline/offline-rehearsal-v1 · 10 ms · 2 calls_\n\n_(empty reply)_');
  });

  it('shows a refused request with its reason', () => {
    const refused = aStep('turn:r1:alpha', {
      knowledge: [aKnowledgeResult({ argument: '.env', status: 'refused', message: 'denied by the sandbox' })],
    });
    expect(renderTranscript(aRunState({ steps: [refused] }))).toContain('> READ_FILE(.env) → refused: denied by the sandbox');
  });

  it('gives the verdicts, a malformed one as the escalate it counts as', () => {
    const text = section(renderTranscript(aRunState({ steps })), 'Verdicts');
    expect(text).toContain('| alpha | proceed | 0.80 | sound \\| cheap |');
    expect(text).toMatch(/\| beta \| escalate \(fail-closed\) \| 1\.00 \| fail-closed: malformed verdict/);
  });

  it('names the step of each mode in words', () => {
    const modeSteps = [
      aStep('turn:i2:beta', { round: 2 }),
      aStep('decision:i2', { kind: 'decision', persona: 'alpha', round: 2 }),
      aStep('reviewer:beta', { reply: verdictJson('investigate', 0.6) }),
      aStep('assessment:alpha'),
      aStep('review:beta'),
      aStep('item:check-1', { kind: 'item', persona: 'alpha' }),
      aStep('synthesis'),
    ];
    const text = renderTranscript(aRunState({ steps: modeSteps }));
    for (const heading of [
      'beta · iteration 2',
      'alpha · supervisor decision, iteration 2',
      'beta · reviewer gate',
      'alpha · assessment',
      'beta · anonymous review',
      'alpha · work item check-1',
      'alpha · final proposal',
    ]) {
      expect(text).toContain(`### ${heading}\n`);
    }
    expect(section(text, 'Verdicts')).toContain('| beta (reviewer) | investigate |');
  });

  it('says so when no model was called and no decision taken yet', () => {
    const text = renderTranscript(aRunState());
    expect(text).toContain('_No model was called._');
    expect(text).toContain('_No decision yet._');
    expect(text).not.toContain('## Verdicts');
    expect(text).toContain('· last checkpoint: 2026-01-01T00:00:05.000Z');
  });
});

describe('renderTranscript: the decisions and what to do next', () => {
  const trail = [
    runDecision('meaning', 'MEANING_OK'),
    pauseDecision('arbitration', 'ARBITRATION_INVESTIGATE'),
    userDecision('RUN', 'HITL_CONTINUE'),
  ];
  const hitl = [
    {
      pause_id: `${RUN}-p1`,
      layer: 'arbitration',
      reason_code: 'ARBITRATION_INVESTIGATE',
      decision: 'continue' as const,
      decided_at: '2026-01-01T00:02:00.000Z',
      note: 'checked with finance',
    },
  ];

  it('lists the decision trail in order, with who decided, and what people decided', () => {
    const text = renderTranscript(aRunState({ status: 'paused', trail, hitl, summary: 'Paused: the council said investigate.' }));
    expect(section(text, 'Decision trail')).toContain(
      [
        '| 1 | meaning | RUN | MEANING_OK | SYSTEM |',
        '| 2 | arbitration | PAUSE_FOR_HITL | ARBITRATION_INVESTIGATE | SYSTEM |',
        '| 3 | hitl | RUN | HITL_CONTINUE | USER |',
      ].join('\n'),
    );
    expect(text).toContain(
      `A person decided **continue** on pause ${RUN}-p1 (ARBITRATION_INVESTIGATE) at 2026-01-01T00:02:00.000Z: checked with finance.`,
    );
  });

  it("says a pause once: the gate's decision and the pause it makes are one step, twice on the record", () => {
    const paused = pauseDecision('arbitration', 'ARBITRATION_INVESTIGATE');
    const text = renderTranscript(aRunState({ status: 'paused', trail: [runDecision('meaning', 'MEANING_OK'), paused, paused] }));
    expect(section(text, 'Decision trail')).toContain(
      ['| 1 | meaning | RUN | MEANING_OK | SYSTEM |', '| 2 | arbitration | PAUSE_FOR_HITL | ARBITRATION_INVESTIGATE | SYSTEM |', ''].join(
        '\n',
      ),
    );
    expect(section(text, 'Decision trail')).not.toContain('| 3 |');
  });

  it('marks a sealed stop', () => {
    expect(renderTranscript(aRunState({ status: 'stopped', trail: [sealedStopDecision('ethics', 'ETHICS_SECRET_DETECTED')] }))).toContain(
      '| 1 | ethics | STOPPED (sealed) | ETHICS_SECRET_DETECTED | SYSTEM |',
    );
  });

  it('tells a person how to decide a paused run', () => {
    const outcome = section(renderTranscript(aRunState({ status: 'paused', summary: 'Paused: the council said investigate.' })), 'Outcome');
    expect(outcome).toBe(
      `Outcome\n\nPaused: the council said investigate.\n\nDecide with \`maestro hitl decide ${RUN} continue|stop\` (see \`maestro hitl show ${RUN}\`).\n`,
    );
  });

  it('tells a person an interrupted run can be resumed without repeating its calls', () => {
    const outcome = section(renderTranscript(aRunState({ status: 'running' }), 'interrupted'), 'Outcome');
    expect(outcome).toContain('The run is interrupted.');
    expect(outcome).toContain(`\`maestro run --resume ${RUN}\` resumes it from its checkpoint (finished model calls are not repeated).`);
  });

  it('says a running run is in the hands of a live process, and adds nothing to a finished one', () => {
    expect(section(renderTranscript(aRunState({ status: 'running' })), 'Outcome')).toContain('a live maestro process is running it now');
    expect(section(renderTranscript(aRunState({ status: 'completed', summary: 'Done.' })), 'Outcome')).toBe('Outcome\n\nDone.\n');
  });
});

describe('renderTranscript: screened as everything printed is', () => {
  it('shows no personal data from the task, the replies or the notes, only its category', () => {
    const state = aRunState({
      command: { task_description: 'Ask jane.doe@example.com which queue', input_artifacts: ['notes/q.md'], config: {} },
      steps: [aStep('turn:r1:alpha', { reply: 'Card 4111 1111 1111 1111 was charged twice.' })],
    });
    const text = renderTranscript(state);
    expect(text).not.toContain('jane.doe@example.com');
    expect(text).not.toContain('4111 1111 1111 1111');
    expect(text).toContain('Ask [REDACTED:EMAIL] which queue');
    expect(text).toContain('Inputs: `notes/q.md`');
  });
});
