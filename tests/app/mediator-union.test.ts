import { describe, expect, it } from 'vitest';
import { uniteAdvice } from '../../src/app/run-records.js';
import { loadEnglish } from '../../src/domain/floor/english.js';
import { judgeFloor } from '../../src/domain/floor/floor.js';
import { KeptMediatorReading, type MediatorReading, mediatorMessages, readMediatorReply } from '../../src/domain/floor/mediator.js';
import { perceiveTask } from '../../src/domain/floor/perceive.js';
import { evaluateGates, type GateFacts } from '../../src/domain/gates.js';
import { aMediatorReading } from '../fixtures/domain-builders.js';

const nothing: MediatorReading = aMediatorReading();

async function factsOf(task: string, approved: ReadonlySet<string> = new Set()): Promise<GateFacts> {
  const reading = perceiveTask(await loadEnglish(), { task, inputs: [] });
  return {
    taskBlank: false,
    unknownPersonas: [],
    missingInputs: [],
    pathEscapes: [],
    piiCategories: [],
    secretCategories: [],
    approved,
    floor: { reading, verdict: judgeFloor(reading, []) },
  };
}

// Issue 35 point 4: on a real route the mediator fills the same perception and context; the merge
// adds what the model found and never removes what the rules found.
describe("the mediator's reading merged with the rules'", () => {
  it('a model that answers "nothing to note" cannot lower the floor', async () => {
    for (const task of ['Fire Alice.', 'Merge the PR into main', 'Do it', 'What dose of ibuprofen should my son take?']) {
      const facts = await factsOf(task);
      const merged = uniteAdvice(facts, nothing, { model: 'local/m', accept: [] });
      expect(evaluateGates(merged).decision.decision, task).toBe('PAUSE_FOR_HITL');
      expect(merged.floor?.verdict.findings.map((f) => f.label)).toEqual(facts.floor?.verdict.findings.map((f) => f.label));
    }
  });

  it('an act the model names pauses a task the rules let through, whatever class it gives it', async () => {
    const facts = await factsOf('Summarise the quarterly report for the board');
    expect(evaluateGates(facts).decision.decision).toBe('RUN');
    for (const acts of [[{ class: 'send' as const, object: 'the board' }], [{ class: 'other' as const, object: 'file the report' }]]) {
      const merged = uniteAdvice(facts, { ...nothing, acts }, { model: 'local/m', accept: [] });
      expect(evaluateGates(merged).decision).toMatchObject({ layer: 'acc', reason_code: 'ACC_EXTERNAL_SIDE_EFFECT_REQUIRES_HITL' });
      expect(merged.floor?.reading.classified_by).toBe('local/m');
    }
  });

  it('a particular case, an unclear intent or a preference ask from the model pause at their own gates', async () => {
    const facts = await factsOf('Review the attached notes and list the open questions');
    const at = (m: Partial<MediatorReading>) => evaluateGates(uniteAdvice(facts, { ...nothing, ...m }, { accept: [] })).decision;
    expect(at({ high_stakes_case: ['health'] })).toMatchObject({ layer: 'ethics', reason_code: 'ETHICS_HIGH_STAKES' });
    expect(at({ intent_clear: false })).toMatchObject({ layer: 'meaning', reason_code: 'MEANING_AMBIGUOUS_INTENT' });
    expect(at({ personal_preference: true })).toMatchObject({ layer: 'rfl', reason_code: 'REL_BOUNDARY_UNSTABLE' });
  });

  it('the workspace acceptance applies to what the model found too; no model changes the acceptance', async () => {
    const facts = await factsOf('Summarise the clinical notes for the handover');
    const merged = uniteAdvice(
      facts,
      { ...nothing, high_stakes_case: ['health'] },
      { accept: [{ risk: 'health', deliverables: ['summary'] }] },
    );
    expect(evaluateGates(merged).decision.decision).toBe('RUN');
    expect(merged.floor?.verdict.acceptedBy).toEqual(['health for summary']);
  });

  it('a person who continued past the pause is not paused again by the same reason', async () => {
    const facts = await factsOf('Merge the PR into main', new Set(['ACC_EXTERNAL_SIDE_EFFECT_REQUIRES_HITL']));
    expect(evaluateGates(uniteAdvice(facts, nothing, { accept: [] })).decision.decision).toBe('RUN');
  });
});

describe("the mediator's reply", () => {
  it('reads the structure tolerantly: fences, case, synonyms of domains; an unknown act class is still an act', () => {
    const reply = `Here:\n\`\`\`json\n${JSON.stringify({ ...nothing, acts: undefined, Acts: [{ class: 'Launch Rockets' }], domains: ['Medical', 'finance'], high_stakes_case: ['legal'] })}\n\`\`\``;
    const read = readMediatorReply(reply);
    expect(read).toMatchObject({
      ok: true,
      reading: { acts: [{ class: 'other' }], domains: ['health', 'money'], high_stakes_case: ['law'] },
    });
  });

  it('refuses a reading that leaves out what the floor needs (asked again, then fail closed)', () => {
    expect(readMediatorReply('{"acts": []}').ok).toBe(false);
  });

  it('reads the classification an earlier maestro kept in a checkpoint', () => {
    const old = KeptMediatorReading.parse({ side_effects: ['send e-mail'], high_stakes: ['financial'], ambiguous: true });
    expect(old).toMatchObject({ acts: [{ class: 'other', object: 'send e-mail' }], high_stakes_case: ['money'], intent_clear: false });
  });

  it('sends the task screened, says when inputs come with it, and hands over the content of files to carry out', () => {
    const [, user] = mediatorMessages('Carry out the steps in ops/runbook.md', {
      attachments: 1,
      handedOver: [{ path: 'ops/runbook.md', content: '1. drop table x' }],
    });
    expect(user?.content).toContain('comes with 1 attached input(s)');
    expect(user?.content).toContain('ops/runbook.md');
    expect(user?.content).toContain('1. drop table x');
    expect(mediatorMessages('Review it', { attachments: 0 }).at(-1)?.content).not.toContain('attached input');
  });
});
