import { EventEmitter } from 'node:events';
import { describe, expect, it, vi } from 'vitest';
import type { WatchEvent } from '../../src/domain/queue.js';
import type { Io } from '../../src/cli/io.js';
import { handleStopSignals, type SignalProcess } from '../../src/cli/stop-signals.js';
import { pickWatchOutput, WatchReporter } from '../../src/cli/watch-reporter.js';

function fakeIo(env: NodeJS.ProcessEnv = {}, isTTY = false): Io & { out: () => string } {
  let text = '';
  const stream = { write: (s: string) => ((text += s), true), isTTY } as unknown as NodeJS.WritableStream & { isTTY?: boolean };
  return { stdout: stream, stderr: stream, env, cwd: '/', out: () => text };
}

const RUN = '20260101T000000Z-abcdef';
const story: WatchEvent[] = [
  { kind: 'started', state: 'AWAITING_COMMAND', pid: 42, workspace: '/ws', once: false, recovered: 1, owned_by_others: 0 },
  { kind: 'claimed', state: 'EXECUTING_TASK', from: 'AWAITING_COMMAND', run_id: RUN, source: 'command.json', resume: 'checkpoint' },
  { kind: 'step', state: 'EXECUTING_TASK', run_id: RUN, step: 'turn', persona: 'auditor', round: 2, rounds: 3 },
  { kind: 'producing_artifact', state: 'PRODUCING_ARTIFACT', from: 'EXECUTING_TASK', run_id: RUN, path: 'outputs/x.md' },
  {
    kind: 'finished',
    state: 'AWAITING_COMMAND',
    from: 'PRODUCING_ARTIFACT',
    run_id: RUN,
    source: 'command.json',
    status: 'completed',
    decision: 'RUN',
    reason_code: 'RUN_COMPLETED',
    artifact: '/ws/outputs/x.md',
    audit_log: '/ws/.maestro/audit/x.jsonl',
    rejected_to: null,
    message: 'completed: proceed',
    queued: 0,
  },
  { kind: 'stopped', state: 'STOPPED', from: 'AWAITING_COMMAND', reason: 'signal' },
];

describe('WatchReporter', () => {
  it('off a terminal, prints one plain line per transition, without colour under NO_COLOR', () => {
    const io = fakeIo({ NO_COLOR: '1', FORCE_COLOR: '1' });
    const reporter = new WatchReporter(io, { output: pickWatchOutput(io, false) });
    for (const e of story) reporter.onEvent(e);
    expect(io.out()).toBe(
      [
        'AWAITING_COMMAND watching /ws/commands (pid 42) — 1 recovered from a previous run',
        `EXECUTING_TASK ${RUN} ← command.json (resuming from its checkpoint)`,
        `PRODUCING_ARTIFACT ${RUN} → outputs/x.md`,
        `AWAITING_COMMAND ✔ completed ${RUN} command.json — completed: proceed`,
        '    artifact:  /ws/outputs/x.md',
        'STOPPED on a signal; anything interrupted resumes on the next start',
        '',
      ].join('\n'),
    );
  });

  it('a worker says it takes commands from the engine, not from a commands/ folder', () => {
    const io = fakeIo({ NO_COLOR: '1' });
    const reporter = new WatchReporter(io, {
      output: pickWatchOutput(io, false),
      takesFrom: 'the engine at postgres://maestro:***@db/maestro',
    });
    reporter.onEvent(story[0]!);
    expect(io.out()).toBe(
      'AWAITING_COMMAND taking commands from the engine at postgres://maestro:***@db/maestro, workspace /ws (pid 42) — 1 recovered from a previous run\n',
    );
  });

  it("a worker prints the path of a command it rejected whole: the intake's host and workspace, where the intake moves it", () => {
    const io = fakeIo({ NO_COLOR: '1' });
    const reporter = new WatchReporter(io, { output: pickWatchOutput(io, false), takesFrom: 'the engine at postgres://db/maestro' });
    const place = 'intake-host:/srv/a very long workspace name/that goes on/.maestro/rejected/quarterly-migration-review-command.json';
    reporter.onEvent({ ...(story[4] as Extract<WatchEvent, { kind: 'finished' }>), status: 'invalid', artifact: null, rejected_to: place });
    expect(io.out().split('\n')[1]).toBe(`    moved to:  ${place} by the intake (reason in ${place}.error.json)`);
  });

  it('does not say a person decided a run that resumes on its own (a route that answers again resumes its outage pauses)', () => {
    const io = fakeIo({ NO_COLOR: '1' });
    const reporter = new WatchReporter(io, { output: pickWatchOutput(io, false) });
    reporter.onEvent({
      kind: 'claimed',
      state: 'EXECUTING_TASK',
      from: 'AWAITING_COMMAND',
      run_id: RUN,
      source: 'c.json',
      resume: 'decision',
    });
    expect(io.out()).toBe(`EXECUTING_TASK ${RUN} ← c.json (continuing after a decision on its pause, from its checkpoint)\n`);
    reporter.onEvent({
      kind: 'claimed',
      state: 'EXECUTING_TASK',
      from: 'AWAITING_COMMAND',
      run_id: RUN,
      source: 'c.json',
      resume: 'outage',
    });
    expect(io.out().split('\n')[1]).toBe(
      `EXECUTING_TASK ${RUN} ← c.json (resumed after the outage: its route answers again; from its checkpoint)`,
    );
  });

  it('--once that stops with commands still queued says how many, not that the queue is empty', () => {
    const io = fakeIo({ NO_COLOR: '1' });
    const reporter = new WatchReporter(io, { output: pickWatchOutput(io, false) });
    reporter.onEvent({ kind: 'stopped', state: 'STOPPED', from: 'AWAITING_COMMAND', reason: 'once', left: 3 });
    reporter.onEvent({ kind: 'stopped', state: 'STOPPED', from: 'AWAITING_COMMAND', reason: 'once', left: 0 });
    expect(io.out()).toBe('STOPPED with 3 command(s) left in commands/ (--once)\nSTOPPED the queue is empty (--once)\n');
  });

  it('with --json, prints one NDJSON object per transition (steps are not transitions)', () => {
    const io = fakeIo();
    const reporter = new WatchReporter(io, { output: pickWatchOutput(io, true), now: () => new Date('2026-01-01T00:00:00Z') });
    for (const e of story) reporter.onEvent(e);
    const lines = io
      .out()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => l.kind)).toEqual(['started', 'claimed', 'producing_artifact', 'finished', 'stopped']);
    expect(lines.map((l) => l.state)).toEqual(['AWAITING_COMMAND', 'EXECUTING_TASK', 'PRODUCING_ARTIFACT', 'AWAITING_COMMAND', 'STOPPED']);
    expect(lines[0]).toMatchObject({ ts: '2026-01-01T00:00:00.000Z', pid: 42 });
  });

  it('uses a spinner on a terminal unless CI is set', () => {
    const terminal = (env: Record<string, string>) => {
      const io = fakeIo(env, true);
      Object.assign(io.stdout, { columns: 80 });
      return io;
    };
    expect(pickWatchOutput(terminal({}), false)).toBe('spinner');
    expect(pickWatchOutput(terminal({ CI: 'true' }), false)).toBe('lines');
    // A terminal that does not say how wide it is gets plain lines too.
    expect(pickWatchOutput(fakeIo({}, true), false)).toBe('lines');
    expect(pickWatchOutput(fakeIo({}, true), true)).toBe('json');
    const zeroColumns = fakeIo({}, true);
    Object.assign(zeroColumns.stdout, { columns: 0 });
    expect(pickWatchOutput(zeroColumns, false)).toBe('lines');
  });
});

describe('handleStopSignals', () => {
  function fakeProcess(): SignalProcess & EventEmitter & { kill: ReturnType<typeof vi.fn> } {
    return Object.assign(new EventEmitter(), { pid: 4242, kill: vi.fn() }) as never;
  }

  it('asks for a clean stop on the first signal and re-raises the second with its default action', () => {
    const proc = fakeProcess();
    const onFirst = vi.fn();
    const beforeExit = vi.fn();
    handleStopSignals(proc, { onFirst, beforeExit });
    proc.emit('SIGTERM', 'SIGTERM');
    expect(onFirst).toHaveBeenCalledTimes(1);
    expect(proc.kill).not.toHaveBeenCalled();
    proc.emit('SIGINT', 'SIGINT');
    expect(beforeExit).toHaveBeenCalledTimes(1);
    expect(proc.kill).toHaveBeenCalledWith(4242, 'SIGINT');
    // Our handlers are gone, so the re-raised signal takes its default action.
    expect(proc.listenerCount('SIGINT') + proc.listenerCount('SIGTERM')).toBe(0);
  });

  it('removes its handlers when disposed', () => {
    const proc = fakeProcess();
    const dispose = handleStopSignals(proc, { onFirst: vi.fn(), beforeExit: vi.fn() });
    dispose();
    expect(proc.listenerCount('SIGINT') + proc.listenerCount('SIGTERM')).toBe(0);
  });
});
