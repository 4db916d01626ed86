import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import type { CommandFile } from '../../src/domain/command-file.js';
import { pauseDecision, sealedStopDecision, systemStopDecision, userDecision } from '../../src/domain/decision.js';
import { parseRunState } from '../../src/domain/checkpoint.js';
import { RUN_STATE_VERSION, type RunState } from '../../src/domain/run-state.js';
import type { RunEvent } from '../../src/domain/run-machine.js';
import { screenCommand, screenRunEvent, screenRunState } from '../../src/domain/screen.js';
import { screenStrings } from '../../src/domain/screen-text.js';
import { startedRun, turnStep } from '../fixtures/journal-run.js';
import { conflictFingerprint } from '../../src/app/loop-policy.js';
import { sha256 } from '../../src/adapters/system/hashing.js';
import { aMediatorReading } from '../fixtures/domain-builders.js';

const EMAIL = 'jane.doe@example.com';
const PHONE = '+1 415 555 0100';
const CARD = '4111 1111 1111 1111';
const AWS_SECRET = 'Zx9Qm2Lp8Rt4Vw6Yb1Nc3Df5Gh7Jk0Ls2Pq4Tu6W';
const RAW = [EMAIL, '415 555 0100', CARD, '4111111111111111', AWS_SECRET];
const holdsRaw = (value: unknown) => RAW.filter((r) => JSON.stringify(value).includes(r));

describe('screenCommand: the command as a checkpoint keeps it', () => {
  const command: CommandFile = {
    task_description: `Review the rollout; questions to ${EMAIL}`,
    input_artifacts: ['notes/rollout.md'],
    output_artifact_path: 'outputs/rollout.md',
    config: { conflict_key: `billing line ${PHONE}`, personas: ['auditor'] },
    work_items: [
      {
        id: 'check-1',
        assigned_agent: 'auditor',
        goal: `Check the charge on ${CARD}`,
        inputs: { aws_secret_access_key: AWS_SECRET, card: 4111111111111111, [EMAIL]: 'owner', region: 'eu' },
        expected_output: { summary: `who called from ${PHONE}` },
      },
    ],
    facts: { contact: EMAIL, retries: 3 },
  };

  it('screens every text anyone wrote (task, work items, facts, conflict key), keys and values in their context, numbers too', () => {
    const { command: kept, categories } = screenCommand(command);
    expect(holdsRaw(kept)).toEqual([]);
    expect(kept.task_description).toBe('Review the rollout; questions to [REDACTED:EMAIL]');
    expect(kept.config.conflict_key).toBe('billing line [REDACTED:PHONE]');
    expect(kept.work_items?.[0]?.inputs).toEqual({
      aws_secret_access_key: '[REDACTED:AWS_SECRET_KEY]',
      card: '[REDACTED:CARD]',
      '[REDACTED:EMAIL]': 'owner',
      region: 'eu',
    });
    expect(kept.facts).toEqual({ contact: '[REDACTED:EMAIL]', retries: 3 });
    // What was found, in the detector's order: secrets first.
    expect(categories).toEqual(['AWS_SECRET_KEY', 'CARD', 'EMAIL', 'PHONE']);
  });

  it('keeps what a run needs as it is: ids, paths, personas', () => {
    const { command: kept } = screenCommand(command);
    expect(kept.input_artifacts).toEqual(['notes/rollout.md']);
    expect(kept.output_artifact_path).toBe('outputs/rollout.md');
    expect(kept.config.personas).toEqual(['auditor']);
    expect(kept.work_items?.[0]).toMatchObject({ id: 'check-1', assigned_agent: 'auditor' });
  });

  it('structured data nested past any hand-written depth is left out, said so, never kept unscreened (and never a crash)', () => {
    let deep: unknown = `owner ${EMAIL}`;
    for (let i = 0; i < 3000; i++) deep = [deep];
    const { command: kept, categories } = screenCommand({ ...command, facts: { deep } });
    expect(holdsRaw(kept.facts)).toEqual([]);
    expect(JSON.stringify(kept.facts)).toContain('[OMITTED: nested deeper than 32 levels]');
    expect(categories).toContain('DEEP_NESTING');
  });

  it('leaves a command with nothing sensitive exactly as given, and says nothing was redacted', () => {
    const plain: CommandFile = { task_description: 'Choose the queue for billing', input_artifacts: [], config: {} };
    expect(screenCommand(plain)).toEqual({ command: plain, categories: [] });
  });
});

describe('screenRunState and screenRunEvent: what a checkpoint and its journal keep', () => {
  const raw = (): RunState => ({
    ...startedRun('20260101T000000Z-abc123'),
    source: `from-${EMAIL}.json`,
    command: { task_description: `Call ${PHONE}`, input_artifacts: [], config: {} },
    steps: [
      {
        ...turnStep(1),
        prompt: `Task: call ${PHONE}`,
        reply: `I will write to ${EMAIL}`,
        knowledge: [
          {
            action: 'READ_FILE',
            argument: 'a.md',
            status: 'provided',
            message: 'ok',
            content: `card ${CARD}`,
            reason_code: 'CONTEXT_PROVIDED',
          },
        ],
      },
    ],
    hitl: [
      {
        pause_id: 'p1',
        layer: 'ethics',
        reason_code: 'ETHICS_PII_DETECTED',
        decision: 'continue',
        decided_at: '2026-01-01T00:00:00.000Z',
        note: `ok, ${EMAIL} agreed`,
      },
    ],
    pause: {
      pause_id: 'p2',
      layer: 'arbitration',
      reason_code: 'ARBITRATION_INVESTIGATE',
      message: `ask ${EMAIL}`,
      requested_at: '2026-01-01T00:00:00.000Z',
    },
    summary: `paused: ask ${EMAIL}`,
    loop_plan: `1. phone ${PHONE}`,
  });

  it('screens every text of the state, records what was taken from its command, and keeps its structure', () => {
    const state = raw();
    const kept = screenRunState(state);
    expect(holdsRaw(kept)).toEqual([]);
    expect(kept.command_redacted).toEqual(['PHONE']);
    expect(kept.steps[0]?.knowledge[0]?.content).toBe('card [REDACTED:CARD]');
    expect(kept.hitl[0]?.note).toBe('ok, [REDACTED:EMAIL] agreed');
    // Identity, digests, times and decisions are not texts anyone wrote: unchanged.
    for (const key of ['run_id', 'status', 'created_at', 'updated_at', 'task_sha256', 'trail', 'reroutes'] as const)
      expect(kept[key]).toEqual(state[key]);
    expect(kept.steps[0]).toMatchObject({
      id: state.steps[0]?.id,
      prompt_sha256: state.steps[0]?.prompt_sha256,
      started_at: state.steps[0]?.started_at,
    });
    expect(kept.pause).toMatchObject({ pause_id: 'p2', reason_code: 'ARBITRATION_INVESTIGATE', message: 'ask [REDACTED:EMAIL]' });
  });

  it('screening twice changes nothing, and what was redacted is remembered even once the command holds no value', () => {
    const once = screenRunState(raw());
    expect(screenRunState(once)).toEqual(once);
  });

  it('every journal event that carries text carries it screened', () => {
    const state = raw();
    const events: RunEvent[] = [
      { type: 'step_recorded', step: state.steps[0]! },
      {
        type: 'paused',
        decision: pauseDecision('arbitration', 'ARBITRATION_INVESTIGATE'),
        pause: state.pause!,
        summary: state.summary!,
        loopPlan: state.loop_plan!,
      },
      { type: 'person_decided', entry: state.hitl[0]!, decision: userDecision('RUN', 'HITL_CONTINUE') },
      {
        type: 'finished',
        status: 'stopped',
        decision: sealedStopDecision('ethics', 'ETHICS_PII_DETECTED'),
        finishedAt: '2026-01-01T00:00:00.000Z',
        summary: `stopped: ${EMAIL}`,
      },
      {
        type: 'failed',
        decision: systemStopDecision('queue', 'RUN_FAILED_INTERNAL'),
        at: '2026-01-01T00:00:00.000Z',
        summary: `failed on ${CARD}`,
      },
      {
        type: 'advised',
        advice: aMediatorReading({ acts: [{ class: 'send', object: `email ${EMAIL}` }] }),
      },
    ];
    for (const event of events) {
      expect(holdsRaw(event), event.type).not.toEqual([]);
      expect(holdsRaw(screenRunEvent(event)), event.type).toEqual([]);
      expect(screenRunEvent(event).type).toBe(event.type);
    }
  });
});

describe('a version 2 checkpoint, kept raw before checkpoints were screened', () => {
  it('is read as version 3, screened: the task, the prompts that carried it and the note; steps, digests and the plan as they were', async () => {
    const text = await readFile(new URL('../fixtures/run-state/v2-paused-pii.json', import.meta.url), 'utf8');
    const v2 = JSON.parse(text) as RunState;
    expect(text).toContain(EMAIL);
    const parsed = parseRunState(v2);
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(parsed.value.schemaVersion).toBe(RUN_STATE_VERSION);
    expect(holdsRaw(parsed.value)).toEqual([]);
    expect(parsed.value.command_redacted).toEqual(['EMAIL']);
    expect(parsed.value.hitl[0]?.note).toBe('ok by phone [REDACTED:PHONE]');
    expect(parsed.value.steps[0]?.prompt).toContain('Questions go to [REDACTED:EMAIL].');
    expect(parsed.value.steps.map((s) => s.id)).toEqual(v2.steps.map((s) => s.id));
    expect(parsed.value.task_sha256).toBe(v2.task_sha256);
    expect(parsed.value.plan).toEqual(v2.plan);
  });
});

describe('the conflict a run belongs to (loop policy)', () => {
  it('is the same for the command as given and as its checkpoint keeps it, and names no raw value', () => {
    for (const config of [{}, { conflict_key: `billing for ${EMAIL}` }]) {
      const given: CommandFile = { task_description: `Choose the queue; questions to ${EMAIL}`, input_artifacts: [], config };
      const fingerprint = conflictFingerprint({ command: given }, sha256);
      expect(conflictFingerprint({ command: screenCommand(given).command }, sha256)).toBe(fingerprint);
      expect(fingerprint).not.toContain(EMAIL);
    }
  });
});

describe('screenStrings', () => {
  it('screens every string of a view, keys and nested lists included, and keeps its shape and other values', () => {
    const view = {
      queued: [{ file: 'from-jane.doe@example.com.json', bytes: 12 }],
      'ops@example.org': { at: null, ok: true, n: 3 },
      when: new Date(0),
    };
    const shown = screenStrings(view);
    expect(JSON.stringify(shown)).not.toContain('@example');
    expect(shown.queued[0]).toEqual({ file: expect.stringContaining('[REDACTED:EMAIL]'), bytes: 12 });
    expect(Object.values(shown)[1]).toEqual({ at: null, ok: true, n: 3 });
    expect(shown.when).toBe(view.when);
  });
});
