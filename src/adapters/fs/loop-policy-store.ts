import { rename } from 'node:fs/promises';
import path from 'node:path';
import { StorageError } from '../../domain/errors.js';
import {
  corruptLoopPolicyMessage,
  emptyLoopPolicy,
  parseLoopPolicyText,
  type LoopPolicyData,
} from '../../domain/loop-policy/workspace-loop.js';
import type { Clock, LoopPolicyStore } from '../../domain/ports.js';
import { corruptPathFor, lockPathFor } from '../../domain/runtime-files.js';
import { ensurePrivateDir, writeJsonAtomically } from './atomic-file.js';
import { withFileLock } from './file-lock.js';
import type { WorkspacePaths } from './workspace-paths.js';
import { readIfExists } from './read.js';

/**
 * `.maestro/loop-policy.json`, read-modify-written under a lock (several watchers may share a
 * workspace) and atomically. A corrupt file is a storage failure, left where it is: the session's
 * sealed stops cannot be known, so nothing that reads them goes on until `maestro session reset`
 * (the explicit new session start, `replaceCorrupt`) moves it aside.
 */
export class FsLoopPolicyStore implements LoopPolicyStore {
  constructor(
    private readonly paths: WorkspacePaths,
    private readonly clock: Clock,
    private readonly newSessionId: () => string,
  ) {}

  get file(): string {
    return path.join(this.paths.state, 'loop-policy.json');
  }

  async read(): Promise<LoopPolicyData> {
    const { data, fresh } = await this.#load();
    if (!fresh) return data;
    // A session begins when it is first looked at, and is kept: every look (session show, hitl, a run's
    // gates) sees the same id. A workspace that cannot be written still reads (its session is not kept).
    return this.update((kept) => ({ data: kept, result: kept })).catch(() => data);
  }

  async update<T>(
    fn: (data: LoopPolicyData) => { data: LoopPolicyData; result: T },
    options: { replaceCorrupt?: boolean } = {},
  ): Promise<T> {
    await ensurePrivateDir(this.paths.state);
    return withFileLock(lockPathFor(this.file), async (held) => {
      const { data } = await this.#load(options.replaceCorrupt);
      const out = fn(data);
      // A holder that lost the lock would overwrite the counts another watcher just saved.
      await held.assertHeld();
      await writeJsonAtomically(this.file, out.data, { mode: 0o600 });
      return out.result;
    });
  }

  async #load(replaceCorrupt = false): Promise<{ data: LoopPolicyData; fresh?: true }> {
    // Read before every run's gates: a small file, read at once (see readIfExists).
    const text = await readIfExists(this.file);
    if (text === undefined) return { data: emptyLoopPolicy(this.newSessionId(), this.clock.now().toISOString()), fresh: true };
    const parsed = parseLoopPolicyText(text);
    if (parsed.ok) return { data: parsed.value };
    if (!replaceCorrupt) throw new StorageError(corruptLoopPolicyMessage(this.file, parsed.issues), this.file);
    await rename(this.file, corruptPathFor(this.file, this.clock.now()));
    return { data: emptyLoopPolicy(this.newSessionId(), this.clock.now().toISOString()), fresh: true };
  }
}
