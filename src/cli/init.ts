import { access, copyFile, mkdir, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Command } from 'commander';
import { ExitError } from '../domain/errors.js';
import { DEFAULT_WORKSPACE_CONFIG } from '../domain/workspace-config.js';
import type { Io } from './io.js';
import { invocation, PACKAGE_ROOT } from './package-info.js';
import { chalkFor } from './style.js';

export function registerInit(program: Command, io: Io): void {
  program
    .command('init')
    .description('scaffold a ready workspace: the triad personas, commands/, session_states/, an example, a config')
    .argument('[dir]', 'folder to set up (created if missing)', '.')
    .action(async (dir: string) => {
      const target = path.resolve(io.cwd, dir);
      const created = await scaffoldWorkspace(target);
      const c = chalkFor(io);
      io.stdout.write(`${c.green('✔')} workspace ready in ${target}\n${created.map((f) => `  + ${f}`).join('\n')}\n`);
      io.stdout.write(`\nTry it:  ${invocation(io.env)} run --workspace ${JSON.stringify(target)} ${JSON.stringify(path.join(target, 'examples', 'review-migration.json'))}\n`);
    });
}

const GITIGNORE = ['.maestro/', 'outputs/', 'session_states/*.json', ''].join('\n');

/** Creates the workspace files; refuses (changing nothing) if any of them already exists. */
export async function scaffoldWorkspace(target: string): Promise<string[]> {
  const files = new Map<string, { from?: string; text?: string }>();
  for (const name of (await readdir(path.join(PACKAGE_ROOT, 'personas'))).filter((n) => n.endsWith('.md')).sort()) {
    files.set(`personas/${name}`, { from: path.join(PACKAGE_ROOT, 'personas', name) });
  }
  for (const name of (await readdir(path.join(PACKAGE_ROOT, 'examples'))).sort()) {
    files.set(`examples/${name}`, { from: path.join(PACKAGE_ROOT, 'examples', name) });
  }
  files.set('commands/.gitkeep', { text: '' });
  files.set('session_states/.gitkeep', { text: '' });
  files.set('maestro.config.json', { text: `${JSON.stringify(DEFAULT_WORKSPACE_CONFIG, null, 2)}\n` });
  files.set('.gitignore', { text: GITIGNORE });

  const existing: string[] = [];
  for (const rel of files.keys()) {
    try {
      await access(path.join(target, rel));
      existing.push(rel);
    } catch {
      // absent: good
    }
  }
  if (existing.length > 0) {
    throw new ExitError(2, `maestro init: refusing to overwrite what is already in ${target}:\n${existing.map((f) => `  ${f}`).join('\n')}\nNothing was changed.`);
  }
  for (const [rel, source] of files) {
    const dest = path.join(target, rel);
    await mkdir(path.dirname(dest), { recursive: true });
    if (source.from) await copyFile(source.from, dest);
    else await writeFile(dest, source.text ?? '', { flag: 'wx' });
  }
  return [...files.keys()];
}
