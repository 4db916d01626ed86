import type { PersonaLoad } from '../domain/ports.js';
import type { WorkspaceConfig } from '../domain/workspace-config.js';
import type { RunDeps } from './run-deps.js';

/**
 * What would stop every run in this workspace before it starts: broken or missing persona files,
 * `maestro.config.json` naming a persona that does not exist (`configPersonaProblems`), and
 * model routes that do not resolve (a persona's route, its fallback, or the invocation's `--route`).
 * Returns `where: what` lines; empty when the workspace can take commands. A watcher checks this at
 * start (and refuses to start) and before each claim (and stops taking commands while it fails);
 * before each claim it also re-reads `maestro.config.json` (`checkWorkspaceConfig`), which the app
 * itself read only once.
 */
export async function checkWorkspace(deps: Pick<RunDeps, 'personas' | 'models' | 'llm' | 'config'>): Promise<string[]> {
  const problems: string[] = [];
  const loaded = await deps.personas.loadAll();
  for (const p of loaded.problems) for (const issue of p.issues) problems.push(`${p.file}: ${issue}`);
  problems.push(...configPersonaProblems(deps.config, loaded));
  if (deps.llm) return problems; // one client answers every persona (a replay or a test): no routes to check
  // One line per broken route, naming who uses it (a typo in --route would otherwise repeat per persona).
  const broken = new Map<string, string[]>();
  const check = (routeId: string, who: string): void => {
    const resolved = deps.models.resolve(routeId);
    if ('error' in resolved) broken.set(resolved.error, [...(broken.get(resolved.error) ?? []), who]);
  };
  for (const persona of loaded.personas) {
    check(deps.models.routeIdFor(persona), persona.file);
    if (persona.fallback_route) check(persona.fallback_route, `${persona.file} (fallback_route)`);
  }
  for (const [error, users] of broken) problems.push(`${error} — used by ${users.join(', ')}`);
  return problems;
}

/**
 * The personas `maestro.config.json` names that do not exist: a `deliberation.groups` member with no
 * persona file, which `hierarchical` would otherwise leave out without a word (a whole group, when it
 * was its only member). As `maestro.config.json: field: message` lines, the words a command's own
 * `config.groups` is refused with. Such a config is broken for every command, as a schema error in
 * it is. A persona whose file is there but does not read is not named again (its file's problem is),
 * and without a personas/ folder nothing is.
 */
export function configPersonaProblems(config: WorkspaceConfig, loaded: PersonaLoad): string[] {
  if (loaded.problems.some((p) => p.file === 'personas/')) return [];
  const broken = loaded.problems.map((p) => p.file.replace(/^personas\//, '').replace(/\.md$/, ''));
  const known = new Set([...loaded.personas.map((p) => p.id), ...broken]);
  return Object.entries(config.deliberation.groups ?? {}).flatMap(([name, ids]) =>
    ids.flatMap((id, i) => (known.has(id) ? [] : [`maestro.config.json: deliberation.groups.${name}.${i}: no persona "${id}"`])),
  );
}
