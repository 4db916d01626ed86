import { describe, expect, it } from 'vitest';
import { interruptClaim, planClaim, runClaim, type RunClaimDeps } from '../../src/app/run-claim.js';
import { runDecision } from '../../src/domain/decision.js';
import type { Claim } from '../../src/domain/queue.js';
import type { RunLedger } from '../../src/domain/ports.js';
import { InMemoryClaimStore } from '../fakes/in-memory-inbox.js';
import { aCommand, aRunState, memoryApp, type MemoryApp } from '../fakes/memory-app.js';
import { politeCouncil, ScriptedLlmClient } from '../fakes/scripted-llm-client.js';

// One claimed command run through the one use case, and its file settled by how the run ended.

const claimOf = (runId: string, over: Partial<Claim> = {}): Claim => ({
  runId,
  source: `${runId}.json`,
  claimedAt: '2026-01-01T00:00:00.000Z',
  recovered: false,
  kind: 'command',
  ...over,
});

function claimDeps(app: MemoryApp, texts: Record<string, string> = {}): RunClaimDeps & { claims: InMemoryClaimStore } {
  const claims = new InMemoryClaimStore();
  for (const [name, text] of Object.entries(texts)) claims.texts.set(name, text);
  return { run: app.deps, claims };
}

/** The app's ledger, except that no run can be opened (a file system that refuses writes). */
const refusing = (ledger: RunLedger): RunLedger => ({
  open: async () => Promise.reject(new Error('EACCES: the audit folder refuses writes')),
  load: (id) => ledger.load(id),
  list: () => ledger.list(),
  readFile: (id, name) => ledger.readFile(id, name),
});

describe('planClaim', () => {
  it('starts a new claim, resumes a recovered one from its checkpoint, and never runs an ended one again', async () => {
    const app = memoryApp();
    const text = JSON.stringify(aCommand());
    const deps = claimDeps(app, { 'a.json': text, 'b.json': text, 'bad.json': '{"task_description": ' });
    expect(await planClaim(claimOf('a'), deps)).toEqual({ kind: 'new' });
    expect(await planClaim(claimOf('b', { recovered: true }), deps)).toEqual({ kind: 'start' });
    // A file that does not parse, or cannot be read, is refused before it is announced (runClaim rejects it as ever).
    expect(await planClaim(claimOf('bad'), deps)).toEqual({ kind: 'new', refused: true });
    expect(await planClaim(claimOf('gone', { recovered: true }), deps)).toEqual({ kind: 'start', refused: true });
    app.ledger.seed(aRunState(app, aCommand(), 'c'));
    expect(await planClaim(claimOf('c', { recovered: true }), deps)).toEqual({ kind: 'checkpoint' });
    expect(await planClaim(claimOf('c', { kind: 'decision' }), deps)).toEqual({ kind: 'decision' });
    // A decision the route breaker posted once the route answered again: resumed after the outage, not a person's decision.
    const c = aRunState(app, aCommand(), 'o');
    app.ledger.seed({ ...c, trail: [...c.trail, runDecision('hitl', 'ROUTE_RECOVERED')] });
    expect(await planClaim(claimOf('o', { kind: 'decision' }), deps)).toEqual({ kind: 'outage' });
    app.ledger.seed({ ...aRunState(app, aCommand(), 'd'), status: 'completed', summary: 'done', artifact: '/workspace/outputs/d.md' });
    const ended = await planClaim(claimOf('d', { recovered: true }), deps);
    expect(ended.ended).toMatchObject({
      run_id: 'd',
      status: 'completed',
      artifact: '/workspace/outputs/d.md',
      message: 'the run had already ended (completed) before the restart: done',
    });
  });
});

describe('runClaim', () => {
  it('runs a claimed command to its end and lets the claim go', async () => {
    const app = memoryApp({ llm: new ScriptedLlmClient(politeCouncil) });
    const deps = claimDeps(app, { 'a.json': JSON.stringify(aCommand()) });
    const result = await runClaim(claimOf('a', { source: 'a.json' }), 'new', deps);
    expect(result).toMatchObject({ run_id: 'a', source: 'a.json', status: 'completed', rejected_to: null, audit_log: 'memory:audit/a' });
    expect(deps.claims.released).toEqual(['a']);
  });

  it('rejects a file that is not a command, with every problem, keeping its records', async () => {
    const app = memoryApp({ llm: new ScriptedLlmClient(politeCouncil) });
    const deps = claimDeps(app, { 'bad.json': '{"task": "x"}' });
    const result = await runClaim(claimOf('bad', { source: 'bad.json' }), 'new', deps);
    expect(result).toMatchObject({ status: 'invalid', rejected_to: '.maestro/rejected/bad.json' });
    expect(deps.claims.rejected.get('bad')?.issues.length).toBeGreaterThan(0);
    expect(app.ledger.events('bad')).toEqual(['COMMAND_RECEIVED', 'COMMAND_INVALID']);
    expect(await app.ledger.load('bad')).toBeUndefined();
  });

  it('a run that fails by surprise ends as error on its record, and its file is rejected with why', async () => {
    const app = memoryApp({
      llm: new ScriptedLlmClient(() => {
        throw new TypeError('cannot read properties of undefined');
      }),
    });
    const deps = claimDeps(app, { 'x.json': JSON.stringify(aCommand()) });
    const result = await runClaim(claimOf('x', { source: 'x.json' }), 'new', deps);
    expect(result).toMatchObject({
      status: 'error',
      reason_code: 'RUN_FAILED_INTERNAL',
      message: 'the run failed: cannot read properties of undefined',
    });
    expect(deps.claims.rejected.get('x')).toMatchObject({
      status: 'error',
      audit_log: 'memory:audit/x',
      issues: ['(run): the run failed: cannot read properties of undefined'],
    });
    expect((await app.ledger.load('x'))?.status).toBe('error');
    expect(app.ledger.records('x').at(-1)).toMatchObject({ event: 'RUN_FAILED', reason_code: 'RUN_FAILED_INTERNAL' });
    // Settled once: the run's own boundary records it, and the claim's finds it on the record.
    expect(app.ledger.records('x').filter((r) => r.event === 'RUN_FAILED')).toHaveLength(1);
  });

  it('resumes a claim from its checkpoint, calling only what did not finish', async () => {
    const controller = new AbortController();
    const first = new ScriptedLlmClient((r, n) => {
      if (n === 4) controller.abort(new Error('the watcher is stopping'));
      return politeCouncil(r);
    });
    const app = memoryApp({ llm: first, signal: controller.signal });
    const deps = claimDeps(app, { 'r.json': JSON.stringify(aCommand()) });
    await expect(runClaim(claimOf('r', { source: 'r.json' }), 'new', deps)).rejects.toThrow('the watcher is stopping');
    expect(deps.claims.released).toEqual([]);

    const second = new ScriptedLlmClient(politeCouncil);
    const result = await runClaim(claimOf('r', { source: 'r.json', recovered: true }), 'checkpoint', {
      ...deps,
      run: { ...app.deps, llm: second, signal: new AbortController().signal },
    });
    expect(result.status).toBe('completed');
    expect(second.calls).toHaveLength(7 - 5);
    expect(app.ledger.events('r')).toContain('RUN_RESUMED');
  });

  it('sets a claim aside after three failures that could not even be recorded, with every reason', async () => {
    const app = memoryApp({ llm: new ScriptedLlmClient(politeCouncil) });
    const deps = claimDeps(app, { 'p.json': JSON.stringify(aCommand()) });
    const run = { ...app.deps, ledger: refusing(app.ledger) };
    const attempt = () => runClaim(claimOf('p', { source: 'p.json', recovered: true }), 'new', { ...deps, run });
    expect((await attempt()).message).toContain('failure 1 of 3');
    expect((await attempt()).message).toContain('failure 2 of 3');
    expect(deps.claims.rejected.size).toBe(0);
    expect(await attempt()).toMatchObject({
      status: 'error',
      reason_code: 'RUN_FAILED_REPEATEDLY',
      rejected_to: '.maestro/rejected/p.json',
    });
    expect(deps.claims.rejected.get('p')?.issues).toHaveLength(3);
  });
});

describe('interruptClaim', () => {
  it('records that the run stopped at its checkpoint, with its log; never fails the stop', async () => {
    const app = memoryApp();
    app.ledger.seed(aRunState(app, aCommand(), 'i'));
    const stopped = await interruptClaim(claimOf('i'), claimDeps(app), 'interrupted', 'stopping');
    expect(stopped).toMatchObject({ status: 'interrupted', reason_code: 'RUN_INTERRUPTED_AT_CHECKPOINT', audit_log: 'memory:audit/i' });
    expect(app.ledger.records('i').map((r) => [r.event, r.reason_code])).toEqual([['RUN_INTERRUPTED', 'RUN_INTERRUPTED_AT_CHECKPOINT']]);
    const refused = { ...claimDeps(app), run: { ...app.deps, ledger: refusing(app.ledger) } };
    expect(await interruptClaim(claimOf('i'), refused, 'interrupted', 'stopping')).toMatchObject({ status: 'interrupted', audit_log: '' });
  });

  it('writes nothing for a run whose engine claim was lost: another worker resumes it', async () => {
    const app = memoryApp();
    app.ledger.seed(aRunState(app, aCommand(), 'l'));
    expect(await interruptClaim(claimOf('l'), claimDeps(app), 'claim_lost', 'lost')).toMatchObject({
      status: 'interrupted',
      audit_log: '',
    });
    expect(app.ledger.records('l')).toEqual([]);
  });
});
