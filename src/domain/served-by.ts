import type { Step } from './run-state.js';

/** Which route and model answered how many of a run's model calls (a REROUTE moves the calls after it). */
export interface ServedBy {
  readonly route: string | null;
  /** As the steps record it: `route/model`. */
  readonly model: string;
  readonly calls: number;
}

/** The routes and models that served the run's calls, in the order they first answered. */
export function servedBy(steps: readonly Pick<Step, 'model' | 'calls' | 'identity'>[]): ServedBy[] {
  const served = new Map<string, { route: string | null; calls: number }>();
  for (const step of steps) {
    const was = served.get(step.model);
    const route = step.identity?.route ?? (step.model.includes('/') ? (step.model.split('/')[0] ?? null) : null);
    served.set(step.model, { route: was?.route ?? route, calls: (was?.calls ?? 0) + step.calls });
  }
  return [...served].map(([model, s]) => ({ route: s.route, model, calls: s.calls }));
}

/** As `servedBy`, over all of a run's calls: the mediator's classification (a call like any other) first, then the steps. */
export function servedByRun(run: {
  readonly steps: readonly Pick<Step, 'model' | 'calls' | 'identity'>[];
  readonly classification?: { readonly model: string; readonly calls: number } | undefined;
}): ServedBy[] {
  const classification = run.classification ? [{ model: run.classification.model, calls: run.classification.calls }] : [];
  return servedBy([...classification, ...run.steps]);
}

/**
 * The model a view names for a run: the one that served its calls, or each of them with its calls
 * when a fallback took over (`local/a (3 calls) → backup/b (5 calls)`); the planned one before any call.
 */
export function servedLabel(planned: string | undefined, served: readonly ServedBy[]): string | null {
  // The plan names its routes as `route (provider: model)`: named here as the steps name them.
  if (served.length === 0) return planned?.replace(/([^\s,()]+) \([^:()]+: ([^()]+)\)/g, '$1/$2') ?? null;
  if (served.length === 1) return served[0]?.model ?? null;
  return served.map((s) => `${s.model} (${s.calls} ${s.calls === 1 ? 'call' : 'calls'})`).join(' → ');
}
