import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readCheckpoint } from '../../../src/adapters/fs/run-journal.js';
import { processCommand } from '../../../src/app/process-command.js';
import { createApp } from '../../../src/compose/app.js';
import { readAuditLogs } from '../../helpers/watch-workspace.js';
import { tempWorkspace } from '../../fakes/fixtures.js';

// A process killed while it starts a run's journal (the file created, its first line not yet written
// and flushed) leaves a journal that holds nothing acknowledged: empty, only the zeros reserved ahead,
// or a first line cut short. Found by the soak (150 commands, 15 kill -9): such a run's command was
// rejected as a damaged checkpoint, and never run. Nothing of it was acknowledged, so it starts anew.

let ws: Awaited<ReturnType<typeof tempWorkspace>>;
beforeEach(async () => {
  ws = await tempWorkspace();
});
afterEach(() => ws.cleanup());

const RUN_ID = '20260304T050607Z-abc123';
const UNACKNOWLEDGED: Record<string, string> = {
  empty: '',
  'zeros reserved ahead': '\u0000'.repeat(4096),
  'a first line cut short': '{"v":1,"base":{"schemaVersion":',
  'a first line cut short, zeros after it': `{"v":1,"base":{"run_id":"x"${'\u0000'.repeat(64)}`,
};

async function runDirWith(journal: string, state?: unknown): Promise<string> {
  const dir = path.join(ws.dir, '.maestro', 'runs', RUN_ID);
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, 'journal.jsonl'), journal);
  if (state !== undefined) await writeFile(path.join(dir, 'state.json'), JSON.stringify(state));
  return dir;
}

describe('a journal that holds nothing acknowledged', () => {
  it.each(Object.entries(UNACKNOWLEDGED))('%s: reads as no checkpoint, or as the state.json before it', async (_name, journal) => {
    const dir = await runDirWith(journal);
    expect(await readCheckpoint(dir)).toBeUndefined();
    await writeFile(path.join(dir, 'state.json'), '{"run_id":"folded before"}');
    expect(await readCheckpoint(dir)).toEqual({ json: { run_id: 'folded before' }, file: path.join(dir, 'state.json') });
  });

  it('a first line that reads but is not a state is still refused (the file was damaged)', async () => {
    const dir = await runDirWith('{"at":"2026-03-04T05:06:07.000Z","event":{"type":"decided"}}\n');
    await expect(readCheckpoint(dir)).rejects.toThrow(/damaged at line 1/);
  });

  it('the run of a command claimed just before the kill starts anew and completes, its receipt recorded once', async () => {
    const app = await createApp({ workspace: ws.dir });
    await runDirWith('');
    const text = JSON.stringify({ task_description: 'Review the rollout plan', config: { max_rounds: 1 } });
    const outcome = await processCommand({ text, source: 'c-6.json', runId: RUN_ID }, app.deps);
    expect(outcome.status, outcome.message).toBe('completed');
    const events = ((await readAuditLogs(ws.dir)).get(RUN_ID) ?? []).map((r) => r.event);
    expect(events.filter((e) => e === 'COMMAND_RECEIVED')).toHaveLength(1);
    expect(events.at(-1)).toBe('RUN_FINISHED');
  });
});
