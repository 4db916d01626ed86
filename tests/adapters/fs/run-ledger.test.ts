import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { realFs, type DurableFs } from '../../../src/adapters/fs/atomic-file.js';
import { verifyAuditRun } from '../../../src/adapters/fs/audit-store.js';
import { FsRunLedger } from '../../../src/adapters/fs/run-ledger.js';
import { FsRunStore } from '../../../src/adapters/fs/run-store.js';
import { JsonlAuditLog } from '../../../src/adapters/fs/jsonl-audit-log.js';
import { JOURNAL_FILE } from '../../../src/adapters/fs/run-journal.js';
import { WorkspacePaths } from '../../../src/adapters/fs/workspace-paths.js';
import { auditEvent, type AuditRecord } from '../../../src/domain/audit.js';
import { runDecision } from '../../../src/domain/decision.js';
import { StorageError } from '../../../src/domain/errors.js';
import type { Clock, RunCommit } from '../../../src/domain/ports.js';
import type { RunEvent } from '../../../src/domain/run-machine.js';
import { startedRun, turnStep } from '../../fixtures/journal-run.js';
import { faultyFs, noSpace } from '../../helpers/faulty-fs.js';

// The run ledger on files: one write order that leaves a run consistent after a crash at any point.

const RUN = '20260101T000000Z-led001';
let tick = 0;
const clock: Clock = { now: () => new Date(Date.UTC(2026, 0, 1, 0, 0, tick++)) };

let root: string;
let paths: WorkspacePaths;
beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'maestro-ledger-'));
  paths = new WorkspacePaths(root);
  tick = 0;
});
/** Runs a test leaves open, as a killed process leaves them: closed after it, so no file handle outlives the test. */
const leftOpen: { close(): Promise<unknown> }[] = [];
afterEach(async () => {
  for (const opened of leftOpen.splice(0)) await opened.close().catch(() => undefined);
  await rm(root, { recursive: true, force: true });
});

const runFile = (name: string) => path.join(paths.runDir(RUN), name);
const journal = () => runFile(JOURNAL_FILE);
const records = async () =>
  (await readFile(paths.auditLog(RUN), 'utf8'))
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as AuditRecord);
const journalLines = async () =>
  (await readFile(journal(), 'utf8'))
    .replace(/\u0000+$/, '')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);

/** The real file system, noting what is on disk each time the journal is flushed; `fail` makes the journal's writes fail. */
function watchedJournal(seen: (file: string) => void, fail?: () => boolean): DurableFs {
  return faultyFs({
    write: (file) => (fail?.() && file.endsWith(JOURNAL_FILE) ? noSpace() : undefined),
    flush: (file) => void (file.endsWith(JOURNAL_FILE) && seen(file)),
  });
}

function ledger(fs: DurableFs = realFs): Pick<FsRunLedger, 'open' | 'load' | 'readFile'> {
  const files = new FsRunLedger({ paths, store: new FsRunStore(paths, { fs }), audit: new JsonlAuditLog(paths, clock), clock });
  return {
    open: async (runId) => {
      const run = await files.open(runId);
      leftOpen.push(run);
      return run;
    },
    load: (runId) => files.load(runId),
    readFile: (runId, name) => files.readFile(runId, name),
  };
}

const paused: RunEvent = {
  type: 'paused',
  decision: {
    decision: 'PAUSE_FOR_HITL',
    reason_code: 'ARBITRATION_INVESTIGATE',
    sealed: false,
    overrideable: true,
    final_decider: 'SYSTEM',
    layer: 'arbitration',
  },
  pause: {
    pause_id: `${RUN}-p1`,
    layer: 'arbitration',
    reason_code: 'ARBITRATION_INVESTIGATE',
    message: 'why',
    requested_at: '2026-01-01T00:00:00.000Z',
  },
  summary: 'why',
};
const pauseCommit: RunCommit = {
  event: paused,
  records: [auditEvent('HITL_REQUESTED', paused.decision)],
  files: [
    { name: 'draft.md', content: '# draft\n' },
    { name: 'hitl.json', content: '{"why":1}\n' },
  ],
};
const finished: RunEvent = {
  type: 'finished',
  status: 'stopped',
  decision: runDecision('hitl', 'HITL_STOP'),
  finishedAt: '2026-01-01T00:01:00.000Z',
  summary: 'stopped',
};

async function started(l = ledger()) {
  const run = await l.open(RUN);
  await run.commit({
    start: startedRun(RUN),
    files: [{ name: 'command.json', content: '{"task_description":"x"}' }],
    records: [auditEvent('COMMAND_VALID', runDecision('validation', 'SPEC_OK'))],
  });
  return run;
}

describe('FsRunLedger', () => {
  it('starts a run in one write: its first state, its command copy, and the record that it was accepted', async () => {
    const run = await started();
    expect(run.state?.status).toBe('running');
    expect(await readFile(runFile('command.json'), 'utf8')).toBe('{"task_description":"x"}');
    const [base] = await journalLines();
    expect(base).toMatchObject({ v: 1, base: { run_id: RUN } });
    expect((base?.audit as string[]).map((l) => JSON.parse(l).event)).toEqual(['COMMAND_VALID']);
    expect((await records()).map((r) => r.event)).toEqual(['COMMAND_VALID']);
  });

  it("writes a commit's files before the journal line that makes the change durable", async () => {
    const seen: string[] = [];
    const run = await started(ledger(watchedJournal(() => seen.push(`hitl.json there: ${existsSync(runFile('hitl.json'))}`))));
    seen.length = 0;
    await run.commit({ event: { type: 'step_recorded', step: turnStep(0) }, files: [{ name: 'hitl.json', content: '{}' }] });
    expect(seen).toEqual(['hitl.json there: true']);
  });

  it('a pause: the files, the state and the record are all there once the commit resolves', async () => {
    const run = await started();
    await run.commit(pauseCommit);
    expect(await ledger().load(RUN)).toMatchObject({ status: 'paused', pause: { pause_id: `${RUN}-p1` } });
    expect(await ledger().readFile(RUN, 'hitl.json')).toBe('{"why":1}\n');
    expect(await ledger().readFile(RUN, 'draft.md')).toBe('# draft\n');
    expect((await records()).map((r) => r.event)).toEqual(['COMMAND_VALID', 'HITL_REQUESTED']);
    expect(run.filePath('draft.md')).toBe(runFile('draft.md'));
    expect(await verifyAuditRun(paths, RUN)).toMatchObject({ status: 'ok', records: 2 });
  });

  it('a crash before the journal line (a full disk): the files may be there, but the state and the log never name the change', async () => {
    let full = false;
    const run = await started(
      ledger(
        watchedJournal(
          () => undefined,
          () => full,
        ),
      ),
    );
    full = true;
    await expect(run.commit(pauseCommit)).rejects.toBeInstanceOf(StorageError);
    const later = ledger();
    expect((await later.load(RUN))?.status).toBe('running');
    expect((await records()).map((r) => r.event)).toEqual(['COMMAND_VALID']);
    // A file no state names yet: the next pause writes it again.
    expect(existsSync(runFile('hitl.json'))).toBe(true);
    // The run takes no commit more (fail closed); another process goes on from the checkpoint.
    await expect(run.commit({ records: [auditEvent('RUN_FINISHED', runDecision('queue', 'RUN_COMPLETED'))] })).rejects.toBeInstanceOf(
      StorageError,
    );
  });

  it('removes a file once the change that drops it is durable, and names it in that line', async () => {
    const run = await started();
    await run.commit({ event: { type: 'step_recorded', step: turnStep(0) }, removeFiles: ['command.json'] });
    expect(existsSync(runFile('command.json'))).toBe(false);
    expect((await journalLines()).at(-1)).toMatchObject({ event: { type: 'step_recorded' }, remove: ['command.json'] });
    await run.commit({ event: finished, records: [auditEvent('RUN_FINISHED', finished.decision)] });
    expect(existsSync(journal())).toBe(false);
    expect((await ledger().load(RUN))?.status).toBe('stopped');
  });

  it('a crash between the line and the removal: folding the journal removes the file', async () => {
    const run = await started();
    await run.commit({ event: { type: 'step_recorded', step: turnStep(0) }, removeFiles: ['command.json'] });
    // What a crash right after the journal's flush leaves: the line names the removal, the file is still there.
    await writeFile(runFile('command.json'), '{"task_description":"x"}');
    // Another process takes the run up: its first write folds the journal left behind.
    const next = await ledger().open(RUN);
    await next.commit({ event: finished, records: [auditEvent('RUN_FINISHED', finished.decision)] });
    expect(existsSync(runFile('command.json'))).toBe(false);
    expect((await ledger().load(RUN))?.status).toBe('stopped');
  });

  it('knows what the log holds: events and the steps its model calls name', async () => {
    const run = await started();
    await run.commit({
      event: { type: 'step_recorded', step: turnStep(0) },
      records: [auditEvent('MODEL_CALL', runDecision('model', 'MODEL_CALL_OK'), { step_id: 'turn:r1:p0' })],
    });
    const again = await ledger().open(RUN);
    expect(again.hasRecorded('MODEL_CALL')).toBe(true);
    expect(again.hasRecorded('RUN_FINISHED')).toBe(false);
    expect(again.recordedSteps()).toEqual(new Set(['turn:r1:p0']));
  });

  it('opens a run whose checkpoint cannot be read: its state refuses to be read, its log still takes records', async () => {
    await started();
    await rm(journal());
    await writeFile(runFile('state.json'), '{ not json');
    const run = await ledger().open(RUN);
    expect(() => run.state).toThrow(StorageError);
    await expect(run.commit({ event: { type: 'revived' } })).rejects.toBeInstanceOf(StorageError);
    await run.commit({ records: [auditEvent('RUN_FAILED', runDecision('queue', 'RUN_INTERRUPTED_AT_CHECKPOINT'))] });
    expect((await records()).map((r) => r.event)).toEqual(['COMMAND_VALID', 'RUN_FAILED']);
  });

  it('reads only plain run ids and run files', async () => {
    await started();
    const l = ledger();
    expect(await l.load('../runs')).toBeUndefined();
    expect(await l.readFile('..', 'command.json')).toBeUndefined();
    expect(await l.readFile(RUN, 'state.json' as never)).toBeUndefined();
    expect(await l.readFile(RUN, 'command.json')).toBe('{"task_description":"x"}');
    await expect(l.open('../escape')).rejects.toBeInstanceOf(StorageError);
  });
});
