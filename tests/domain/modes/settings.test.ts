import { describe, expect, it } from 'vitest';
import { MODE_DEFAULTS, ModeName, ModeOptions, planMode, readModeSettings } from '../../../src/domain/modes/settings.js';

describe('readModeSettings: the settings a run fixed when it started', () => {
  it('gives the defaults for a plan that fixed none (a plan written before modes had settings)', () => {
    expect(readModeSettings({})).toEqual(MODE_DEFAULTS);
  });

  it('reads each settings object once; another object is read on its own', () => {
    const fixed = { composition: 'bayesian_fusion', consensus_threshold: 0.4 };
    const read = readModeSettings(fixed);
    expect(readModeSettings(fixed)).toBe(read);
    expect(Object.isFrozen(read)).toBe(true);
    expect(readModeSettings({ ...fixed, consensus_threshold: 0.1 })).toMatchObject({
      composition: 'bayesian_fusion',
      consensusThreshold: 0.1,
    });
    expect(read.consensusThreshold).toBe(0.4);
  });

  it('keeps every value that is in range', () => {
    const settings = readModeSettings({
      composition: 'bayesian_fusion',
      weighting: 'domain',
      consensus_threshold: 0,
      relevance_floor: 0.4,
      review: 'anonymous',
      concurrency: 16,
      call_timeout_ms: 100,
      max_iterations: 20,
      max_replans: 3,
      parallel_items: true,
      supervisor: 'coordinator',
      planner: 'strategist',
      reviewer: 'auditor',
    });
    expect(settings).toEqual({
      composition: 'bayesian_fusion',
      weighting: 'domain',
      consensusThreshold: 0,
      consensusMeasure: 'spread',
      uncertaintyThreshold: 0.7,
      relevanceFloor: 0.4,
      review: 'anonymous',
      concurrency: 16,
      callTimeoutMs: 100,
      maxIterations: 20,
      maxReplans: 3,
      parallelItems: true,
      itemMemory: false,
      supervisor: 'coordinator',
      planner: 'strategist',
      reviewer: 'auditor',
    });
  });

  it.each([
    ['composition', 'median', 'composition'],
    ['weighting', 'votes', 'weighting'],
    ['consensus_threshold', 1.5, 'consensusThreshold'],
    ['consensus_threshold', -0.1, 'consensusThreshold'],
    ['review', 'public', 'review'],
    ['max_replans', 4, 'maxReplans'],
    ['max_replans', -1, 'maxReplans'],
    ['concurrency', 0, 'concurrency'],
    ['concurrency', 17, 'concurrency'],
    ['concurrency', 2.5, 'concurrency'],
    ['concurrency', '4', 'concurrency'],
    ['call_timeout_ms', 99, 'callTimeoutMs'],
    ['call_timeout_ms', 3_600_001, 'callTimeoutMs'],
    ['max_iterations', 0, 'maxIterations'],
    ['max_iterations', 21, 'maxIterations'],
    ['max_iterations', 1000, 'maxIterations'],
    ['parallel_items', 'yes', 'parallelItems'],
  ] as const)('%s %j is out of range: the default, never the value', (key, value, field) => {
    expect(readModeSettings({ [key]: value })[field]).toBe(MODE_DEFAULTS[field]);
  });

  it('names a supervisor and a reviewer only when the plan gave a name', () => {
    const settings = readModeSettings({ supervisor: 7, reviewer: null });
    expect('supervisor' in settings).toBe(false);
    expect('reviewer' in settings).toBe(false);
  });

  it('reads one value out of range without losing the others', () => {
    expect(readModeSettings({ concurrency: 99, review: 'anonymous' })).toMatchObject({
      concurrency: MODE_DEFAULTS.concurrency,
      review: 'anonymous',
    });
  });
});

describe('planMode: the mode a run plans', () => {
  const command = (mode?: 'parallel' | 'supervisor', work_items?: unknown[]) => ({
    config: mode ? { mode } : {},
    ...(work_items ? { work_items } : {}),
  });

  it('is work_items whenever the command carries work items, whatever the modes say', () => {
    expect(planMode(command('parallel', [{ id: 'a' }]), 'supervisor')).toBe('work_items');
  });

  it("is otherwise the command's mode, then the workspace's, then round_robin", () => {
    expect(planMode(command('parallel'), 'supervisor')).toBe('parallel');
    expect(planMode(command(), 'supervisor')).toBe('supervisor');
    expect(planMode(command(), undefined)).toBe('round_robin');
    expect(planMode(command(undefined, []), undefined)).toBe('round_robin');
  });
});

describe('the mode settings a command or config may give', () => {
  it('refuses work_items as config.mode, saying how work items are run', () => {
    const parsed = ModeName.safeParse('work_items');
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]?.message).toContain('a command with `work_items` runs them as its own mode');
  });

  it.each([
    ['concurrency', 17],
    ['max_iterations', 21],
    ['call_timeout_ms', 3_600_001],
    ['consensus_threshold', 1.01],
  ] as const)('refuses %s %j', (key, value) => {
    expect(ModeOptions[key].safeParse(value).success).toBe(false);
  });
});
