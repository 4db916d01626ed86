import { FsPersonaStore } from '../adapters/fs/persona-store.js';
import { WorkspacePaths } from '../adapters/fs/workspace-paths.js';
import { assertWorkspace } from '../adapters/fs/workspace-guard.js';
import { ConfiguredModelRoutes } from '../adapters/model/model-routes.js';
import { endpointOrigin } from '../adapters/model/openai-failure.js';
import { checkStructuredCall, listModels } from '../adapters/model/route-probe.js';
import { doctorRoutes, type DoctorReport } from '../app/doctor.js';
import { loadWorkspaceConfig } from '../config.js';

export type { DoctorReport, RouteReport } from '../app/doctor.js';

/** `maestro doctor`: the workspace's routes in use, each checked against its endpoint, and the persona files that do not read. */
export async function doctorWorkspace(dir: string, env: Readonly<Record<string, string | undefined>>): Promise<DoctorReport> {
  const paths = new WorkspacePaths(dir);
  await assertWorkspace(paths);
  const config = await loadWorkspaceConfig(paths.config);
  return doctorRoutes({
    models: new ConfiguredModelRoutes({ config, env }),
    personas: new FsPersonaStore(paths.personas),
    defaultRoute: config.default_route,
    checks: {
      listModels: (route) => listModels(route, env),
      structuredCall: (route) => checkStructuredCall(route, env),
      endpointOf: (route) => endpointOrigin(route),
    },
  });
}
