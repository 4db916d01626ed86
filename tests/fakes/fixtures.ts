import { cp, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
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

/** Hands a workspace's audit logs to the suite-wide invariant check (tests/global-setup.ts). */
export async function collectAuditLogs(workspace: string): Promise<void> {
  const target = process.env.MAESTRO_TEST_AUDIT_COLLECT;
  if (!target) return;
  const auditDir = path.join(workspace, '.maestro', 'audit');
  const names = await readdir(auditDir).catch(() => [] as string[]);
  const tag = path.basename(workspace);
  for (const name of names.filter((n) => n.endsWith('.jsonl') || n.endsWith('.head'))) {
    await cp(path.join(auditDir, name), path.join(target, `${tag}-${name}`));
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
