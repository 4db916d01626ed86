import { readFile } from 'node:fs/promises';
import { FsEvalFolder } from '../adapters/fs/eval-store.js';
import { WorkspacePaths } from '../adapters/fs/workspace-paths.js';
import { assertWorkspace } from '../adapters/fs/workspace-guard.js';
import { evalCaller } from '../app/eval-caller.js';
import { loadWorkspaceConfig } from '../config.js';
import { InvalidInputError } from '../domain/errors.js';
import { OFFLINE_ROUTE_ID } from '../domain/route.js';
import type { EvalCaller } from '../domain/eval/ports.js';
import { createApp } from './app.js';

/** What `maestro eval` asks of the composition: the workspace, the route, and the eval's folder and spec. */
export interface EvalOpenOptions {
  readonly workspace: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly route?: string;
  readonly model?: string;
  /** The eval's folder name under `.maestro/eval/`. */
  readonly name: string;
  /** What the eval measures; a folder started with another spec is refused unless `fresh`. */
  readonly spec: Record<string, unknown>;
  readonly fresh: boolean;
  readonly rounds?: number;
}

/** An eval ready to run: its folder (results, reports), its caller, and what to say about the model. */
export interface OpenedEval {
  readonly folder: FsEvalFolder;
  readonly caller: EvalCaller;
  /** `route (provider: model)` of the eval's calls. */
  readonly label: string;
  /** The route is the offline rehearsal model. */
  readonly rehearsal: boolean;
}

/**
 * Sets an eval up in its own folder: the spec checked against the one it was started with (so a
 * resumed eval measures the same thing), and a scratch workspace holding a copy of the workspace's
 * config and personas, where its council runs happen with persona memory and the loop policy off. Every call goes
 * through the same route clients `maestro run` uses, so the routes' limits and retries apply.
 */
export async function openEval(options: EvalOpenOptions): Promise<OpenedEval> {
  const paths = new WorkspacePaths(options.workspace);
  await assertWorkspace(paths);
  const config = await loadWorkspaceConfig(paths.config); // validates the real config first
  const routeId = options.route ?? config.default_route;
  if (routeId !== OFFLINE_ROUTE_ID && !Object.hasOwn(config.routes, routeId)) {
    const known = [OFFLINE_ROUTE_ID, ...Object.keys(config.routes)].sort().join(', ');
    throw new InvalidInputError('--route', [`route "${routeId}" is not defined in maestro.config.json (known routes: ${known})`]);
  }
  const folder = new FsEvalFolder(paths.state, options.name);
  if (options.fresh) await folder.clear();
  const started = await folder.readSpec().catch(() => undefined);
  if (started !== undefined && JSON.stringify(started) !== JSON.stringify(options.spec)) {
    throw new InvalidInputError(folder.dir, [
      `the eval "${options.name}" was started with other settings (${JSON.stringify(started)}); resume it with those, start it over with --fresh, or name a new one with --name`,
    ]);
  }
  await folder.writeSpec(options.spec);
  const raw = await readFile(paths.config, 'utf8').then(
    (t) => JSON.parse(t) as Record<string, unknown>,
    () => ({}),
  );
  await folder.prepareScratch(raw, paths.personas);
  const app = await createApp({
    workspace: folder.scratch,
    // The scratch config has no engine; the environment's must not bring the workspace's back (its runs, memory, loop policy).
    env: { ...options.env, MAESTRO_ENGINE_URL: undefined },
    ...(options.route ? { route: options.route } : {}),
    ...(options.model ? { model: options.model } : {}),
  });
  const { personas, problems } = await app.deps.personas.loadAll();
  if (personas.length === 0 || problems.length > 0)
    throw new InvalidInputError(
      paths.personas,
      problems.length > 0 ? problems.flatMap((p) => p.issues.map((i) => `${p.file}: ${i}`)) : ['no personas to form a council'],
    );
  const route = app.deps.models.resolve(routeId);
  if ('error' in route) throw new InvalidInputError('--route', [route.error]);
  return {
    folder,
    caller: evalCaller({ deps: app.deps, routeId, ...(options.rounds ? { rounds: options.rounds } : {}) }),
    label: `${route.id} (${route.provider}: ${route.model})`,
    rehearsal: route.provider === 'offline',
  };
}
