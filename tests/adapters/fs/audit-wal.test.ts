import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, truncate, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { realFs, type DurableFs } from '../../../src/adapters/fs/atomic-file.js';
import { readAuditRun, verifyAuditRun } from '../../../src/adapters/fs/audit-store.js';
import type { AuditLog } from '../../../src/adapters/fs/audit-sink.js';
import { flushAuditFiles } from '../../../src/adapters/fs/audit-wal.js';
import { FsRunLedger } from '../../../src/adapters/fs/run-ledger.js';
import { FsRunStore } from '../../../src/adapters/fs/run-store.js';
import { JsonlAuditLog } from '../../../src/adapters/fs/jsonl-audit-log.js';
import { JOURNAL_FILE } from '../../../src/adapters/fs/run-journal.js';
import { WorkspacePaths } from '../../../src/adapters/fs/workspace-paths.js';
import { auditEvent, type AuditRecord } from '../../../src/domain/audit.js';
import { runDecision } from '../../../src/domain/decision.js';
import { StorageError } from '../../../src/domain/errors.js';
import type { Clock, OpenRun } from '../../../src/domain/ports.js';
import type { RunState, Step } from '../../../src/domain/run-state.js';
import { saveWhole, startedRun, turnStep } from '../../fixtures/journal-run.js';
import { faultyFs, noSpace } from '../../helpers/faulty-fs.js';

// The checkpoint journal as the audit log's write-ahead log: a step and its records in one flush.

const RUN = '20260101T000000Z-wal001';
let tick = 0;
const clock: Clock = { now: () => new Date(Date.UTC(2026, 0, 1, 0, 0, tick++)) };

let root: string;
let paths: WorkspacePaths;
beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'maestro-wal-'));
  paths = new WorkspacePaths(root);
  tick = 0;
});
/** Runs and logs a test leaves open, as a killed process leaves them: closed after it, so no file handle outlives the test. */
const leftOpen: { close(): Promise<unknown> }[] = [];
const keep = <T extends { close(): Promise<unknown> }>(opened: T): T => (leftOpen.push(opened), opened);
afterEach(async () => {
  for (const opened of leftOpen.splice(0)) await opened.close().catch(() => undefined);
  await rm(root, { recursive: true, force: true });
});

const journal = () => path.join(paths.runDir(RUN), JOURNAL_FILE);
const logLines = async () => (await readFile(paths.auditLog(RUN), 'utf8')).split('\n').filter(Boolean);
const records = async () => (await logLines()).map((l) => JSON.parse(l) as AuditRecord);

const initial = (): RunState => startedRun(RUN);
const step = turnStep;

/** Two records per step, as a step with a knowledge request makes. */
const stepRecords = (s: RunState, id: string) => {
  const kept = s.steps.find((x) => x.id === id) as Step;
  return [
    auditEvent('MODEL_CALL', runDecision('model', 'MODEL_CALL_OK'), { step: kept.index, step_id: kept.id, persona: kept.persona }),
    auditEvent('KNOWLEDGE_REQUEST', runDecision('knowledge', 'KNOWLEDGE_PROVIDED'), {
      persona: kept.persona,
      action: 'READ_FILE',
      status: 'fulfilled',
      path: 'notes.md',
    }),
  ];
};

/** The real file system, remembering which file every flush flushed; `fail` may make a write fail. */
function watchedFs(fail?: (file: string) => boolean): DurableFs & { flushed: string[] } {
  const flushed: string[] = [];
  return {
    flushed,
    ...faultyFs({ write: (file) => (fail?.(file) ? noSpace() : undefined), flush: (file) => void flushed.push(path.basename(file)) }),
  };
}

/** A step committed with its records, as the engine commits one. */
const recordStep = (run: OpenRun, i: number) =>
  run.commit({ event: { type: 'step_recorded', step: step(i) }, records: (after) => stepRecords(after, `turn:r1:p${i}`) });

/** A run opened through the files' ledger (its log, then its checkpoint), started, with `n` steps recorded. */
async function running(n: number, fs: DurableFs = realFs): Promise<{ run: OpenRun; store: FsRunStore }> {
  const store = new FsRunStore(paths, { fs });
  const ledger = new FsRunLedger({ paths, store, audit: new JsonlAuditLog(paths, clock, { fs }), clock });
  const run = keep(await ledger.open(RUN));
  await run.commit({ start: initial() });
  for (let i = 0; i < n; i++) await recordStep(run, i);
  return { run, store };
}

describe('a step and its audit records: one durable write', () => {
  it('flushes once per step: the journal line holds the step and its records, which then reach the log unflushed', async () => {
    const fs = watchedFs();
    const { run } = await running(1, fs);
    fs.flushed.length = 0;
    await recordStep(run, 1);
    expect(fs.flushed).toEqual([JOURNAL_FILE]);
    const last = JSON.parse(
      (await readFile(journal(), 'utf8'))
        .replace(/\u0000+$/, '')
        .trim()
        .split('\n')
        .pop() ?? '',
    ) as { event: { type: string }; audit: string[] };
    expect(last.event.type).toBe('step_recorded');
    expect(last.audit).toEqual((await logLines()).slice(2, 4)); // the same bytes as the log's lines
    expect((await records()).map((r) => [r.seq, r.event])).toEqual([
      [0, 'MODEL_CALL'],
      [1, 'KNOWLEDGE_REQUEST'],
      [2, 'MODEL_CALL'],
      [3, 'KNOWLEDGE_REQUEST'],
    ]);
    // The head names the last record at once; the log verifies while the run goes on.
    expect(JSON.parse(await readFile(paths.auditHead(RUN), 'utf8')).seq).toBe(3);
    expect((await verifyAuditRun(paths, RUN)).status).toBe('ok');
  });

  it('folding the journal flushes the log and its head before the journal goes', async () => {
    const flushed: string[] = [];
    const fs = faultyFs({ flush: (file) => void flushed.push(`${path.basename(file)}${existsSync(journal()) ? ' (journal there)' : ''}`) });
    const { run } = await running(2, fs);
    flushed.length = 0;
    await run.close();
    expect(flushed.slice(0, 2)).toEqual([`${RUN}.jsonl (journal there)`, `${RUN}.head (journal there)`]);
    expect(await readFile(journal(), 'utf8').catch(() => 'gone')).toBe('gone');
    expect(await verifyAuditRun(paths, RUN)).toMatchObject({ status: 'ok', records: 4 });
  });

  it('a flush that fails is a StorageError naming the file, its handle closed; a missing file is skipped', async () => {
    const file = path.join(root, 'x.jsonl');
    await writeFile(file, 'line\n');
    const closed: string[] = [];
    const fs = faultyFs({
      close: (f) => void closed.push(f),
      flush: () => {
        throw Object.assign(new Error('input/output error'), { code: 'EIO' });
      },
    });
    const error = await flushAuditFiles(fs, [path.join(root, 'missing.jsonl'), file]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StorageError);
    expect((error as StorageError).message).toContain(file);
    expect((error as StorageError).errno).toBe('EIO');
    expect(closed).toEqual([file]);
  });

  it('folding the journal flushes the log and its head first, and a plain append after records ahead continues the chain', async () => {
    const fs = watchedFs();
    const { run } = await running(2, fs);
    await run.commit({ records: [auditEvent('RUN_FINISHED', runDecision('queue', 'RUN_COMPLETED'))] });
    fs.flushed.length = 0;
    await run.close();
    expect(fs.flushed.slice(0, 2)).toEqual([`${RUN}.jsonl`, `${RUN}.head`]);
    expect(await readFile(journal(), 'utf8').catch(() => 'gone')).toBe('gone');
    expect((await records()).map((r) => r.seq)).toEqual([0, 1, 2, 3, 4]);
    expect(await verifyAuditRun(paths, RUN)).toMatchObject({ status: 'ok', records: 5 });
    expect(run.state?.steps).toHaveLength(2);
  });

  it('a crash after the journal flush, before the log reached the disk: opening the log writes the records from the journal, and says so', async () => {
    await running(2);
    // The power went: the log lost the last step's records (still in the page cache, never flushed), the head did not.
    const lines = await logLines();
    await writeFile(paths.auditLog(RUN), `${lines.slice(0, 2).join('\n')}\n${lines[2]?.slice(0, 30)}`); // a torn fragment too
    // Readers see the records the journal vouches for.
    const read = await readAuditRun(paths, RUN);
    expect(read.notes?.[0]).toMatch(/2 record\(s\) read from the run's checkpoint journal/);
    expect(await verifyAuditRun(paths, RUN)).toMatchObject({ status: 'ok', records: 4 });

    const sink = await new JsonlAuditLog(paths, clock).open(RUN);
    const after = await records();
    expect(after.slice(0, 4).map((r) => r.event)).toEqual(['MODEL_CALL', 'KNOWLEDGE_REQUEST', 'MODEL_CALL', 'KNOWLEDGE_REQUEST']);
    expect(after.slice(4).map((r) => r.reason_code)).toEqual(['AUDIT_TORN_LINE_DROPPED', 'AUDIT_RECORDS_RESTORED_FROM_JOURNAL']);
    expect(after[5]?.details).toEqual({ records: 2, first_seq: 2 });
    expect(sink.recordedSteps?.()).toEqual(new Set(['turn:r1:p0', 'turn:r1:p1']));
    expect(await verifyAuditRun(paths, RUN)).toMatchObject({ status: 'ok', records: 6 });
  });

  it('a head on disk behind several records the journal holds is read as theirs, not as lines appended behind its back', async () => {
    const { run } = await running(1);
    const head = await readFile(paths.auditHead(RUN), 'utf8');
    await recordStep(run, 1);
    await writeFile(paths.auditHead(RUN), head); // killed between the log append and the head rewrite
    const result = await verifyAuditRun(paths, RUN);
    expect(result).toMatchObject({ status: 'ok', records: 4 });
    // The same lag with the journal gone is what it always was: lines nobody acknowledged.
    await rm(journal());
    expect((await verifyAuditRun(paths, RUN)).status).toBe('broken');
  });

  it('lines written ahead that a power loss left as zeros (some file systems do) are cut and written again from the journal', async () => {
    await running(2);
    const text = await readFile(paths.auditLog(RUN), 'utf8');
    const lines = text.split('\n');
    lines[2] = '\u0000'.repeat(Buffer.byteLength(lines[2] ?? '')); // the third record's bytes never reached the disk; the fourth's did
    await writeFile(paths.auditLog(RUN), lines.join('\n'));
    // Readers see the records as the journal holds them, before anything is written.
    expect(await verifyAuditRun(paths, RUN)).toMatchObject({ status: 'ok', records: 4 });
    await new JsonlAuditLog(paths, clock).open(RUN);
    const after = await records();
    expect(after.slice(0, 4).map((r) => [r.seq, r.event])).toEqual([
      [0, 'MODEL_CALL'],
      [1, 'KNOWLEDGE_REQUEST'],
      [2, 'MODEL_CALL'],
      [3, 'KNOWLEDGE_REQUEST'],
    ]);
    expect(after.slice(4).map((r) => r.reason_code)).toEqual(['AUDIT_TORN_LINE_DROPPED', 'AUDIT_RECORDS_RESTORED_FROM_JOURNAL']);
    expect(await verifyAuditRun(paths, RUN)).toMatchObject({ status: 'ok', records: 6 });
  });

  it('damage where the journal holds nothing is refused as before', async () => {
    await running(2);
    const lines = (await readFile(paths.auditLog(RUN), 'utf8')).split('\n');
    lines[0] = lines[0]?.replace('MODEL_CALL_OK', 'MODEL_CALL_NO') ?? '';
    await writeFile(paths.auditLog(RUN), lines.join('\n'));
    await rm(journal());
    await expect(new JsonlAuditLog(paths, clock).open(RUN)).rejects.toThrow(/is damaged at line 1/);
  });

  it('records in the journal that do not continue the log are refused, not spliced in', async () => {
    await running(2);
    const lines = await logLines();
    await writeFile(paths.auditLog(RUN), `${lines.slice(0, 2).join('\n')}\n`);
    // The journal's records edited: their hashes no longer chain.
    const text = await readFile(journal(), 'utf8');
    await writeFile(journal(), text.replaceAll('p1', 'px'));
    const error = await new JsonlAuditLog(paths, clock).open(RUN).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StorageError);
    expect((error as Error).message).toMatch(/cannot take the records of its run's journal/);
  });

  it('a full disk when the log is appended (the journal already durable): the step fails loudly, the log is cut clean, and the next open restores the records', async () => {
    let full = false;
    const fs = watchedFs((file) => full && file.endsWith('.jsonl') && !file.endsWith(JOURNAL_FILE));
    const { run } = await running(1, fs);
    full = true;
    const error = await recordStep(run, 1).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StorageError);
    expect((error as StorageError).errno).toBe('ENOSPC');
    // The run takes no commit more; the log holds whole lines only.
    await expect(run.commit({ records: [auditEvent('RUN_FINISHED', runDecision('queue', 'RUN_COMPLETED'))] })).rejects.toBeInstanceOf(
      StorageError,
    );
    expect(await logLines()).toHaveLength(2);
    expect((await readFile(paths.auditLog(RUN), 'utf8')).endsWith('\n')).toBe(true);
    // The step is in the checkpoint, and its records with it: the next open writes them.
    expect((await new FsRunStore(paths).load(RUN))?.steps).toHaveLength(2);
    await new JsonlAuditLog(paths, clock).open(RUN);
    expect((await records()).map((r) => r.reason_code)).toEqual([
      'MODEL_CALL_OK',
      'KNOWLEDGE_PROVIDED',
      'MODEL_CALL_OK',
      'KNOWLEDGE_PROVIDED',
      'AUDIT_RECORDS_RESTORED_FROM_JOURNAL',
      'AUDIT_HEAD_ADOPTED_FROM_LOG',
    ]); // the head was never moved on
  });

  it('a journal another process left is folded only after its records are in the log', async () => {
    await running(2); // killed: the journal stays
    const lines = await logLines();
    await truncate(paths.auditLog(RUN), Buffer.byteLength(`${lines.slice(0, 2).join('\n')}\n`));
    // A later process saves a whole ended state without opening the log first.
    const store = new FsRunStore(paths);
    const state = (await store.load(RUN)) as RunState;
    await saveWhole(store, { ...state, status: 'error' });
    expect(await readFile(journal(), 'utf8').catch(() => 'gone')).toBe('gone');
    expect(await logLines()).toEqual(lines);
    expect(await verifyAuditRun(paths, RUN)).toMatchObject({ status: 'ok', records: 4 });
  });

  it('records the log could not take stay in the journal until they are in the log: a failed fold keeps the journal, a later one writes them first', async () => {
    let full = false;
    const fs = watchedFs((file) => full && file.endsWith(`${RUN}.jsonl`));
    const { run, store } = await running(1, fs);
    full = true;
    await expect(recordStep(run, 1)).rejects.toBeInstanceOf(StorageError);
    // The run ends (in the same process) while the disk is still full: the journal cannot be folded away, so it stays.
    const state = (await store.load(RUN)) as RunState;
    await expect(saveWhole(store, { ...state, status: 'error' })).rejects.toBeInstanceOf(StorageError);
    expect(await readFile(journal(), 'utf8')).toContain('"audit":[');
    // Room again: the fold writes the records the log lacks, and the head, before the journal goes.
    full = false;
    await saveWhole(store, { ...state, status: 'error' });
    expect(await readFile(journal(), 'utf8').catch(() => 'gone')).toBe('gone');
    expect((await records()).map((r) => r.seq)).toEqual([0, 1, 2, 3]);
    expect(await verifyAuditRun(paths, RUN)).toMatchObject({ status: 'ok', records: 4 });
  });

  it('a head the power loss left behind records the log kept is mended when another process folds the journal', async () => {
    const { run } = await running(1);
    const head = await readFile(paths.auditHead(RUN), 'utf8');
    await recordStep(run, 1);
    await writeFile(paths.auditHead(RUN), head); // the head's rewrite never reached the disk; the lines did
    const store = new FsRunStore(paths);
    await saveWhole(store, { ...((await store.load(RUN)) as RunState), status: 'error' });
    expect(await readFile(journal(), 'utf8').catch(() => 'gone')).toBe('gone');
    expect(JSON.parse(await readFile(paths.auditHead(RUN), 'utf8')).seq).toBe(3);
    expect(await verifyAuditRun(paths, RUN)).toMatchObject({ status: 'ok', records: 4 });
  });

  it('a record appended on its own after records written ahead: the head is flushed first, so on disk it is never behind a record the journal does not hold', async () => {
    const fs = watchedFs();
    const { run } = await running(2, fs);
    fs.flushed.length = 0;
    await run.commit({ records: [auditEvent('RUN_FINISHED', runDecision('queue', 'RUN_COMPLETED'))] });
    // The head (moved in place by the steps) is flushed before the new line is written and flushed.
    expect(fs.flushed.slice(0, 2)).toEqual([`${RUN}.head`, `${RUN}.jsonl`]);
    // What a power loss right then can leave: the head as flushed (seq 3), the log with the new record (seq 4).
    const head = await readFile(paths.auditHead(RUN), 'utf8');
    expect(JSON.parse(head).seq).toBeGreaterThanOrEqual(3);
    await writeFile(
      paths.auditHead(RUN),
      head.replace(/"seq":\d+/, '"seq":3').replace(/"hash":"[0-9a-f]+"/, `"hash":"${(await records())[3]?.hash}"`),
    );
    expect(await verifyAuditRun(paths, RUN)).toMatchObject({ status: 'ok', records: 5 });
  });

  it('a log that cannot take records written ahead: the change is made durable first, then its records, in that order', async () => {
    const order: string[] = [];
    const stepInJournal = async () => (await readFile(journal(), 'utf8').catch(() => '')).includes('step_recorded');
    const audit: AuditLog = {
      open: async () => ({
        path: 'x',
        append: async (e) => void order.push(`audit ${e.event} (step in the journal: ${await stepInJournal()})`),
      }),
    };
    const run = keep(await new FsRunLedger({ paths, store: new FsRunStore(paths), audit, clock }).open(RUN));
    await run.commit({ start: initial() });
    await recordStep(run, 0);
    expect(order).toEqual(['audit MODEL_CALL (step in the journal: true)', 'audit KNOWLEDGE_REQUEST (step in the journal: true)']);
    expect(await readFile(journal(), 'utf8')).not.toContain('"audit":[');
  });
});
