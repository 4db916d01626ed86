import { cp, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { readAuditRun } from '../../src/adapters/fs/audit-store.js';
import { WorkspacePaths } from '../../src/adapters/fs/workspace-paths.js';
import type { Persona } from '../../src/domain/persona.js';

export const REPO_ROOT = path.resolve(import.meta.dirname, '..', '..');
export const CLI = path.join(REPO_ROOT, 'bin', 'maestro.js');

/** A temporary workspace holding the default triad personas and the example; removed by `cleanup`. */
export async function tempWorkspace(files: Record<string, string> = {}): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'maestro-test-'));
  await cp(path.join(REPO_ROOT, 'personas'), path.join(dir, 'personas'), { recursive: true });
  await cp(path.join(REPO_ROOT, 'examples'), path.join(dir, 'examples'), { recursive: true });
  await mkdir(path.join(dir, 'commands'), { recursive: true });
  await mkdir(path.join(dir, 'session_states'), { recursive: true });
  for (const [rel, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, rel)), { recursive: true });
    await writeFile(path.join(dir, rel), content);
  }
  return {
    dir,
    cleanup: async () => {
      await collectAuditLogs(dir);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Hands a workspace's audit logs to the suite-wide invariant check (tests/global-setup.ts), each as
 * `maestro audit verify` reads it: with the records its run's checkpoint journal still holds ahead of
 * it (a process killed after a step's journal line, before its log and head were brought up to it).
 */
export async function collectAuditLogs(workspace: string): Promise<void> {
  const target = process.env.MAESTRO_TEST_AUDIT_COLLECT;
  if (!target) return;
  const paths = new WorkspacePaths(workspace);
  const names = await readdir(path.join(workspace, '.maestro', 'audit')).catch(() => [] as string[]);
  const tag = path.basename(workspace);
  for (const name of names.filter((n) => n.endsWith('.jsonl'))) {
    const run = await readAuditRun(paths, name.slice(0, -'.jsonl'.length));
    if (run.log !== undefined) await writeFile(path.join(target, `${tag}-${name}`), run.log);
    if (run.head !== undefined) await writeFile(path.join(target, `${tag}-${name.replace(/\.jsonl$/, '.head')}`), run.head);
  }
}

/** A persona for domain tests. */
export function aPersona(overrides: Partial<Persona> = {}): Persona {
  return {
    id: 'alpha',
    name: 'Alpha',
    order: 1,
    focus_domains: [],
    privileges: ['READ_FILE'],
    weight: 1,
    prompt: 'You are Alpha.',
    file: 'personas/alpha.md',
    ...overrides,
  };
}
