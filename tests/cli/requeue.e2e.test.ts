import { access, readdir, readFile, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../fakes/cli.js';
import { tempWorkspace } from '../fakes/fixtures.js';

let ws: Awaited<ReturnType<typeof tempWorkspace>>;
const maestro = (...args: string[]) => runCli(args, { cwd: ws.dir });
const rejectedDir = () => path.join(ws.dir, '.maestro', 'rejected');
beforeEach(async () => {
  ws = await tempWorkspace();
});
afterEach(() => ws.cleanup());

/**
 * A command file that does not parse, last written a minute ago: the watcher rejects it at once. (One
 * written just now is given 2 s to be finished first; tests/adapters/fs/command-inbox.test.ts shows that wait.)
 */
async function writeBroken(name: string, text: string): Promise<void> {
  const file = path.join(ws.dir, 'commands', name);
  await writeFile(file, text);
  const old = new Date(Date.now() - 60_000);
  await utimes(file, old, old);
}

/** A command file as a person fixes it in .maestro/rejected/. */
const FIXED = '{"task_description": "Review the plan"}';

describe('maestro requeue', () => {
  it('lists rejected commands with their reason, moves a fixed one back, and the watcher then runs it', async () => {
    await writeFile(
      path.join(ws.dir, 'commands', 'typo.json'),
      JSON.stringify({ task_descripton: 'Review the rollout plan', config: { max_rounds: 1 } }),
    );
    await writeBroken('other.json', '{ not json');
    expect((await maestro('watch', '--once')).code).toBe(0);
    expect((await readdir(rejectedDir())).sort()).toEqual(['other.json', 'other.json.error.json', 'typo.json', 'typo.json.error.json']);

    const list = await maestro('requeue');
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/typo\.json\s+SPEC_/);
    // What is wrong with each, not only that something is: the problems under the first line.
    expect(list.stdout).toMatch(/other\.json\s+SPEC_\w+ other\.json is not a valid command file:\n\s+\(root\): not valid JSON/);
    expect(list.stdout).toMatch(/typo\.json\s+SPEC_\w+ [^\n]*:\n {4}\S/);
    expect(list.stdout).toContain('maestro requeue <file…> | --all');

    // The person fixes the file where it lies, then requeues it by name.
    await writeFile(
      path.join(rejectedDir(), 'typo.json'),
      JSON.stringify({ task_description: 'Review the rollout plan', config: { max_rounds: 1 } }),
    );
    const moved = await maestro('requeue', '.maestro/rejected/typo.json');
    expect(moved.code).toBe(0);
    expect(moved.stdout).toContain('typo.json → commands/typo.json');
    expect(await readdir(rejectedDir())).toEqual(['other.json', 'other.json.error.json']);
    const watch = await maestro('watch', '--once', '--json');
    expect(watch.stdout).toMatch(/"status":"completed"/);
    await expect(access(path.join(ws.dir, 'commands', 'typo.json'))).rejects.toThrow();
  });

  it('never overwrites a file in commands/, refuses unknown names, and --all takes everything', async () => {
    await writeBroken('a.json', '{');
    expect((await maestro('watch', '--once')).code).toBe(0);
    await writeFile(path.join(ws.dir, 'commands', 'a.json'), 'a new command with the same name');
    const unknown = await maestro('requeue', 'zzz.json');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('not in .maestro/rejected/: zzz.json');
    // A path into another folder is not the rejected file of the same name.
    const elsewhere = await maestro('requeue', 'some/other/a.json');
    expect(elsewhere.code).toBe(2);
    expect(elsewhere.stderr).toContain('not in .maestro/rejected/: some/other/a.json');
    // Still broken, it is refused, saying why; fixed where it lies, it goes back.
    const still = await maestro('requeue', '--all');
    expect(still.code).toBe(2);
    expect(still.stderr).toContain('it would be rejected again');
    await writeFile(path.join(rejectedDir(), 'a.json'), FIXED);
    const all = await maestro('requeue', '--all');
    expect(all.stdout).toContain('a.json → commands/a.requeued-1.json');
    expect(await readFile(path.join(ws.dir, 'commands', 'a.json'), 'utf8')).toBe('a new command with the same name');
    expect(await readFile(path.join(ws.dir, 'commands', 'a.requeued-1.json'), 'utf8')).toBe(FIXED);
    expect((await maestro('requeue', '--all')).stdout).toContain('nothing was rejected');
  });

  it('--all with one file that still does not read moves nothing, says so for each, and exits 2; fixed, it moves all', async () => {
    await writeBroken('a.json', '{"task_description":"x","oops":1}');
    await writeBroken('b.json', '{"task_description": "broken');
    expect((await maestro('watch', '--once')).code).toBe(0);
    await writeFile(path.join(rejectedDir(), 'a.json'), FIXED);
    const before = (await readdir(rejectedDir())).sort();
    for (const args of [
      ['requeue', '--all'],
      ['requeue', '--all', '--json'],
      ['requeue', 'a.json', 'b.json'],
    ]) {
      const r = await maestro(...args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stdout).not.toContain('↺');
      expect(r.stderr).toContain('b.json');
      expect(r.stderr).toContain('nothing was requeued');
      if (args.includes('--json')) expect(JSON.parse(r.stdout)).toMatchObject({ status: 'invalid', exit_code: 2 });
      expect((await readdir(rejectedDir())).sort()).toEqual(before);
      expect(await readdir(path.join(ws.dir, 'commands'))).toEqual([]);
    }
    await writeFile(path.join(rejectedDir(), 'b.json'), FIXED);
    const all = await maestro('requeue', '--all', '--json');
    expect(all.code).toBe(0);
    expect(JSON.parse(all.stdout)).toEqual({
      requeued: [
        { name: 'a.json', to: 'commands/a.json' },
        { name: 'b.json', to: 'commands/b.json' },
      ],
    });
  });

  it('puts a file set aside under its run id (its name was taken in rejected/) back under the name it was dropped with', async () => {
    await writeBroken('nightly.json', '{');
    expect((await maestro('watch', '--once')).code).toBe(0);
    await writeBroken('nightly.json', '{ "task_description": ');
    expect((await maestro('watch', '--once')).code).toBe(0);
    const second = (await readdir(rejectedDir())).find((n) => /^nightly\.\d{8}T\d{6}Z-\w+\.json$/.test(n));
    expect(second, (await readdir(rejectedDir())).join(', ')).toBeDefined();
    for (const name of ['nightly.json', second as string]) await writeFile(path.join(rejectedDir(), name), FIXED);
    const moved = await maestro('requeue', second as string);
    expect(moved.code).toBe(0);
    expect(moved.stdout).toContain(`${second} → commands/nightly.json`);
    expect(await readFile(path.join(ws.dir, 'commands', 'nightly.json'), 'utf8')).toBe(FIXED);
    // The first one's name is taken in commands/ now: it goes back beside it.
    expect((await maestro('requeue', 'nightly.json')).stdout).toContain('nightly.json → commands/nightly.requeued-1.json');
  });
});
