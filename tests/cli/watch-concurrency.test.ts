import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../fakes/cli.js';
import { dropCommand, listDir, makeWorkspace, readAuditLogs, removeWorkspace, task } from '../helpers/watch-workspace.js';

// `maestro watch --concurrency N` in process: the flag, the config setting, and what they refuse.

const workspaces: string[] = [];
afterEach(async () => {
  for (const ws of workspaces.splice(0)) await removeWorkspace(ws);
});

async function workspace(): Promise<string> {
  const ws = await makeWorkspace('maestro-conc-');
  workspaces.push(ws);
  return ws;
}

describe('maestro watch --concurrency', () => {
  it('runs the queue several at a time, each command once, and reports each run', async () => {
    const ws = await workspace();
    for (let i = 1; i <= 4; i++) await dropCommand(ws, `${i}.json`, task(`Review the release checklist number ${i}`));
    const result = await runCli(['watch', '--once', '--json', '--concurrency', '3', '--workspace', ws], {
      env: { MAESTRO_OFFLINE_DELAY_MS: '20' },
      timeoutMs: 60_000,
    });
    expect(result.code).toBe(0);
    const events = result.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { kind: string; run_id?: string; status?: string });
    const finished = events.filter((e) => e.kind === 'finished');
    expect(finished.map((e) => e.status)).toEqual(['completed', 'completed', 'completed', 'completed']);
    // Runs overlapped: a second run was claimed before the first finished.
    const order = events.filter((e) => e.kind === 'claimed' || e.kind === 'finished').map((e) => e.kind);
    expect(order.slice(0, 3)).toEqual(['claimed', 'claimed', 'claimed']);
    const logs = await readAuditLogs(ws);
    expect(new Set(finished.map((e) => e.run_id))).toEqual(new Set(logs.keys()));
    for (const lines of logs.values()) expect(lines.filter((l) => l.event === 'COMMAND_RECEIVED')).toHaveLength(1);
    expect(await listDir(path.join(ws, '.maestro', 'inflight'))).toEqual([]);
  });

  it('takes "watch": {"concurrency": N} from maestro.config.json', async () => {
    const ws = await workspace();
    await writeFile(path.join(ws, 'maestro.config.json'), JSON.stringify({ watch: { concurrency: 2 } }));
    for (let i = 1; i <= 2; i++) await dropCommand(ws, `${i}.json`, task(`Review the release checklist number ${i}`));
    const result = await runCli(['watch', '--once', '--json', '--workspace', ws], { env: { MAESTRO_OFFLINE_DELAY_MS: '20' } });
    expect(result.code).toBe(0);
    const kinds = result.stdout
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { kind: string }).kind);
    expect(kinds.filter((k) => k === 'claimed' || k === 'finished').slice(0, 2)).toEqual(['claimed', 'claimed']);
  });

  it('refuses a concurrency that is not a whole number from 1 to 64, before taking anything', async () => {
    const ws = await workspace();
    await dropCommand(ws, 'a.json', task('Review the release checklist'));
    for (const bad of ['0', '65', 'two', '1.5']) {
      const result = await runCli(['watch', '--once', '--concurrency', bad, '--workspace', ws]);
      expect(result.code).not.toBe(0);
      expect(result.stderr).toContain('must be a whole number from 1 to 64');
    }
    await writeFile(path.join(ws, 'maestro.config.json'), JSON.stringify({ watch: { concurrency: 0 } }));
    const config = await runCli(['watch', '--once', '--workspace', ws]);
    expect(config.code).toBe(2);
    expect(config.stderr).toContain('watch.concurrency');
    expect(await listDir(path.join(ws, 'commands'))).toEqual(['a.json']);
  });
});
