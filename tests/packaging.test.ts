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

  it('a command on a workspace of files loads none of the packages only some runs need: PostgreSQL, the openai SDK, the tokenizer, the English reader', async () => {
    // What a command's chunk loads before it runs: the chunk and what it imports statically, transitively
    // (bin/maestro.js loads main.js, which imports each command's chunk when that command is asked for).
    const bundle = path.join(REPO_ROOT, 'dist', 'bundle');
    const main = await readFile(path.join(bundle, 'main.js'), 'utf8');
    const chunkOf = (command: string) => [...main.matchAll(/import\("\.\/([a-z-]+?)-[\w-]{8}\.js"\)/g)].find((m) => m[1] === command)?.[0];
    const loadedBy = async (entry: string): Promise<Set<string>> => {
      const seen = new Set<string>();
      const packages = new Set<string>();
      const visit = async (file: string): Promise<void> => {
        if (seen.has(file)) return;
        seen.add(file);
        const code = await readFile(path.join(bundle, file), 'utf8');
        for (const [, spec = ''] of code.matchAll(/^(?:import|export)\b[^'"]*?from\s*["']([^"']+)["']/gm)) {
          if (spec.startsWith('./')) await visit(spec.slice(2));
          else if (!spec.startsWith('node:'))
            packages.add(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : (spec.split('/')[0] ?? spec));
        }
      };
      await visit(entry);
      return packages;
    };
    for (const command of ['run', 'status', 'hitl', 'runs', 'watch']) {
      const chunk = chunkOf(command)?.match(/\.\/(.+\.js)/)?.[1];
      expect(chunk, command).toBeDefined();
      const packages = await loadedBy(chunk ?? '');
      expect(packages.size, command).toBeGreaterThan(0);
      for (const lazy of ['pg', 'openai', 'gpt-tokenizer', 'compromise']) expect(packages, `${command} loads ${lazy}`).not.toContain(lazy);
    }
  });
});
