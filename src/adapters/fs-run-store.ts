import { readdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import type { RunStore } from '../domain/ports.js';
import { parseRunState, type RunState } from '../domain/run-state.js';
import { StorageError } from '../domain/errors.js';
import { ensurePrivateDir, writeFileAtomically, writeJsonAtomically } from './atomic-file.js';
import type { WorkspacePaths } from './workspace-paths.js';

/** `.maestro/runs/<run_id>/state.json`: the checkpoint, rewritten atomically after every step. */
export class FsRunStore implements RunStore {
  constructor(private readonly paths: WorkspacePaths) {}

  async save(state: RunState): Promise<void> {
    const dir = this.paths.runDir(state.run_id);
    await ensurePrivateDir(dir);
    await writeJsonAtomically(path.join(dir, 'state.json'), state, { mode: 0o600 });
  }

  async load(runId: string): Promise<RunState | undefined> {
    const file = path.join(this.paths.runDir(runId), 'state.json');
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw new StorageError(`could not read ${file}`, file, { cause: error });
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (error) {
      throw new StorageError(`the run checkpoint ${file} is not valid JSON`, file, { cause: error });
    }
    const parsed = parseRunState(json);
    if (!parsed.ok) throw new StorageError(`the run checkpoint ${file} is invalid: ${parsed.issues.join('; ')}`, file);
    return parsed.value;
  }

  /** Saves a side file next to the checkpoint (the command copy, a pause record, a draft). */
  async saveFile(runId: string, name: string, content: string): Promise<string> {
    const dir = this.paths.runDir(runId);
    await ensurePrivateDir(dir);
    const file = path.join(dir, name);
    await writeFileAtomically(file, content, { mode: 0o600 });
    return file;
  }

  async removeFile(runId: string, name: string): Promise<void> {
    await rm(path.join(this.paths.runDir(runId), name), { force: true });
  }

  /** Every run id with a folder, sorted (ids sort by time). */
  async list(): Promise<string[]> {
    try {
      return (await readdir(this.paths.runs, { withFileTypes: true })).filter((d) => d.isDirectory()).map((d) => d.name).sort();
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
  }
}
