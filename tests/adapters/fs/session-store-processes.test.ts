import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FsSessionStore } from '../../../src/adapters/fs/session-store.js';
import { isFileLockHeld } from '../../../src/adapters/fs/file-lock.js';
import { StorageError } from '../../../src/domain/errors.js';
import type { RunMemory } from '../../../src/domain/session-state.js';
import { aRunMemory } from '../../fixtures/domain-builders.js';
import { stallUntilFile } from '../../helpers/stall.js';

// Issue 23, point 3b: one run's messages were found twice in a persona's archive after a soak with
// several watchers and `kill -9`. Real processes append to one persona's memory at once.
const APPENDER = path.resolve(import.meta.dirname, '..', '..', 'helpers', 'session-appender.mjs');
const HOLDER = path.resolve(import.meta.dirname, '..', '..', 'helpers', 'lock-holder.mjs');
const KEEP_RUNS = 3;
const STALE_MS = 2_000;

let dir: string;
const children: ChildProcess[] = [];
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'maestro-memory-'));
});
afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await rm(dir, { recursive: true, force: true });
});

interface Appender {
  readonly child: ChildProcess;
  /** The highest run number it reported saved (-1: none yet). */
  lastSaved(): number;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** `killAfter`: SIGKILL it as soon as it reports that run saved (it is then at some point of the next one). */
function startAppender(prefix: string, from: number, to: number, killAfter?: number, retry = false): Appender {
  const args = [APPENDER, dir, prefix, String(from), String(to), String(KEEP_RUNS), String(STALE_MS), ...(retry ? ['retry'] : [])];
  const child = spawn(process.execPath, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let last = from - 1;
  let err = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    for (const m of chunk.toString().matchAll(/appended (\d+)/g)) last = Math.max(last, Number(m[1]));
    if (killAfter !== undefined && last >= killAfter) child.kill('SIGKILL');
  });
  child.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('close', (code, signal) => {
      if (code !== 0 && code !== null) process.stderr.write(`appender ${prefix} failed: ${err}\n`);
      resolve({ code, signal });
    }),
  );
  return { child, lastSaved: () => last, exited };
}

/** Every passage kept for the persona: those in its state file, then those in its archive (archived summaries aside). */
async function everyPassage(): Promise<string[]> {
  const store = new FsSessionStore(dir, { now: () => new Date() }, KEEP_RUNS);
  const { state } = await store.load('auditor');
  const archive = await readFile(store.archiveFor('auditor'), 'utf8').catch(() => '');
  const archived = archive
    .split('\n')
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l) as { from: string; text: string })
    .filter((p) => p.from !== 'summary');
  return [...archived.map((p) => p.text), ...state.passages.map((p) => p.text)];
}

function turn(runId: string): RunMemory {
  return aRunMemory(runId, `task ${runId}`, [`first reply to ${runId}`, `second reply to ${runId}`], new Date().toISOString());
}

function expectedPassages(prefixes: readonly string[], runs: number): string[] {
  return prefixes.flatMap((p) => Array.from({ length: runs }, (_, n) => [`first reply to ${p}-${n}`, `second reply to ${p}-${n}`]).flat());
}

describe('persona memory appended by many processes at once', () => {
  // The suite's size; a soak runs it bigger: MAESTRO_SOAK_RUNS=50 npx vitest run tests/adapters/fs/session-store-processes.test.ts
  const RUNS = Number(process.env.MAESTRO_SOAK_RUNS ?? 15);
  it('4 processes × many runs: every passage is kept exactly once (state file + archive)', async () => {
    const prefixes = ['w1', 'w2', 'w3', 'w4'];
    const appenders = prefixes.map((p) => startAppender(p, 0, RUNS));
    for (const a of appenders) expect(await a.exited).toEqual({ code: 0, signal: null });
    const kept = await everyPassage();
    expect(kept.length).toBe(prefixes.length * RUNS * 2);
    expect([...kept].sort()).toEqual(expectedPassages(prefixes, RUNS).sort());
  }, 120_000);

  it('with appenders killed (SIGKILL) mid-way and started again from where they were, still every passage exactly once', async () => {
    const prefixes = ['k1', 'k2', 'k3', 'k4'];
    const runs = 30;
    // Two of them die in the middle of their work (maybe holding the lock, maybe between the archive and the state file).
    const killAfter = [3, undefined, 9, undefined];
    const first = prefixes.map((p, i) => startAppender(p, 0, runs, killAfter[i]));
    const results = await Promise.all(first.map((a) => a.exited));
    expect(results.map((r) => r.signal)).toEqual(['SIGKILL', null, 'SIGKILL', null]);
    expect(first[0]!.lastSaved()).toBeLessThan(runs - 1);
    // A watcher that restarts saves the run it was saving again: from the first one not reported saved.
    // So does one whose save failed (on a loaded machine, a process stalled past the stale time loses
    // its lock and its save fails whole, saying so): a failed save is retried, never half kept.
    const again = prefixes.flatMap((p, i) =>
      results[i]!.signal === 'SIGKILL' || results[i]!.code !== 0
        ? [startAppender(p, first[i]!.lastSaved() + 1, runs, undefined, true)]
        : [],
    );
    for (const a of again) expect((await a.exited).code).toBe(0);
    const kept = await everyPassage();
    expect([...kept].sort()).toEqual(expectedPassages(prefixes, runs).sort());
  }, 120_000);

  it('a save whose process stalled past the stale time while another took the lock fails with a StorageError and writes nothing', async () => {
    const first = new FsSessionStore(dir, { now: () => new Date() }, KEEP_RUNS, undefined, { staleMs: STALE_MS });
    await first.appendRun('auditor', 'r-0', turn('r-0'));
    const before = await readFile(first.fileFor('auditor'), 'utf8');
    let holder: ChildProcess | undefined;
    let holding: Promise<void> | undefined;
    // Counting tokens is where this save stalls (a tokenizer load, a busy machine): its event loop is
    // blocked, so it cannot refresh its lock, and another process takes the stale lock meanwhile.
    const stalling = {
      budget: 0,
      count: (text: string) => {
        if (!holder) {
          const taken = path.join(dir, 'holder-holds');
          holder = spawn(process.execPath, [HOLDER, `${first.fileFor('auditor')}.lock`, String(STALE_MS), '60000', taken], {
            stdio: ['ignore', 'pipe', 'inherit'],
          });
          children.push(holder);
          holding = new Promise((resolve) => holder!.stdout!.on('data', (d: Buffer) => d.toString().includes('held') && resolve()));
          // Stalled until the other process has taken the lock (once stale; at most 20 s on a loaded machine).
          stallUntilFile(taken, STALE_MS + 18_000);
        }
        return text.length;
      },
    };
    const stalled = new FsSessionStore(dir, { now: () => new Date() }, KEEP_RUNS, stalling, { staleMs: STALE_MS });
    const save = stalled.appendRun('auditor', 'r-1', turn('r-1'));
    await expect(save).rejects.toThrow(StorageError);
    await expect(save).rejects.toThrow(/lost the lock/);
    await holding;
    expect(await readFile(first.fileFor('auditor'), 'utf8')).toBe(before);
    expect(await isFileLockHeld(`${first.fileFor('auditor')}.lock`, { staleMs: STALE_MS })).toBe(true);
  }, 30_000);
});
