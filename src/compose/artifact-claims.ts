import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { parseCommandText } from '../domain/command-file.js';
import type { App } from './app.js';
import { insideWorkspace } from './artifact-view.js';

/**
 * Why a new command's artifact would replace a file, or undefined when it would not. The rule (one
 * for the console and the CLI, see the README, "Artifacts are never replaced"): a command may
 * write its artifact only to a path that holds no file yet, unless that file is the one this same
 * run wrote in an earlier attempt. A new command has no earlier attempt, so any file there refuses
 * it, and so does a path a run still going (paused, running) or a command waiting in `commands/`
 * will write. Without `output_artifact_path` each run writes `outputs/<run_id>.md`, a new name.
 */
export async function artifactClash(app: App, text: string, queued: readonly string[]): Promise<string | undefined> {
  const parsed = parseCommandText(text);
  const target = parsed.ok ? parsed.value.output_artifact_path : undefined;
  if (target === undefined) return undefined;
  const absolute = insideWorkspace(app.paths.root, target);
  if (!absolute) return undefined; // the findings name a path outside the workspace already
  const fix = 'choose another output_artifact_path, or leave it out (each run then writes outputs/<run_id>.md)';
  if (
    await stat(absolute).then(
      () => true,
      () => false,
    )
  ) {
    return `${target} already holds a file (an earlier run's artifact, or a file of the workspace), and maestro never replaces one: ${fix}`;
  }
  for (const id of await app.deps.ledger.list()) {
    const state = await app.deps.ledger.load(id).catch(() => undefined);
    if (state && (state.status === 'paused' || state.status === 'running') && samePath(app, state.plan?.output_path, absolute)) {
      return `run ${id} (${state.status}) will write its artifact to ${target}: ${fix}`;
    }
  }
  for (const name of queued) {
    const waiting = await readFile(path.join(app.paths.commands, name), 'utf8').catch(() => '');
    const other = parseCommandText(waiting);
    if (other.ok && samePath(app, other.value.output_artifact_path, absolute))
      return `${name}, waiting in commands/, will write ${target}: ${fix}`;
  }
  return undefined;
}

function samePath(app: App, file: string | undefined, absolute: string): boolean {
  return file !== undefined && path.resolve(app.paths.root, file) === absolute;
}
