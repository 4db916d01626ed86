import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { Io } from '../../src/cli/io.js';
import { ProgressReporter } from '../../src/cli/progress.js';

function io(stderr: { isTTY?: boolean; columns?: number }, env: NodeJS.ProcessEnv = {}): { io: Io; text: () => string } {
  const stream = Object.assign(new PassThrough(), stderr);
  let text = '';
  stream.on('data', (d: Buffer) => (text += d.toString()));
  return { io: { stdout: new PassThrough(), stderr: stream, env, cwd: '/' }, text: () => text };
}

const step = { kind: 'step_started' as const, run_id: 'r1', step: 'turn' as const, persona: 'auditor', round: 2, rounds: 3 };

describe('run progress', () => {
  it.each([
    ['not a terminal', {}],
    ['a pseudo-terminal that reports 0 columns', { isTTY: true, columns: 0 }],
    ['a terminal without a width', { isTTY: true }],
  ])('writes one plain line per step on %s', async (_what, stderr) => {
    const t = io(stderr);
    const reporter = new ProgressReporter(t.io);
    reporter.onProgress(step);
    reporter.onProgress({ ...step, persona: 'strategist' });
    reporter.stop();
    await new Promise((r) => setImmediate(r));
    expect(t.text()).toBe('EXECUTING_TASK r1 · round 2/3 · auditor speaking\nEXECUTING_TASK r1 · round 2/3 · strategist speaking\n');
  });

  it('stays quiet with --json', async () => {
    const t = io({});
    new ProgressReporter(t.io, { quiet: true }).onProgress(step);
    await new Promise((r) => setImmediate(r));
    expect(t.text()).toBe('');
  });
});
