import { execFile } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { mkdtemp, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { CLI, REPO_ROOT } from '../fakes/fixtures.js';

const exec = promisify(execFile);

/**
 * The built CLI at a path another user (`nobody`) can read. A clone in a private folder (root's
 * home, `mktemp -d`: 0700) cannot be read by anyone else, so a test that runs the CLI as another
 * user gets a copy: the CLI, its bundle and the packages it loads at run time, hard-linked where the
 * file system allows (no bytes copied), under a world-readable temporary folder. Made once per process.
 */
let made: Promise<string> | undefined;
export function cliReadableBy(setpriv: string, uid = 65534): Promise<string> {
  made ??= (async () => {
    const readable = await exec(setpriv, [
      `--reuid=${uid}`,
      `--regid=${uid}`,
      '--clear-groups',
      process.execPath,
      '-e',
      `require('fs').accessSync(${JSON.stringify(CLI)})`,
    ])
      .then(() => true)
      .catch(() => false);
    if (readable) return CLI;
    // Not under the suite's own temporary folder, which may be private too: the system's, open to all.
    const root = await mkdtemp(path.join(existsSync('/tmp') ? '/tmp' : os.tmpdir(), 'maestro-cli-'));
    process.once('exit', () => rmSync(root, { recursive: true, force: true }));
    const { stdout } = await exec('npm', ['ls', '--omit=dev', '--all', '--parseable'], { cwd: REPO_ROOT, maxBuffer: 16 << 20 });
    const packages = [...new Set(stdout.split('\n').filter((p) => p.startsWith(path.join(REPO_ROOT, 'node_modules'))))];
    const copy = async (from: string, to: string) => {
      await exec('mkdir', ['-p', path.dirname(to)]);
      await exec('cp', ['-al', from, to]).catch(() => exec('cp', ['-a', from, to]));
    };
    for (const p of ['bin', 'dist/bundle', 'personas', 'examples', 'package.json']) await copy(path.join(REPO_ROOT, p), path.join(root, p));
    for (const p of packages) await copy(p, path.join(root, path.relative(REPO_ROOT, p)));
    await exec('chmod', ['-R', 'a+rX', root]);
    JSON.parse(await readFile(path.join(root, 'package.json'), 'utf8'));
    return path.join(root, 'bin', 'maestro.js');
  })();
  return made;
}
