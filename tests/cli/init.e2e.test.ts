import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { atomicTempPath } from '../../src/adapters/fs/atomic-file.js';
import { lockPathFor, mergeIgnoreLines, RUNTIME_FILES } from '../../src/domain/runtime-files.js';
import { runCli, type CliResult } from '../fakes/cli.js';
import { collectAuditLogs, REPO_ROOT } from '../fakes/fixtures.js';
import { cliReadableBy } from '../helpers/cli-for-user.js';

const exec = promisify(execFile);
const IS_ROOT = process.getuid?.() === 0;
/** As root every folder is writable: the not-writable cases then run the CLI as `nobody`. */
const SETPRIV = ['/usr/bin/setpriv', '/bin/setpriv'].find((p) => existsSync(p));

/** `maestro init target`, as a user for whom permissions count (needs the build for `nobody`). */
async function initAsUser(target: string): Promise<CliResult> {
  if (!IS_ROOT) return runCli(['init', target]);
  await chmod(path.dirname(target), 0o755); // mkdtemp's 0700 would hide the folder itself
  // The clone may sit where `nobody` cannot read (a 0700 home or temporary folder): then a readable copy.
  const cli = await cliReadableBy(SETPRIV!);
  const args = ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, cli, 'init', target];
  return new Promise<CliResult>((resolve) => {
    execFile(SETPRIV!, args, { env: { ...process.env, NO_COLOR: '1' } }, (error, stdout, stderr) =>
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
    );
  });
}

/** A project that has nothing to do with maestro yet: its own .gitignore (CRLF), an examples/ file, code. */
const PROJECT: Record<string, string> = {
  '.gitignore': 'node_modules/\r\n*.log\r\n',
  'examples/review-migration.json': '{ "this": "is the project\'s own example, not maestro\'s" }\n',
  'src/app.ts': 'export const answer = 42;\n',
  'docs/notes.md': '# Notes\n',
  'README.md': '# A project\n',
};

let dir: string;
const git = async (...args: string[]) =>
  (await exec('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.test', ...args], { cwd: dir })).stdout;

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'maestro-init-'));
  for (const [rel, text] of Object.entries(PROJECT)) {
    await mkdir(path.dirname(path.join(dir, rel)), { recursive: true });
    await writeFile(path.join(dir, rel), text);
  }
  await git('init', '-q');
  await git('add', '-A');
  await git('commit', '-q', '-m', 'the project');
});
afterEach(async () => {
  await chmod(dir, 0o755);
  await collectAuditLogs(dir);
  await rm(dir, { recursive: true, force: true });
});

/** Every file under `root` but .git/, with a hash of its bytes. */
async function snapshot(root: string): Promise<Map<string, string>> {
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  const files = entries
    .filter((e) => e.isFile())
    .map((e) => path.relative(root, path.join(e.parentPath, e.name)).split(path.sep).join('/'));
  const out = new Map<string, string>();
  for (const rel of files.filter((f) => !f.startsWith('.git/')).sort()) {
    out.set(
      rel,
      createHash('sha256')
        .update(await readFile(path.join(root, rel)))
        .digest('hex'),
    );
  }
  return out;
}

/** Runs maestro's own code in the workspace until it has written every kind of runtime file. */
async function makeRuntimeData(): Promise<void> {
  const configFile = path.join(dir, 'maestro.config.json');
  const config = JSON.parse(await readFile(configFile, 'utf8')) as { history: { keep_runs: number } };
  config.history.keep_runs = 1; // the second run moves the first into session_states/archive/
  await writeFile(configFile, JSON.stringify(config));
  await writeFile(path.join(dir, 'task.json'), JSON.stringify({ task_description: 'Plan the rollback drill' }));
  const run = async () => expect((await runCli(['run', 'task.json'], { cwd: dir })).code).toBe(0);
  await run();
  await run();
  expect((await runCli(['session', 'reset'], { cwd: dir })).code).toBe(0); // memory into session_states/archive/S-…/
  await writeFile(path.join(dir, 'session_states', 'auditor_session.json'), '{ not json');
  await writeFile(path.join(dir, '.maestro', 'loop-policy.json'), '{ not json');
  // A corrupt loop policy stops every run until the explicit new session, which moves it aside.
  expect((await runCli(['run', 'task.json'], { cwd: dir })).code).toBe(1);
  expect((await runCli(['session', 'reset', '--keep-memory'], { cwd: dir })).code).toBe(0);
  await run(); // moves the memory aside as *.corrupt-<timestamp>, and writes fresh memory
  // What only a crash leaves behind: a lock held, and the temporary file of an atomic write, next to
  // persona memory and next to an artifact at a path the command chose.
  const memory = path.join(dir, 'session_states', 'coordinator_session.json');
  const artifact = path.join(dir, 'docs', 'review.md');
  for (const file of [lockPathFor(memory), atomicTempPath(memory, 4242, '0a1b2c3d'), atomicTempPath(artifact, 7, 'deadbeef')]) {
    await writeFile(file, 'left by a crash');
  }
}

/** `git check-ignore -v -n` for each path: the .gitignore line that ignores it, or '' when none does. */
async function ignoredBy(paths: readonly string[]): Promise<Map<string, string>> {
  // Exit 1 when no path is ignored: the listing is on stdout either way.
  const { stdout } = await exec('git', ['check-ignore', '-v', '-n', '--no-index', '--', ...paths], { cwd: dir }).catch(
    (e: { stdout: string }) => e,
  );
  const out = new Map<string, string>();
  for (const line of stdout.split('\n').filter(Boolean)) {
    const [source, file] = line.split('\t') as [string, string];
    out.set(file, source.replace(/^[^:]*:[^:]*:/, ''));
  }
  return out;
}

describe('maestro init in an existing project', () => {
  it("adds what is missing, merges .gitignore, keeps the project's files, and git then ignores every kind of runtime data", async () => {
    const r = await runCli(['init'], { cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('+ personas/coordinator.md  created');
    expect(r.stdout).toContain('= examples/review-migration.json  already there, kept as it is');
    expect(r.stdout).toMatch(/~ \.gitignore {2}merged \d+ line\(s\): \.maestro\/ /);

    const gitignore = await readFile(path.join(dir, '.gitignore'), 'utf8');
    expect(gitignore.startsWith(PROJECT['.gitignore']!)).toBe(true);
    expect(gitignore.replace(/\r\n/g, '')).not.toContain('\n');
    expect(gitignore.split('\r\n')).toEqual(expect.arrayContaining(RUNTIME_FILES.map((k) => k.pattern)));
    expect(await readFile(path.join(dir, 'examples', 'review-migration.json'), 'utf8')).toBe(PROJECT['examples/review-migration.json']);
    const scaffolded = (await git('status', '--porcelain', '-uall')).split('\n').filter(Boolean);
    expect(scaffolded.filter((l) => !l.startsWith('??'))).toEqual([' M .gitignore']);

    await makeRuntimeData();
    const isOwnOrScaffolded = (f: string) => f in PROJECT || scaffolded.includes(`?? ${f}`) || f === 'task.json';
    const runtime = [...(await snapshot(dir)).keys()].filter((f) => !isOwnOrScaffolded(f));
    for (const kind of ['.maestro/runs/', '.maestro/audit/', 'outputs/', 'session_states/archive/', '.corrupt-', '_session.json']) {
      expect(
        runtime.some((f) => f.includes(kind)),
        `no ${kind} file was made`,
      ).toBe(true);
    }
    const by = await ignoredBy(runtime);
    expect(
      runtime.filter((f) => !by.get(f)),
      'runtime files git would show',
    ).toEqual([]);
    expect(new Set(by.values())).toEqual(new Set(RUNTIME_FILES.map((k) => k.pattern)));
    // What git shows is the project's own change and what init added, nothing of the runs.
    expect((await git('status', '--porcelain', '-uall')).split('\n').filter(Boolean)).toEqual([...scaffolded, '?? task.json'].sort());
    const own = await ignoredBy(Object.keys(PROJECT));
    expect([...own.values()].filter(Boolean)).toEqual([]);
  }, 90_000);

  it('changes nothing the second time, and says so', async () => {
    expect((await runCli(['init'], { cwd: dir })).code).toBe(0);
    const before = await snapshot(dir);
    const again = await runCli(['init', dir]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('nothing to do');
    expect(again.stdout).not.toMatch(/^ {2}[+~] /m);
    expect(again.stdout).toContain('= .gitignore  already there, kept as it is');
    expect(await snapshot(dir)).toEqual(before);
  });

  it.each([
    ['the target is a file', 'README.md', /README\.md is a file, not a folder/],
    ['the target is under a file', 'README.md/ws', /README\.md\/ws cannot be created: .*README\.md is a file/],
    ['personas is a file', '.', /personas is in the way: init needs a folder there/],
    ['.gitignore is a folder', '.', /\.gitignore is not a file/],
  ])('refuses with exit 2 and changes nothing when %s', async (what, target, message) => {
    if (what === 'personas is a file') await writeFile(path.join(dir, 'personas'), 'not a folder\n');
    if (what === '.gitignore is a folder') {
      await rm(path.join(dir, '.gitignore'));
      await mkdir(path.join(dir, '.gitignore'));
    }
    const before = await snapshot(dir);
    const r = await runCli(['init', target], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).toContain('Nothing was changed');
    expect(await snapshot(dir)).toEqual(before);
  });

  it.skipIf(IS_ROOT && !SETPRIV)('refuses with exit 2 and changes nothing when the folder is not writable', async () => {
    await chmod(dir, 0o555);
    const r = await initAsUser(dir);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(`${dir} is not writable`);
    await chmod(dir, 0o755);
    expect([...(await snapshot(dir)).keys()].sort()).toEqual(Object.keys(PROJECT).sort());
  });

  it.skipIf(IS_ROOT && !SETPRIV)('refuses with exit 2 and changes nothing when the .gitignore is not writable', async () => {
    for (const folder of [dir, path.join(dir, 'examples')]) await chmod(folder, 0o777);
    await chmod(path.join(dir, '.gitignore'), 0o444);
    const r = await initAsUser(dir);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/\.gitignore is not writable \(EACCES\), so the runtime lines cannot be merged into it\. Nothing was changed/);
    expect([...(await snapshot(dir)).keys()].sort()).toEqual(Object.keys(PROJECT).sort());
  });
});

describe("this repository's own .gitignore (the repository is a workspace too)", () => {
  it('has every runtime line maestro init writes', async () => {
    expect(mergeIgnoreLines(await readFile(path.join(REPO_ROOT, '.gitignore'), 'utf8')).added).toEqual([]);
  });
});
