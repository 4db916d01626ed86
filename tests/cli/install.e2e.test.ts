import { execFile } from 'node:child_process';
import { access, chmod, mkdir, mkdtemp, readdir, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../fakes/cli.js';
import { REPO_ROOT } from '../fakes/fixtures.js';

const exec = promisify(execFile);

interface PackedManifest {
  readonly name: string;
  readonly bin: Record<string, string>;
  readonly dependencies: Record<string, string>;
}

// The package as a user outside the clone gets it: `npm pack`, the tarball unpacked into a temporary
// prefix laid out as `npm install -g` lays it out (lib/node_modules/<name>, bin/<command> linked to the
// package's bin), and `maestro` from that prefix in unrelated folders.
//
// The package's own node_modules holds only what its package.json declares in `dependencies`, each
// linked to the clone's copy (whose own dependencies resolve from there): a runtime import of anything
// else, a dev dependency included, fails here as it would after a real install. A real `npm install -g`
// copies 124 MB of dependencies (about 9 CPU-s, 7 % of the suite's CPU); the layout above checks the
// same things: the files the tarball ships, its bin entry, and its declared dependencies, with a
// parallel run (its heat map written beside the artifact) besides the default one.
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
    bin = path.join(prefix, 'bin');
    const unpacked = path.join(prefix, 'lib', 'node_modules');
    await mkdir(unpacked, { recursive: true });
    await exec('tar', ['-xzf', tarball, '-C', unpacked]);
    const manifest = JSON.parse(await readFile(path.join(unpacked, 'package', 'package.json'), 'utf8')) as PackedManifest;
    const home = path.join(unpacked, manifest.name);
    await rename(path.join(unpacked, 'package'), home);
    for (const dependency of Object.keys(manifest.dependencies)) {
      const at = path.join(home, 'node_modules', dependency);
      await mkdir(path.dirname(at), { recursive: true });
      await symlink(path.join(REPO_ROOT, 'node_modules', dependency), at, 'dir');
    }
    await mkdir(bin);
    for (const [command, file] of Object.entries(manifest.bin)) {
      await chmod(path.join(home, file), 0o755);
      await symlink(path.join(home, file), path.join(bin, command));
    }
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

  it("draws a parallel run's heat map with what it installs", async () => {
    const ws = path.join(await mkdtemp(path.join(dir, 'cwd-')), 'ws');
    await exec('maestro', ['init', ws], { cwd: dir, env });
    const command = path.join(ws, 'parallel.json');
    const spec = { task_description: 'Review the migration plan and list the risks', config: { mode: 'parallel', max_rounds: 1 } };
    await writeFile(command, JSON.stringify(spec));
    const run = await exec('maestro', ['run', '--json', '--workspace', ws, command], { cwd: os.tmpdir(), env });
    expect(JSON.parse(run.stdout)).toMatchObject({ status: 'completed' });
    const svg = (await readdir(path.join(ws, 'outputs'))).filter((name) => name.endsWith('.heatmap.svg'));
    expect(svg).toHaveLength(1);
    expect(await readFile(path.join(ws, 'outputs', svg[0]!), 'utf8')).toContain('<svg');
  }, 60_000);

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
