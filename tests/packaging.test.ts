import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from './fakes/fixtures.js';

const exec = promisify(execFile);

// What a person who installs or packs maestro meets before running it: the licence the package
// declares is the one in LICENSE, the tarball `npm pack` leaves in the clone is not committed, and an
// install ends with no install-script warning (every dependency's install script is decided in allowScripts).
describe('packaging', () => {
  it('ships the licence package.json declares', async () => {
    const manifest = JSON.parse(await readFile(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { license: string };
    const licence = await readFile(path.join(REPO_ROOT, 'LICENSE'), 'utf8');
    expect(manifest.license).toBe('Apache-2.0');
    expect(licence).toMatch(/^\s*Apache License\s+Version 2\.0, January 2004/);
  });

  it('keeps the tarball npm pack makes out of git', async () => {
    const { stdout } = await exec('git', ['check-ignore', 'maestro-council-0.1.0.tgz'], { cwd: REPO_ROOT });
    expect(stdout.trim()).toBe('maestro-council-0.1.0.tgz');
  });

  it('decides every install script in allowScripts, so npm prints no install-script warning', async () => {
    const manifest = JSON.parse(await readFile(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { allowScripts?: Record<string, boolean> };
    const lock = JSON.parse(await readFile(path.join(REPO_ROOT, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { hasInstallScript?: boolean; dev?: boolean }>;
    };
    const withScripts = Object.entries(lock.packages).filter(([, p]) => p.hasInstallScript);
    expect(withScripts.length).toBeGreaterThan(0);
    for (const [at, p] of withScripts) {
      const name = at.replace(/^.*node_modules\//, '');
      expect(manifest.allowScripts?.[name], name).toBe(false);
      // Denied only because nothing at run time needs it: a runtime dependency's script would have to be approved.
      expect(p.dev, name).toBe(true);
    }
  });
});
