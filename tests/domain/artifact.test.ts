import { describe, expect, it } from 'vitest';
import { arbitrate } from '../../src/domain/arbitration.js';
import { ARTIFACT_HEADING, type ArtifactInput, renderArtifact } from '../../src/domain/artifact.js';
import { pauseDecision, runDecision, sealedStopDecision, userDecision } from '../../src/domain/decision.js';
import { parseVerdict } from '../../src/domain/verdict.js';
import { aKnowledgeResult, aPlan, aStep, verdictJson } from '../fixtures/domain-builders.js';

const verdicts = [parseVerdict('alpha', verdictJson('proceed', 0.8, 'the queue fits')), parseVerdict('beta', 'Let me think about it.')];
const steps = [
  aStep('turn:r1:alpha', {
    model: 'main/gpt-4o-mini',
    reply: 'Kafka fits.',
    usage: { prompt_tokens: 1000, completion_tokens: 200, prompt_split: { instructions: 300, memory: 200, task: 400, deliberation: 100 } },
  }),
  aStep('turn:r1:beta', {
    model: 'main/gpt-4o-mini',
    reply: 'I need the plan.',
    // 1024 of its prompt tokens came from the provider's cache: they cost the cached price.
    usage: {
      prompt_tokens: 2000,
      completion_tokens: 100,
      cached_tokens: 1024,
      prompt_split: { instructions: 400, memory: 300, task: 500, deliberation: 800 },
    },
    knowledge: [aKnowledgeResult()],
  }),
  aStep('verdict:alpha', {
    model: 'main/gpt-4o-mini',
    reply: verdictJson('proceed', 0.8),
    usage: { prompt_tokens: 500, completion_tokens: 20 },
  }),
];

/** A completed round-robin run of alpha and beta on a real route, with prices. */
function anInput(over: Partial<ArtifactInput> = {}): ArtifactInput {
  return {
    runId: '20260101T000000Z-abc123',
    task: 'Choose the message queue for billing',
    inputArtifacts: [],
    plan: aPlan({ rounds: 1, model: 'main (openai: gpt-4o-mini)' }),
    personaNames: new Map([
      ['alpha', 'Alpha'],
      ['beta', 'Beta'],
    ]),
    status: 'completed',
    startedAt: '2026-01-01T00:00:00.000Z',
    finishedAt: '2026-01-01T00:00:12.345Z',
    durationMs: 12_345,
    rehearsal: false,
    steps,
    verdicts,
    arbitration: arbitrate({ strategy: 'confidence_weighted', verdicts, weights: { alpha: 1, beta: 1 } }),
    proposal: '### Recommendation\n\nUse Kafka.',
    trail: [runDecision('meaning', 'MEANING_OK'), runDecision('dispatch', 'RUN_COMPLETED')],
    prices: { 'gpt-4o-mini': { prompt_per_mtok: 0.15, completion_per_mtok: 0.6, cached_prompt_per_mtok: 0.075 } },
    ...over,
  };
}
/** The artifact's section under a `## ` heading, without the heading. */
const section = (text: string, title: string): string =>
  (text.split('\n## ').find((s) => s.startsWith(`${title}\n`)) ?? '').slice(title.length + 1).trim();

describe('renderArtifact: the head of the report', () => {
  it('starts with the heading the writer recognises, the task in a fence, and no status line when completed', () => {
    const text = renderArtifact(anInput({ inputArtifacts: ['docs/plan.md', 'notes/q.md'] }));
    expect(
      text.startsWith(
        `${ARTIFACT_HEADING}Choose the message queue for billing\n\n## Task\n\n\`\`\`text\nChoose the message queue for billing\n\`\`\``,
      ),
    ).toBe(true);
    expect(text).toContain('Input artifacts: `docs/plan.md`, `notes/q.md`');
    expect(text).not.toContain('Status:');
  });

  it('says at the top why a paused run paused', () => {
    const text = renderArtifact(anInput({ status: 'paused', outcomeNote: 'The council said investigate: a person should look first.' }));
    expect(text.split('\n').slice(0, 4).join('\n')).toMatchInlineSnapshot(`
      "# Council report: Choose the message queue for billing

      > **Status: PAUSED.** The council said investigate: a person should look first.
      "
    `);
  });

  it('says a run a guardrail ended was stopped by it, never that it completed', () => {
    const text = renderArtifact(anInput({ status: 'guardrail_stopped', outcomeNote: 'max_iterations: 4 delegations.' }));
    expect(text).toContain('> **Status: STOPPED BY A GUARDRAIL.** max_iterations: 4 delegations.');
    expect(renderArtifact(anInput({ status: 'stopped' }))).toContain('> **Status: STOPPED.**\n');
  });

  it('cuts a long task short in the heading, on one line, and keeps it whole below', () => {
    const task = `Choose the queue\nfor billing ${'and more '.repeat(20)}`;
    const text = renderArtifact(anInput({ task }));
    const heading = text.split('\n')[0] ?? '';
    expect(heading.length).toBe(ARTIFACT_HEADING.length + 90);
    expect(heading.endsWith('…')).toBe(true);
    expect(heading).toContain('Choose the queue for billing and more');
    expect(text).toContain(task);
  });

  it('fences a task that holds a fence with a longer one', () => {
    const text = renderArtifact(anInput({ task: 'Review this:\n```js\nrun()\n```' }));
    expect(text).toContain('````text\nReview this:\n```js\nrun()\n```\n````');
  });

  it("warns loudly that an offline rehearsal is not a model's opinion", () => {
    const text = renderArtifact(anInput({ rehearsal: true }));
    expect(text).toContain("> **OFFLINE REHEARSAL — not a model's opinion.**");
    expect(text).toContain('| Model | main/gpt-4o-mini — offline rehearsal |');
    expect(text).toContain('_Token counts of the offline rehearsal are estimates (characters ÷ 4)._');
    expect(renderArtifact(anInput())).not.toContain('OFFLINE REHEARSAL');
  });

  it('gives no rehearsal banner to a run that made no model call (a gate or a person stopped it first)', () => {
    const text = renderArtifact(
      anInput({ rehearsal: true, status: 'stopped', steps: [], verdicts: [], outcomeNote: 'stopped by a person' }),
    );
    expect(text).not.toContain('OFFLINE REHEARSAL');
    expect(text).not.toContain('offline rehearsal');
    expect(text).toContain('| Model calls | 0 |');
  });
});

describe('renderArtifact: the run and its usage', () => {
  it('gives the run table: speakers in order, the rounds, the models that answered, the calls, the time', () => {
    expect(section(renderArtifact(anInput()), 'Run')).toMatchInlineSnapshot(`
      "| | |
      |---|---|
      | Run id | \`20260101T000000Z-abc123\` |
      | Status | completed |
      | Personas (speaker order) | Alpha (\`alpha\`), Beta (\`beta\`) |
      | Rounds | 1 |
      | Mode | round_robin |
      | Arbitration | confidence_weighted |
      | Synthesizer | \`alpha\` |
      | Model | main/gpt-4o-mini |
      | Model calls | 3 |
      | Started | 2026-01-01T00:00:00.000Z |
      | Finished | 2026-01-01T00:00:12.345Z |
      | Duration | 12.35 s |"
    `);
  });

  it('gives the usage per persona and the total: where the prompt tokens went, the cached ones, and the cost at the cached price', () => {
    expect(section(renderArtifact(anInput()), 'Usage')).toMatchInlineSnapshot(`
      "| Persona | Calls | Prompt tokens | of which instructions | of which memory | of which task and inputs | of which deliberation | Cached | Completion tokens | Cost (USD) |
      |---|---|---|---|---|---|---|---|---|---|
      | \`alpha\` | 2 | 1500 | 300 | 200 | 400 | 100 | 0 | 220 | 0.0004 |
      | \`beta\` | 1 | 2000 | 400 | 300 | 500 | 800 | 1024 | 100 | 0.0003 |
      | **total** | 3 | 3500 | 700 | 500 | 900 | 900 | 1024 | 320 | 0.0006 |"
    `);
  });

  it('says the cost is unknown when a model has no price, rather than a wrong number', () => {
    const usage = section(renderArtifact(anInput({ prices: {} })), 'Usage');
    expect(usage).toContain('| **total** | 3 | 3500 | 700 | 500 | 900 | 900 | 1024 | 320 | unknown (no price) |');
  });

  it('lists the reroutes, numbering steps from one', () => {
    const usage = section(
      renderArtifact(
        anInput({ reroutes: [{ persona: 'beta', from: 'main', to: 'backup', reason_code: 'MODEL_RATE_LIMITED', at_step: 1 }] }),
      ),
      'Usage',
    );
    expect(usage).toContain('Reroutes:\n\n- `beta`: main → backup (MODEL_RATE_LIMITED, before step 2)');
  });

  it("shows rounds only for round robin, and the plan's model before any call", () => {
    const parallel = section(
      renderArtifact(anInput({ plan: aPlan({ mode: 'parallel', model: 'main (openai: gpt-4o-mini)' }), steps: [] })),
      'Run',
    );
    expect(parallel).not.toContain('| Rounds |');
    expect(parallel).toContain('| Model | main (openai: gpt-4o-mini) |');
  });
});

describe('renderArtifact: what the council said', () => {
  it('gives the transcript round by round, with the knowledge each turn got', () => {
    const transcript = section(renderArtifact(anInput()), 'Transcript');
    expect(transcript).toContain('### Round 1\n\n#### Alpha `alpha` · main/gpt-4o-mini\n\nKafka fits.');
    expect(transcript).toContain('> Orchestrator: `READ_FILE(docs/plan.md)` → provided 12 bytes');
    expect(section(renderArtifact(anInput({ plan: aPlan({ mode: 'parallel' }), steps: [] })), 'Transcript')).toBe(
      '_No turns in parallel mode: its replies are in the sections below._',
    );
  });

  it("calls a supervisor loop's rounds iterations", () => {
    const text = renderArtifact(anInput({ plan: aPlan({ mode: 'supervisor' }), steps: [aStep('turn:i1:beta', { round: 1 })] }));
    expect(section(text, 'Transcript')).toContain('### Iteration 1');
  });

  it('tabulates knowledge requests with their outcome, or says there were none', () => {
    const refused = aStep('turn:r1:beta', {
      knowledge: [
        aKnowledgeResult({ argument: '.env', status: 'refused', message: 'denied | by the sandbox', bytes: undefined, sha256: undefined }),
      ],
    });
    expect(section(renderArtifact(anInput({ steps: [refused] })), 'Knowledge requests')).toContain(
      '| 1 | `beta` | READ_FILE(.env) | refused: denied \\| by the sandbox |  |  |',
    );
    expect(section(renderArtifact(anInput()), 'Knowledge requests')).toContain(
      '| 1 | `beta` | READ_FILE(docs/plan.md) | provided | 12 | `cccccccccccccccc…` |',
    );
    expect(section(renderArtifact(anInput({ steps: [] })), 'Knowledge requests')).toBe('None.');
  });

  it('gives the verdicts, a malformed one marked fail-closed, then the arbitration and the dissent', () => {
    expect(section(renderArtifact(anInput()), 'Verdicts')).toMatchInlineSnapshot(`
      "| Persona | Action | Confidence | Rationale |
      |---|---|---|---|
      | \`alpha\` | proceed | 0.80 | the queue fits |
      | \`beta\` | escalate (fail-closed) | 1.00 | fail-closed: malformed verdict (no JSON object with the keys action, confidence, rationale was found) |

      **Arbitration (confidence_weighted):** escalate. confidence weighted: votes weighted by confidence × weight (proceed 0.80, investigate 0.00, escalate 1.00); 1 verdict(s) missing or malformed counted as escalate.

      Support for escalate: 1 of 2 voted escalate (50%) · weight of the winning action: 56% · agreement (the most common action's share, whichever won): 50%

      Dissent:

      - alpha said proceed (0.80): the queue fits
      - beta: malformed verdict (no JSON object with the keys action, confidence, rationale was found) → counted as escalate"
    `);
  });

  it('says when no verdict was given', () => {
    expect(section(renderArtifact(anInput({ verdicts: [], arbitration: undefined })), 'Verdicts')).toBe('No verdicts were given.');
  });

  it("adds the mode's sections and links its pictures", () => {
    const text = renderArtifact(
      anInput({
        sections: [{ title: 'Assessments', markdown: '| a | b |\n' }],
        pictures: [{ file: 'run 1.heatmap.svg', alt: 'heat map' }],
      }),
    );
    expect(section(text, 'Assessments')).toBe('| a | b |');
    expect(section(text, 'Pictures')).toBe('![heat map](run%201.heatmap.svg)');
  });

  it('gives the proposal, or says none was written', () => {
    expect(section(renderArtifact(anInput()), 'Final proposal')).toBe('### Recommendation\n\nUse Kafka.');
    expect(section(renderArtifact(anInput({ proposal: '  \n' })), 'Final proposal')).toBe('_No final proposal was written._');
  });
});

describe('renderArtifact: the decision trail', () => {
  it('explains each reason code in words and says which decisions were sealed', () => {
    const trail = [
      runDecision('meaning', 'MEANING_OK'),
      pauseDecision('ethics', 'ETHICS_PII_DETECTED'),
      sealedStopDecision('ethics', 'ETHICS_SECRET_DETECTED'),
    ];
    expect(section(renderArtifact(anInput({ status: 'stopped', trail })), 'Decision trail')).toMatchInlineSnapshot(`
      "| Layer | Decision | Reason | Meaning | Sealed | Decider |
      |---|---|---|---|---|---|
      | meaning | RUN | MEANING_OK | the task and its personas make sense | no | SYSTEM |
      | ethics | PAUSE_FOR_HITL | ETHICS_PII_DETECTED | personal data found in the task or its inputs | no | SYSTEM |
      | ethics | STOPPED | ETHICS_SECRET_DETECTED | a secret (key, token, password) found in the task or its inputs | yes | SYSTEM |"
    `);
  });

  it("says a pause and a person's stop once each, though the record holds each twice (the gate's decision and the pause, the stop and the ending)", () => {
    const paused = pauseDecision('consistency', 'CONSISTENCY_INPUT_MISSING');
    const stop = userDecision('STOPPED', 'HITL_STOP');
    const trail = [runDecision('meaning', 'MEANING_OK'), paused, paused, stop, stop];
    const rows = section(renderArtifact(anInput({ status: 'stopped', trail })), 'Decision trail')
      .split('\n')
      .slice(2);
    expect(rows.map((r) => r.split(' | ').slice(0, 3).join(' | '))).toEqual([
      '| meaning | RUN | MEANING_OK',
      '| consistency | PAUSE_FOR_HITL | CONSISTENCY_INPUT_MISSING',
      `| ${stop.layer} | STOPPED | HITL_STOP`,
    ]);
  });
});

describe('renderArtifact: screened as everything kept is', () => {
  it('shows no personal data from the task, the replies or the proposal', () => {
    const text = renderArtifact(
      anInput({
        task: 'Refund jane.doe@example.com for the double charge',
        steps: [aStep('turn:r1:alpha', { reply: 'Her card 4111 1111 1111 1111 was charged twice.' })],
        proposal: 'Write to jane.doe@example.com.',
      }),
    );
    expect(text).not.toContain('jane.doe@example.com');
    expect(text).not.toContain('4111 1111 1111 1111');
    expect(text.split('\n')[0]).toBe(`${ARTIFACT_HEADING}Refund [REDACTED:EMAIL] for the double charge`);
  });

  it('screens the task before its heading is cut, so no part of a value is left in the heading', () => {
    const task = `${'Please review the billing queue plan '.repeat(2)}and ask jane.doe@example.com`;
    const heading = renderArtifact(anInput({ task })).split('\n')[0] ?? '';
    expect(heading).not.toContain('jane');
    expect(heading.endsWith('and ask [REDACT…')).toBe(true);
  });
});
