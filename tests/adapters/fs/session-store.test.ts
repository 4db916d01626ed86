import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FsSessionStore } from '../../../src/adapters/fs/session-store.js';
import { StorageError } from '../../../src/domain/errors.js';
import { renderSummary } from '../../../src/domain/memory/summary.js';
import { FakeClock } from '../../fakes/fake-clock.js';
import { tempWorkspace } from '../../fakes/fixtures.js';
import { aRunMemory } from '../../fixtures/domain-builders.js';

let ws: Awaited<ReturnType<typeof tempWorkspace>>;
let store: FsSessionStore;
beforeEach(async () => {
  ws = await tempWorkspace();
  store = new FsSessionStore(path.join(ws.dir, 'session_states'), new FakeClock('2026-03-04T05:06:07.000Z'));
});
afterEach(() => ws.cleanup());

const FIXTURES = path.join(import.meta.dirname, '..', '..', 'fixtures', 'session_states');

describe('session states', () => {
  it('starts a persona fresh when it has no file', async () => {
    const { state, recovered } = await store.load('auditor');
    expect(state).toMatchObject({
      schemaVersion: 3,
      persona_id: 'auditor',
      runs: [],
      tasks: [],
      passages: [],
      archived: { count: 0 },
      outcomes: [],
    });
    expect(recovered).toBeUndefined();
  });

  it('a session file that cannot be read (not its content: the file) is a storage error naming it, never moved aside as corrupt', async () => {
    // A folder where the file should be fails to read as a file whoever runs this (root ignores chmod 000).
    await mkdir(store.fileFor('auditor'), { recursive: true });
    const error = await store.load('auditor').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StorageError);
    expect((error as StorageError).message).toContain(`could not read the session state ${store.fileFor('auditor')}`);
    expect(await readdir(path.dirname(store.fileFor('auditor')))).toEqual(['auditor_session.json']);
  });

  it('round-trips a run through disk, and never appends the same run twice', async () => {
    const memory = aRunMemory('r1', 'Choose the cache', ['Redis fits the billing service.']);
    await store.appendRun('auditor', 'r1', memory);
    await store.appendRun('auditor', 'r1', memory);
    const again = await store.load('auditor');
    expect(again.state.runs).toEqual(['r1']);
    expect(again.state.tasks).toEqual([memory.summary]);
    expect(again.state.passages).toEqual(memory.passages);
    const files = await readdir(path.join(ws.dir, 'session_states'));
    expect(files.filter((f) => f.includes('.tmp') || f.startsWith('.auditor') || f.endsWith('.lock'))).toEqual([]);
  });

  it('the same task done again updates its summary (how many times, the newest decision) instead of adding one', async () => {
    await store.appendRun('auditor', 'r1', aRunMemory('r1', 'Choose the cache'));
    await store.appendRun('auditor', 'r2', aRunMemory('r2', 'Plan the migration'));
    await store.appendRun('auditor', 'r3', aRunMemory('r3', 'Choose the cache'));
    const { state } = await store.load('auditor');
    expect(state.tasks.map((t) => [t.run_id, t.asked, t.times])).toEqual([
      ['r2', 'Plan the migration', 1],
      ['r3', 'Choose the cache', 2],
    ]);
    expect(state.runs).toEqual(['r1', 'r2', 'r3']);
  });

  it('keeps no token counts while the memory is within its budget by bytes, and every one, counted once, once it is past it', async () => {
    const counted: string[] = [];
    const counting = { budget: 120, count: (text: string) => (counted.push(text), text.length) };
    const counting_ = new FsSessionStore(path.join(ws.dir, 'session_states'), new FakeClock('2026-03-04T05:06:07.000Z'), 30, counting);
    const r1 = aRunMemory('r1', 'one', ['first reply']);
    // r1's summary line and passage are 53 bytes (within the budget); with r2's the memory is past it.
    await counting_.appendRun('auditor', 'r1', r1);
    let { state } = await counting_.load('auditor');
    expect([...state.tasks, ...state.passages].map((x) => x.tokens)).toEqual([undefined, undefined]);
    expect(counted).toEqual([]);
    await counting_.appendRun('auditor', 'r2', aRunMemory('r2', 'two', ['a second, longer reply to count']));
    state = (await counting_.load('auditor')).state;
    expect(state.tasks.map((t) => t.tokens)).toEqual(state.tasks.map((t) => renderSummary(t).length));
    expect(state.passages.map((p) => p.tokens)).toEqual([11, 31]);
    await counting_.appendRun('auditor', 'r3', aRunMemory('r3', 'three', ['third']));
    // Each counted once: the summaries' lines and the passages.
    expect(counted.filter((t) => !t.startsWith('- '))).toEqual(['first reply', 'a second, longer reply to count', 'third']);
    expect(counted.filter((t) => t.startsWith('- '))).toHaveLength(3);
  });

  it.each([
    ['not JSON', '{"schemaVersion": 1, "persona_id": '],
    ['the wrong shape', '{"schemaVersion": 1, "persona_id": "auditor", "messages": "lots"}'],
    ['an unknown version', '{"schemaVersion": 99, "persona_id": "auditor", "updated_at": "x", "runs": [], "messages": []}'],
    ['another persona', '{"schemaVersion": 1, "persona_id": "coordinator", "updated_at": "x", "runs": [], "messages": []}'],
    [
      'a version 3 file of the wrong shape',
      '{"schemaVersion": 3, "persona_id": "auditor", "updated_at": "x", "runs": [], "tasks": "none"}',
    ],
  ])('moves a corrupt file (%s) aside, reports it, and starts fresh', async (_what, text) => {
    const file = path.join(ws.dir, 'session_states', 'auditor_session.json');
    await writeFile(file, text);
    const { state, recovered } = await store.load('auditor');
    expect(state.passages).toEqual([]);
    expect(recovered?.movedTo).toBe(`${file}.corrupt-2026-03-04T05-06-07-000Z`);
    expect(recovered?.problem).toBeTruthy();
    expect(await readFile(recovered?.movedTo ?? '', 'utf8')).toBe(text);
  });

  it("a file corrupted between a run's load and its save: the save moves it aside and says so, keeping the run", async () => {
    await store.appendRun('auditor', 'run-1', aRunMemory('run-1', 'task 1'));
    const file = path.join(ws.dir, 'session_states', 'auditor_session.json');
    await writeFile(file, '{"schemaVersion": 3, "persona_id": ');
    const recovered = await store.appendRun('auditor', 'run-2', aRunMemory('run-2', 'task 2'));
    expect(recovered?.movedTo).toMatch(`${file}.corrupt-2026-03-04T05-06-07-`);
    expect(await readFile(recovered?.movedTo ?? '', 'utf8')).toBe('{"schemaVersion": 3, "persona_id": ');
    expect((await store.load('auditor')).state.runs).toEqual(['run-2']);
    expect(await store.appendRun('auditor', 'run-3', aRunMemory('run-3', 'task 3'))).toBeUndefined();
  });

  it('reads version 1 files (the first release) and migrates them: a summary per run, its replies as passages', async () => {
    await writeFile(
      path.join(ws.dir, 'session_states', 'auditor_session.json'),
      await readFile(path.join(FIXTURES, 'v1-auditor_session.json')),
    );
    const { state, recovered } = await store.load('auditor');
    expect(recovered).toBeUndefined();
    expect(state).toMatchObject({ schemaVersion: 3, runs: ['20261122T073818Z-faa99f'], archived: { count: 0 }, outcomes: [] });
    expect(state.tasks).toEqual([
      {
        run_id: '20261122T073818Z-faa99f',
        at: '2026-11-22T07:38:18.990Z',
        asked: 'Assess the migration plan',
        decided: 'your last word: **Auditor, round 1** — looking at risks.',
        facts: [],
        times: 1,
      },
    ]);
    expect(state.passages.map((p) => [p.from, p.text])).toEqual([['self', 'Auditor, round 1 — looking at risks.']]);
  });

  it('reads version 2 files: what it said and was shown as passages, its verdict as the decision, archived runs as summaries', async () => {
    await writeFile(
      path.join(ws.dir, 'session_states', 'strategist_session.json'),
      await readFile(path.join(FIXTURES, 'v2-strategist_session.json')),
    );
    const { state, recovered } = await store.load('strategist');
    expect(recovered).toBeUndefined();
    expect(state.archived).toEqual({ count: 1 });
    // Its record of agreeing with the council is not a confirmed outcome: it is dropped.
    expect(state.outcomes).toEqual([]);
    expect(state).not.toHaveProperty('track');
    expect(state.tasks.map((t) => [t.run_id, t.asked, t.decided])).toEqual([
      ['20261120T090000Z-bbbbbb', 'Plan the migration of the user database', 'your last word: Move in two steps, reads first.'],
      ['20261125T100000Z-aaaaaa', 'Choose the cache for the billing service', 'you said proceed: Redis with a 5-minute expiry'],
    ]);
    expect(state.passages.map((p) => [p.from, p.text])).toEqual([
      ['self', 'Redis fits: the billing team already runs Redis 7.2 and the invoices are read far more often than written.'],
      ['council', 'The cache must expire invoices after 5 minutes, or refunds show stale totals.'],
      ['self', 'Verdict: proceed (confidence 0.80): Redis with a 5-minute expiry'],
    ]);
    // Saved again, it is a version 3 file.
    await store.appendRun('strategist', 'r-next', aRunMemory('r-next', 'Plan the rollout'));
    expect(JSON.parse(await readFile(store.fileFor('strategist'), 'utf8'))).toMatchObject({ schemaVersion: 3 });
  });

  it('reads the interim version 3 of a development build (messages and confirmed outcomes) and keeps its outcomes', async () => {
    const outcome = { run_id: 'r-1', said: 'investigate', final: 'proceed', outcome: 'wrong', right: true, at: '2026-11-28T10:00:00.000Z' };
    const interim = {
      schemaVersion: 3,
      persona_id: 'auditor',
      updated_at: '2026-11-28T10:00:00.000Z',
      runs: ['r-1'],
      messages: [{ role: 'assistant', content: 'Investigate the cache first.', run_id: 'r-1', ts: '2026-11-28T09:00:00.000Z' }],
      archived: { count: 0, recent: [] },
      outcomes: [outcome],
    };
    await writeFile(path.join(ws.dir, 'session_states', 'auditor_session.json'), JSON.stringify(interim));
    const { state, recovered } = await store.load('auditor');
    expect(recovered).toBeUndefined();
    expect(state.outcomes).toEqual([outcome]);
    expect(state.passages.map((p) => p.text)).toEqual(['Investigate the cache first.']);
    expect(state.tasks.map((t) => t.run_id)).toEqual(['r-1']);
  });
});
