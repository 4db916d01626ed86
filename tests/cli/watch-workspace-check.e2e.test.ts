import { readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../fakes/cli.js';
import { dropCommand, listDir, task, useWatchScope, waitFor, watch } from '../helpers/watch-workspace.js';

const { workspace, started } = useWatchScope();
/** A watcher that found the workspace broken looks again after 0.2 s instead of 2 s: the fix is noticed sooner. */
const QUICK_RECHECK = { MAESTRO_WATCH_RECHECK_MS: '200' };

describe('maestro watch refuses a broken workspace', () => {
  it('at start: a broken persona file, a typo in --route, no personas — exit 2 with the reason, commands untouched', async () => {
    const ws = await workspace();
    await dropCommand(ws, 'good.json', task('Review the rollout plan'));
    const persona = path.join(ws, 'personas', 'auditor.md');
    const original = await readFile(persona, 'utf8');

    await writeFile(persona, original.replace(/^id: .*$/m, 'id: [broken'));
    const brokenPersona = await runCli(['watch', '--once', '--workspace', ws]);
    expect(brokenPersona.code).toBe(2);
    expect(brokenPersona.stderr).toContain('this workspace cannot run commands; nothing was taken');
    expect(brokenPersona.stderr).toContain('auditor.md');
    await writeFile(persona, original);

    const typo = await runCli(['watch', '--once', '--route', 'ofline', '--workspace', ws]);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain('--route: route "ofline" is not defined in maestro.config.json (known routes: offline)');

    // maestro.config.json naming a persona that does not exist (a typo in deliberation.groups).
    await writeFile(path.join(ws, 'maestro.config.json'), JSON.stringify({ deliberation: { groups: { risk: ['auditr'] } } }));
    const ghost = await runCli(['watch', '--once', '--workspace', ws]);
    expect(ghost.code).toBe(2);
    expect(ghost.stderr).toContain('maestro.config.json: deliberation.groups.risk.0: no persona "auditr"');
    await rm(path.join(ws, 'maestro.config.json'));

    await rm(path.join(ws, 'personas'), { recursive: true });
    const none = await runCli(['watch', '--once', '--workspace', ws]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('there is no personas/ folder');

    expect(await listDir(path.join(ws, 'commands'))).toEqual(['good.json']);
    expect(await listDir(path.join(ws, '.maestro', 'rejected'))).toEqual([]);
  });

  it('an unreadable MAESTRO_WATCH_RECHECK_MS: exit 2 naming it, nothing taken', async () => {
    const ws = await workspace();
    await dropCommand(ws, 'good.json', task('Review the rollout plan'));
    const refused = await runCli(['watch', '--once', '--workspace', ws], { env: { MAESTRO_WATCH_RECHECK_MS: 'soon' } });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('MAESTRO_WATCH_RECHECK_MS: must be a whole number of milliseconds from 10 to 600000, not "soon"');
    expect(await listDir(path.join(ws, 'commands'))).toEqual(['good.json']);
  });

  it('while running: stops taking commands when a persona breaks, says why, and takes them again once fixed', async () => {
    const ws = await workspace();
    const watcher = started(watch(ws, [], QUICK_RECHECK));
    await watcher.waitForEvent('the watcher to start', (e) => e.kind === 'started');
    const persona = path.join(ws, 'personas', 'strategist.md');
    const original = await readFile(persona, 'utf8');
    await writeFile(persona, original.replace(/^order: .*$/m, 'order: not-a-number'));

    await dropCommand(ws, 'waits.json', task('Review the rollout plan'));
    const notice = await watcher.waitForEvent(
      'the notice',
      (e) => e.kind === 'notice' && String(e.message).includes('cannot run commands'),
    );
    expect(String(notice.message)).toContain('strategist.md');
    expect(await listDir(path.join(ws, 'commands'))).toEqual(['waits.json']);
    expect(watcher.events.some((e) => e.kind === 'claimed')).toBe(false);

    await writeFile(persona, original);
    const finished = await watcher.waitForEvent('the run', (e) => e.kind === 'finished');
    expect(finished).toMatchObject({ source: 'waits.json', status: 'completed' });
    expect(watcher.events.some((e) => e.kind === 'notice' && String(e.message).includes('taking commands again'))).toBe(true);
  }, 60_000);
});

describe('maestro watch re-reads its configuration before taking a command', () => {
  it('a maestro.config.json broken while it runs: no command is taken (they stay in commands/), it says why once, and takes them again once fixed', async () => {
    const ws = await workspace();
    const config = path.join(ws, 'maestro.config.json');
    await writeFile(config, JSON.stringify({ history: { keep_runs: 5 } }));
    const watcher = started(watch(ws, [], QUICK_RECHECK));
    await watcher.waitForEvent('the watcher to start', (e) => e.kind === 'started');

    await writeFile(config, JSON.stringify({ history: { keep_runs: 5 }, histroy: {} }));
    await dropCommand(ws, 'first.json', task('Review the rollout plan'));
    const notice = await watcher.waitForEvent(
      'the notice',
      (e) => e.kind === 'notice' && String(e.message).includes('cannot run commands'),
    );
    expect(String(notice.message)).toContain('maestro.config.json');
    expect(String(notice.message)).toContain('histroy');
    // Another command while the same problem lasts (not said again), then broken another way with no
    // command to wake the watcher: its recheck timer (0.2 s here, 2 s by default) finds it.
    await dropCommand(ws, 'second.json', task('Review the rollback plan'));
    await writeFile(config, '{ "history": ');
    await waitFor('the second problem to be reported', () =>
      watcher.events.some((e) => e.kind === 'notice' && String(e.message).includes('not valid JSON')),
    );
    expect(await listDir(path.join(ws, 'commands'))).toEqual(['first.json', 'second.json']);
    expect(watcher.events.some((e) => e.kind === 'claimed')).toBe(false);

    await writeFile(config, JSON.stringify({ history: { keep_runs: 5 } }));
    await waitFor('both runs', () => watcher.events.filter((e) => e.kind === 'finished').length === 2);
    expect(watcher.events.filter((e) => e.kind === 'finished').map((e) => [e.source, e.status])).toEqual([
      ['first.json', 'completed'],
      ['second.json', 'completed'],
    ]);
    // Said once per problem, not once per file or per check.
    expect(watcher.events.filter((e) => e.kind === 'notice' && String(e.message).includes('cannot run commands'))).toHaveLength(2);
    expect(watcher.events.filter((e) => e.kind === 'notice' && String(e.message).includes('taking commands again'))).toHaveLength(1);
    expect(await listDir(path.join(ws, '.maestro', 'rejected'))).toEqual([]);
  }, 60_000);
});
