import * as fs from 'node:fs/promises';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FsRunStore } from '../../../src/adapters/fs/run-store.js';
import { JOURNAL_FILE, readCheckpoint } from '../../../src/adapters/fs/run-journal.js';
import { WorkspacePaths } from '../../../src/adapters/fs/workspace-paths.js';
import { pauseDecision, runDecision } from '../../../src/domain/decision.js';
import { StorageError } from '../../../src/domain/errors.js';
import type { Clock } from '../../../src/domain/ports.js';
import { applyRunEvent, type RunEvent } from '../../../src/domain/run-machine.js';
import type { RunState } from '../../../src/domain/run-state.js';
import { saveWhole, startedRun, turnStep } from '../../fixtures/journal-run.js';
import { faultyFs, noSpace } from '../../helpers/faulty-fs.js';

const RUN = '20260101T000000Z-abc123';
let tick = 0;
const clock: Clock = { now: () => new Date(Date.UTC(2026, 0, 1, 0, 0, tick++)) };

let root: string;
let paths: WorkspacePaths;
beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'maestro-runs-'));
  paths = new WorkspacePaths(root);
  tick = 0;
});
afterEach(() => rm(root, { recursive: true, force: true }));

const runDir = () => paths.runDir(RUN);
const journal = () => path.join(runDir(), JOURNAL_FILE);
const stateFile = () => path.join(runDir(), 'state.json');
const journalText = () => readFile(journal(), 'utf8');
/** What a crash mid-write leaves: bytes written where the next line goes. */
async function writeAtJournalEnd(tail: string): Promise<void> {
  const handle = await fs.open(journal(), 'r+');
  await handle.write(tail, Buffer.byteLength(await journalText()), 'utf8');
  await handle.close();
}
const exists = (p: string) =>
  fs.access(p).then(
    () => true,
    () => false,
  );

const initial = (): RunState => startedRun(RUN);
const step = turnStep;

/** A run's state changed event by event straight through the store (the ledger adds the audit log and files). */
class StoreRun {
  constructor(
    public state: RunState,
    private readonly store: FsRunStore,
    private readonly clock: Clock,
  ) {}

  async apply(event: RunEvent): Promise<RunState> {
    const before = this.state;
    const at = this.clock.now().toISOString();
    this.state = applyRunEvent(before, event, at);
    await this.store.recordAhead({ before, event, at, after: this.state });
    return this.state;
  }
}

/** A run started and `n` steps recorded through the store, as the engine does. */
async function recorded(store: FsRunStore, n: number): Promise<StoreRun> {
  const state = initial();
  await saveWhole(store, state);
  const run = new StoreRun(state, store, clock);
  for (let i = 0; i < n; i++) await run.apply({ type: 'step_recorded', step: step(i) });
  return run;
}

describe('FsRunStore: the checkpoint as a journal', () => {
  it('appends one line per event while the run goes on, and load replays them to the same state', async () => {
    const store = new FsRunStore(paths);
    const run = await recorded(store, 3);
    expect((await journalText()).split('\n').filter(Boolean)).toHaveLength(4); // a whole state, then 3 events
    expect(await exists(stateFile())).toBe(false);
    expect(await new FsRunStore(paths).load(RUN)).toEqual(run.state);
    expect((await new FsRunStore(paths).load(RUN))?.steps.map((s) => s.index)).toEqual([0, 1, 2]);
  });

  it('folds the journal into state.json when the run ends, and removes it', async () => {
    const store = new FsRunStore(paths);
    const run = await recorded(store, 2);
    await run.apply({
      type: 'finished',
      status: 'completed',
      decision: runDecision('queue', 'RUN_COMPLETED'),
      finishedAt: '2026-01-01T00:01:00.000Z',
      summary: 'done',
    });
    expect(await exists(journal())).toBe(false);
    expect(JSON.parse(await readFile(stateFile(), 'utf8'))).toEqual(run.state);
    expect(await store.load(RUN)).toEqual(run.state);
  });

  it('close folds a running run into state.json (an interrupted run), and a later process goes on from it', async () => {
    const store = new FsRunStore(paths);
    const run = await recorded(store, 2);
    await store.close(RUN);
    expect(await exists(journal())).toBe(false);
    expect(JSON.parse(await readFile(stateFile(), 'utf8')).steps).toHaveLength(2);

    const later = new FsRunStore(paths);
    const resumed = new StoreRun((await later.load(RUN)) as RunState, later, clock);
    await resumed.apply({ type: 'step_recorded', step: step(2) });
    expect((await new FsRunStore(paths).load(RUN))?.steps.map((s) => s.id)).toEqual(run.state.steps.map((s) => s.id).concat('turn:r1:p2'));
  });

  it('a crash between two steps (the process gone, nothing folded): the next process loads every acknowledged step and repeats none', async () => {
    await recorded(new FsRunStore(paths), 3); // no close: the process was killed
    const next = new FsRunStore(paths);
    const state = (await next.load(RUN)) as RunState;
    expect(state.steps.map((s) => s.id)).toEqual(['turn:r1:p0', 'turn:r1:p1', 'turn:r1:p2']);
    const run = new StoreRun(state, next, clock);
    await run.apply({ type: 'step_recorded', step: step(1) }); // the engine never asks again, and if it did the step is kept once
    await run.apply({ type: 'step_recorded', step: step(3) });
    const after = (await new FsRunStore(paths).load(RUN)) as RunState;
    expect(after.steps.map((s) => [s.id, s.index])).toEqual([
      ['turn:r1:p0', 0],
      ['turn:r1:p1', 1],
      ['turn:r1:p2', 2],
      ['turn:r1:p3', 3],
    ]);
    // The journal of the killed process was folded into state.json before this one started its own.
    expect(JSON.parse(await readFile(stateFile(), 'utf8')).steps).toHaveLength(3);
    expect((await journalText()).split('\n').filter(Boolean)).toHaveLength(3);
  });

  it.each([
    ['a line cut short (no newline)', '{"at":"2026-01-01T00:00:09.000Z","event":{"type":"step_rec'],
    ['a whole last line that does not read (a crash mid-flush)', '\u0000\u0000\u0000\u0000\n'],
  ])('ignores %s at the end: it was never acknowledged', async (_name, tail) => {
    const run = await recorded(new FsRunStore(paths), 2);
    await writeAtJournalEnd(tail);
    expect(await new FsRunStore(paths).load(RUN)).toEqual(run.state);
    // The next process starts from the acknowledged state and its journal reads whole.
    const next = new FsRunStore(paths);
    const resumed = new StoreRun((await next.load(RUN)) as RunState, next, clock);
    await resumed.apply({ type: 'step_recorded', step: step(2) });
    expect((await new FsRunStore(paths).load(RUN))?.steps).toHaveLength(3);
    expect(await journalText()).not.toContain('\u0000');
  });

  it('refuses a journal damaged before its last line, and says where', async () => {
    await recorded(new FsRunStore(paths), 3);
    const lines = (await journalText()).split('\n');
    lines[1] = 'x';
    await writeFile(journal(), lines.join('\n'));
    const error = await new FsRunStore(paths).load(RUN).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StorageError);
    expect((error as Error).message).toMatch(/journal\.jsonl is damaged at line 2/);
  });

  it('a run killed after its ending reached the journal, before the fold: closing it later folds it; a live run is left', async () => {
    // The fold's write of state.json fails, as when the process dies there: the ending is in the journal only.
    let dying = true;
    const fs = faultyFs({ write: (file) => (dying && file.includes('state.json') ? new Error('killed') : undefined) });
    const run = await recorded(new FsRunStore(paths, { fs }), 2);
    await run
      .apply({
        type: 'finished',
        status: 'completed',
        decision: runDecision('queue', 'RUN_COMPLETED'),
        finishedAt: '2026-01-01T00:01:00.000Z',
        summary: 'done',
      })
      .catch(() => undefined);
    dying = false;
    expect(await exists(journal())).toBe(true);
    expect((await new FsRunStore(paths).load(RUN))?.status).toBe('completed');

    await new FsRunStore(paths).close(RUN);
    expect(await exists(journal())).toBe(false);
    expect(JSON.parse(await readFile(stateFile(), 'utf8'))).toMatchObject({ status: 'completed', summary: 'done' });

    // A journal of a run that may still go on is another process's to fold: left as it is.
    await rm(runDir(), { recursive: true });
    await recorded(new FsRunStore(paths), 1);
    await new FsRunStore(paths).close(RUN);
    expect(await exists(journal())).toBe(true);
  });

  it('a crash while folding (state.json renamed, the journal not yet removed) reads as the same state', async () => {
    const store = new FsRunStore(paths);
    const run = await recorded(store, 2);
    const text = await readFile(journal(), 'utf8');
    await store.close(RUN);
    await writeFile(journal(), text); // as if the removal never reached the disk
    expect(await new FsRunStore(paths).load(RUN)).toEqual(run.state);
  });

  it('a failed append (a full disk) leaves no fragment: the next append starts on a clean line', async () => {
    let failNext = false;
    const store = new FsRunStore(paths, { fs: shortThenFull(() => (failNext ? 7 : undefined)) });
    const run = await recorded(store, 1);
    failNext = true;
    const error = await run.apply({ type: 'step_recorded', step: step(1) }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StorageError);
    expect((error as StorageError).errno).toBe('ENOSPC');
    expect((await journalText()).endsWith('\n')).toBe(true);
    expect((await new FsRunStore(paths).load(RUN))?.steps).toHaveLength(1);
    failNext = false;
    const again = new StoreRun((await store.load(RUN)) as RunState, store, clock);
    await again.apply({ type: 'step_recorded', step: step(1) });
    expect((await new FsRunStore(paths).load(RUN))?.steps).toHaveLength(2);
  });

  it('folds a journal that grew past its limit and starts a new one', async () => {
    const store = new FsRunStore(paths, { compactBytes: 2_000 });
    const run = await recorded(store, 12);
    expect((await journalText().catch(() => '')).length).toBeLessThan(4_000);
    expect(JSON.parse(await readFile(stateFile(), 'utf8')).steps.length).toBeGreaterThan(6);
    expect(await new FsRunStore(paths).load(RUN)).toEqual(run.state);
  });

  it('a whole state saved while the run goes on joins the journal; one that ended replaces it in state.json', async () => {
    const store = new FsRunStore(paths);
    const run = await recorded(store, 1);
    const errored = { ...run.state, status: 'error' as const, summary: 'storage failed' };
    await saveWhole(store, errored);
    expect(await exists(journal())).toBe(false);
    expect(await store.load(RUN)).toEqual(errored);
  });

  it('readers of checkpoints (status, runs, prune) see the journal of a running run', async () => {
    await recorded(new FsRunStore(paths), 2);
    expect(((await readCheckpoint(runDir()))?.json as RunState).steps).toHaveLength(2);
    expect(await readdir(runDir())).toEqual([JOURNAL_FILE]);
  });
});

describe('FsRunStore: what it keeps is screened, and the command as given goes when the run ends', () => {
  const EMAIL = 'jane.doe@example.com';
  const raw = (): RunState =>
    ({ ...initial(), command: { task_description: `Write to ${EMAIL}`, input_artifacts: [], config: {} } }) as RunState;
  const rawStep = {
    ...step(0),
    prompt: `Task: write to ${EMAIL}`,
    knowledge: [
      {
        action: 'READ_FILE',
        argument: 'a.md',
        status: 'provided',
        message: 'ok',
        content: `owner ${EMAIL}`,
        reason_code: 'CONTEXT_PROVIDED',
      },
    ],
  } as RunState['steps'][number];
  const decided = runDecision('dispatch', 'RUN_COMPLETED');

  it('the journal of a running run holds no raw text (its whole state, each step), and loads screened', async () => {
    const store = new FsRunStore(paths);
    const run = new StoreRun(raw(), store, clock);
    await saveWhole(store, run.state);
    await run.apply({ type: 'step_recorded', step: rawStep });
    const text = await journalText();
    expect(text.split('\n').filter(Boolean)).toHaveLength(2);
    expect(text).not.toContain(EMAIL);
    const loaded = await store.load(RUN);
    expect(loaded?.command.task_description).toBe('Write to [REDACTED:EMAIL]');
    expect(loaded?.command_redacted).toEqual(['EMAIL']);
    expect(loaded?.steps[0]?.prompt).toBe('Task: write to [REDACTED:EMAIL]');
    expect(loaded?.steps[0]?.knowledge[0]?.content).toBe('owner [REDACTED:EMAIL]');
    // The engine goes on with its own copy: later turns of this process see what they were sent.
    expect(run.state.steps[0]?.prompt).toBe(`Task: write to ${EMAIL}`);
  });

  it.each([
    [
      'paused',
      true,
      {
        type: 'paused',
        decision: pauseDecision('ethics', 'ETHICS_PII_DETECTED'),
        pause: { pause_id: 'p1', layer: 'ethics', reason_code: 'ETHICS_PII_DETECTED', message: `found ${EMAIL}`, requested_at: 'x' },
        summary: `found ${EMAIL}`,
      },
    ],
    ['completed', false, { type: 'finished', status: 'completed', decision: decided, finishedAt: 'x', summary: 'done' }],
    ['stopped', false, { type: 'finished', status: 'stopped', decision: decided, finishedAt: 'x', summary: `stopped: ${EMAIL}` }],
    ['invalid', false, { type: 'finished', status: 'invalid', decision: decided, finishedAt: 'x', summary: 'broken personas' }],
  ] as const)('a run that is %s: state.json holds no raw text; the command as given stays: %s', async (_status, stays, event) => {
    const store = new FsRunStore(paths);
    const run = new StoreRun(raw(), store, clock);
    await saveWhole(store, run.state);
    await store.saveFile(RUN, 'command.json', JSON.stringify({ task_description: `Write to ${EMAIL}` }));
    await run.apply(event as never);
    expect(await exists(journal())).toBe(false);
    expect(await readFile(stateFile(), 'utf8')).not.toContain(EMAIL);
    expect(await exists(path.join(runDir(), 'command.json'))).toBe(stays);
  });
});

/** The real file system; once `fail()` answers a byte count, the next write takes that many bytes, then the disk is full. */
function shortThenFull(fail: () => number | undefined) {
  let full = false;
  return faultyFs({
    write: () => {
      const cap = fail();
      if (cap === undefined) {
        full = false;
        return undefined;
      }
      if (full) return noSpace();
      full = true;
      return cap;
    },
  });
}
