import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FsSessionStore } from '../../../src/adapters/fs/session-store.js';
import { FakeClock } from '../../fakes/fake-clock.js';
import { tempWorkspace } from '../../fakes/fixtures.js';

let ws: Awaited<ReturnType<typeof tempWorkspace>>;
let store: FsSessionStore;
beforeEach(async () => {
  ws = await tempWorkspace();
  store = new FsSessionStore(path.join(ws.dir, 'session_states'), new FakeClock('2026-03-04T05:06:07.000Z'));
});
afterEach(() => ws.cleanup());

describe('session states', () => {
  it('starts a persona fresh when it has no file', async () => {
    const { state, recovered } = await store.load('auditor');
    expect(state).toMatchObject({
      schemaVersion: 3,
      persona_id: 'auditor',
      runs: [],
      messages: [],
      archived: { count: 0, recent: [] },
      outcomes: [],
    });
    expect(recovered).toBeUndefined();
  });

  it('round-trips a history through disk, and never appends the same run twice', async () => {
    const msgs = [
      { role: 'user' as const, content: 'briefing', run_id: 'r1', ts: 't' },
      { role: 'assistant' as const, content: 'reply', run_id: 'r1', ts: 't' },
    ];
    await store.appendRun('auditor', 'r1', msgs);
    await store.appendRun('auditor', 'r1', msgs);
    const again = await store.load('auditor');
    expect(again.state.runs).toEqual(['r1']);
    expect(again.state.messages).toEqual(msgs);
    const files = await readdir(path.join(ws.dir, 'session_states'));
    expect(files.filter((f) => f.includes('.tmp') || f.startsWith('.auditor') || f.endsWith('.lock'))).toEqual([]);
  });

  it('keeps no token counts while the history is within its budget by bytes, and every one, counted once, once it is past it', async () => {
    const counted: string[] = [];
    const counting = {
      // r1 is 21 bytes (within the budget); with r2 the history is 60 bytes: past it.
      budget: 32,
      count: (text: string) => (counted.push(text), text.length),
    };
    const counting_ = new FsSessionStore(path.join(ws.dir, 'session_states'), new FakeClock('2026-03-04T05:06:07.000Z'), 30, counting);
    await counting_.appendRun('auditor', 'r1', [
      { role: 'user', content: 'briefing', run_id: 'r1', ts: 't' },
      { role: 'assistant', content: 'reply', run_id: 'r1', ts: 't' },
    ]);
    expect((await counting_.load('auditor')).state.messages.map((m) => m.tokens)).toEqual([undefined, undefined]);
    expect(counted).toEqual([]);
    await counting_.appendRun('auditor', 'r2', [
      { role: 'user', content: 'a longer briefing', run_id: 'r2', ts: 't' },
      { role: 'assistant', content: 'a longer reply', run_id: 'r2', ts: 't' },
    ]);
    expect((await counting_.load('auditor')).state.messages.map((m) => m.tokens)).toEqual([8, 5, 17, 14]);
    await counting_.appendRun('auditor', 'r3', [{ role: 'user', content: 'third', run_id: 'r3', ts: 't' }]);
    expect(counted).toEqual(['briefing', 'reply', 'a longer briefing', 'a longer reply', 'third']);
  });

  it.each([
    ['not JSON', '{"schemaVersion": 1, "persona_id": '],
    ['the wrong shape', '{"schemaVersion": 1, "persona_id": "auditor", "messages": "lots"}'],
    ['an unknown version', '{"schemaVersion": 99, "persona_id": "auditor", "updated_at": "x", "runs": [], "messages": []}'],
    ['another persona', '{"schemaVersion": 1, "persona_id": "coordinator", "updated_at": "x", "runs": [], "messages": []}'],
  ])('moves a corrupt file (%s) aside, reports it, and starts fresh', async (_what, text) => {
    const file = path.join(ws.dir, 'session_states', 'auditor_session.json');
    await writeFile(file, text);
    const { state, recovered } = await store.load('auditor');
    expect(state.messages).toEqual([]);
    expect(recovered?.movedTo).toBe(`${file}.corrupt-2026-03-04T05-06-07-000Z`);
    expect(recovered?.problem).toBeTruthy();
    expect(await readFile(recovered?.movedTo ?? '', 'utf8')).toBe(text);
  });
});
