import { execFile } from 'node:child_process';
import { access, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../fakes/cli.js';
import { REPO_ROOT } from '../fakes/fixtures.js';

const exec = promisify(execFile);

// A real install, as a user outside the clone gets it: `npm pack`, then `npm install -g` of the
// tarball into a temporary prefix, then `maestro` from that prefix in unrelated folders.
describe('maestro installed from its tarball', () => {
  let dir: string;
  let bin: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'maestro-install-'));
    // dist/ is built by `npm test` (pretest); --ignore-scripts keeps the pack from rebuilding it under other tests.
    const { stdout } = await exec('npm', ['pack', '--ignore-scripts', '--pack-destination', dir, '--json'], { cwd: REPO_ROOT });
    const tarball = path.join(dir, (JSON.parse(stdout) as { filename: string }[])[0]!.filename);
    const prefix = path.join(dir, 'prefix');
    await exec('npm', ['install', '-g', '--prefix', prefix, '--prefer-offline', '--ignore-scripts', '--no-audit', '--no-fund', tarball], {
      cwd: dir,
    });
    bin = path.join(prefix, 'bin');
    env = { ...process.env, PATH: `${bin}${path.delimiter}${process.env.PATH ?? ''}`, NO_COLOR: '1', MAESTRO_WORKSPACE: '' };
  }, 120_000);

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('is called maestro-council on npm and gives a working `maestro` command in any folder', async () => {
    const pkg = JSON.parse(await readFile(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { name: string; version: string };
    expect(pkg.name).toBe('maestro-council');
    const version = await exec('maestro', ['--version'], { cwd: os.tmpdir(), env });
    expect(version.stdout.trim()).toBe(pkg.version);

    // `maestro init` in one folder; the "Try it" line it prints works as printed from another folder.
    const elsewhere = await mkdtemp(path.join(dir, 'cwd-'));
    const init = await exec('maestro', ['init', 'ws'], { cwd: elsewhere, env });
    const tryIt = /Try it:\s+(.+)/.exec(init.stdout)?.[1];
    expect(tryIt).toMatch(/^maestro run --workspace /);
    const run = await exec('sh', ['-c', tryIt!], { cwd: os.tmpdir(), env });
    expect(run.stdout).toContain('completed');
    await access(path.join(elsewhere, 'ws', 'outputs', 'migration-review.md'));
  }, 120_000);

  it('prints a hint that works without a global install: node and the full path of this maestro', async () => {
    const target = path.join(dir, 'no-global');
    const init = await runCli(['init', target], { env: { PATH: path.join(dir, 'nothing-here') } });
    const tryIt = /Try it:\s+(.+)/.exec(init.stdout)?.[1];
    expect(tryIt).toBe(
      `node ${JSON.stringify(path.join(REPO_ROOT, 'bin', 'maestro.js'))} run --workspace ${JSON.stringify(target)} ${JSON.stringify(path.join(target, 'examples', 'review-migration.json'))}`,
    );
    const run = await exec('sh', ['-c', tryIt!], { cwd: os.tmpdir(), env: { ...process.env, NO_COLOR: '1', MAESTRO_WORKSPACE: '' } });
    expect(run.stdout).toContain('completed');
  }, 60_000);
});
