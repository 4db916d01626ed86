import { describe, expect, it } from 'vitest';
import {
  explainArbitrationPause,
  explainGateStop,
  explainLoopPolicyStop,
  LOOP_POLICY_WAY_OUT,
  withoutCommands,
} from '../../src/domain/stop-explanation.js';
import { sealedStopDecision } from '../../src/domain/decision.js';
import type { Verdict } from '../../src/domain/verdict.js';

const names = new Map([
  ['a', 'Alpha'],
  ['b', 'Beta'],
]);
const verdict = (persona: string, action: Verdict['action'], rationale: string): Verdict => ({
  persona,
  valid: true,
  action,
  confidence: 0.5,
  rationale,
});

describe('explainArbitrationPause', () => {
  it('names only the personas that did not say proceed, each rationale on one line and at most 200 characters', () => {
    const long = `first line\nsecond ${'x'.repeat(400)}`;
    const text = explainArbitrationPause({
      runId: 'R1',
      reason: 'REL_ARBITRATION_CONFLICT',
      arbitration: { final_action: 'escalate', reasoning: 'pessimistic: the most cautious verdict wins' },
      verdicts: [verdict('a', 'proceed', 'fine'), verdict('b', 'escalate', long)],
      names,
    });
    expect(text).not.toContain('Alpha');
    expect(text).toContain('Beta voted escalate (confidence 0.50): "first line second xxx');
    expect(text).not.toContain('\n');
    const quoted = /"([^"]*)"/.exec(text)?.[1] ?? '';
    expect(quoted).toHaveLength(200);
    expect(quoted.endsWith('…')).toBe(true);
    expect(text).toContain('This means the personas disagreed');
    expect(text).toContain('maestro hitl decide R1 continue');
  });

  it('says that nobody doubted when every verdict was proceed and the scores paused the run', () => {
    const text = explainArbitrationPause({
      runId: 'R2',
      reason: 'ARBITRATION_INVESTIGATE',
      arbitration: {
        final_action: 'investigate',
        reasoning: '1 vector(s) flagged by the consensus threshold',
        held_back_by: { why: '1 vector(s) flagged by the consensus threshold', found: ["vector know: the personas' scores spread 0.5"] },
      },
      verdicts: [verdict('a', 'proceed', 'fine'), verdict('b', 'proceed', 'fine too')],
      names,
    });
    expect(text).toContain(
      "No persona doubted: all 2 said proceed; the pause comes from 1 vector(s) flagged by the consensus threshold: vector know: the personas' scores spread 0.5.",
    );
    expect(text).not.toContain('No persona gave a verdict');
  });
});

describe('the loop policy stop', () => {
  it('the fourth pause and the terminal guard give the same way out', () => {
    const guard = explainGateStop({} as never, sealedStopDecision('acc', 'ACC_STOPPED_IS_TERMINAL'), [], () => false);
    expect(guard).toContain(LOOP_POLICY_WAY_OUT);
    expect(explainLoopPolicyStop(4, 'the council doubted')).toContain(LOOP_POLICY_WAY_OUT);
    expect(LOOP_POLICY_WAY_OUT).toContain('maestro session reset --keep-memory');
  });
});

describe('words for a page with its own buttons', () => {
  it('drop the terminal commands quoted in parentheses and keep the sentence', () => {
    const refusal =
      'Stop it (maestro hitl decide R7 stop), or start a new council session (maestro session reset --keep-memory) and decide again';
    expect(withoutCommands(refusal)).toBe('Stop it, or start a new council session and decide again');
    expect(withoutCommands(explainLoopPolicyStop(4, 'the council doubted'))).not.toContain('maestro ');
    expect(withoutCommands('the draft (see the appendix) stays')).toBe('the draft (see the appendix) stays');
  });
});
