import type { RunDeps } from './run-deps.js';

/**
 * What would stop every run in this workspace before it starts: broken or missing persona files and
 * model routes that do not resolve (a persona's route, its fallback, or the invocation's `--route`).
 * Returns `where: what` lines; empty when the workspace can take commands. A watcher checks this at
 * start (and refuses to start) and before each claim (and stops taking commands while it fails);
 * before each claim it also re-reads `maestro.config.json` (`checkWorkspaceConfig`), which the app
 * itself read only once.
 */
export async function checkWorkspace(deps: Pick<RunDeps, 'personas' | 'models' | 'llm'>): Promise<string[]> {
  const problems: string[] = [];
  const loaded = await deps.personas.loadAll();
  for (const p of loaded.problems) for (const issue of p.issues) problems.push(`${p.file}: ${issue}`);
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
