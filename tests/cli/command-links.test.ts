import { symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../fakes/cli.js';
import { listDir, makeWorkspace, removeWorkspace, task } from '../helpers/watch-workspace.js';

// A symbolic link dropped in commands/ is never left lying there: the watcher rejects it unread with the
// reason, and `validate` says the watcher would.

const workspaces: string[] = [];
afterEach(async () => {
  for (const ws of workspaces.splice(0)) await removeWorkspace(ws);
});

describe('a symbolic link in commands/', () => {
  it('is rejected by the watcher with the reason, and validate refuses it saying so', async () => {
    const ws = await makeWorkspace('maestro-links-');
    workspaces.push(ws);
    const target = path.join(ws, 'drafts-review.json');
    await writeFile(target, JSON.stringify(task('Summarise the benefits of code review for the team wiki.')));
    await symlink(target, path.join(ws, 'commands', 'review.json'));

    const checked = await runCli(['validate', path.join('commands', 'review.json'), '--json'], { cwd: ws });
    expect(checked.code).toBe(2);
    expect(checked.stdout).toContain('commands/review.json is a symbolic link');

    const watched = await runCli(['watch', '--once', '--json', '--workspace', ws], { timeoutMs: 60_000 });
    expect(watched.code).toBe(0);
    const events = watched.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { kind: string; status?: string; file?: string });
    expect(events.some((e) => e.kind === 'finished' && e.status === 'invalid')).toBe(true);
    expect(await listDir(path.join(ws, 'commands'))).toEqual([]);
    expect(await listDir(path.join(ws, '.maestro', 'rejected'))).toEqual(['review.json', 'review.json.error.json']);
    // The file it pointed at is left as it was.
    expect(await listDir(ws)).toContain('drafts-review.json');
  });
});
