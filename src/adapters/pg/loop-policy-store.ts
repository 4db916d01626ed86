import { StorageError } from '../../domain/errors.js';
import {
  corruptLoopPolicyMessage,
  emptyLoopPolicy,
  parseLoopPolicyData,
  type LoopPolicyData,
} from '../../domain/loop-policy/workspace-loop.js';
import type { Clock, LoopPolicyStore } from '../../domain/ports.js';
import type { Fence, PgEngine } from './engine.js';

/**
 * The loop policy in `maestro_loop_policy` (one versioned row), read-modify-written under the row's
 * lock so pauses counted by workers on different machines all count. A row that no longer parses is
 * a storage failure, kept, as a corrupt file is: only `maestro session reset` replaces it.
 */
export class PgLoopPolicyStore implements LoopPolicyStore {
  constructor(
    private readonly engine: PgEngine,
    private readonly clock: Clock,
    private readonly newSessionId: () => string,
    private readonly fence?: Fence,
  ) {}

  async read(): Promise<LoopPolicyData> {
    const r = await this.engine.query<{ data: unknown }>('SELECT data FROM maestro_loop_policy WHERE id = 1', [], this.fence);
    // A session begins when it is first looked at, and is kept: every look sees the same id.
    if (r.rows[0] === undefined) return this.update((kept) => ({ data: kept, result: kept }));
    return this.#parse(r.rows[0].data);
  }

  async update<T>(
    fn: (data: LoopPolicyData) => { data: LoopPolicyData; result: T },
    options: { replaceCorrupt?: boolean } = {},
  ): Promise<T> {
    return this.engine.tx(async (db) => {
      await db.query('INSERT INTO maestro_loop_policy (id, data) VALUES (1, $1) ON CONFLICT (id) DO NOTHING', [
        JSON.stringify(this.#parse(undefined)),
      ]);
      const r = await db.query<{ data: unknown }>('SELECT data FROM maestro_loop_policy WHERE id = 1 FOR UPDATE');
      const out = fn(this.#parse(r.rows[0]?.data, options.replaceCorrupt));
      await db.query('UPDATE maestro_loop_policy SET data = $1, version = version + 1, updated_at = now() WHERE id = 1', [
        JSON.stringify(out.data),
      ]);
      return out.result;
    }, this.fence);
  }

  #parse(json: unknown, replaceCorrupt = false): LoopPolicyData {
    if (json !== undefined) {
      const parsed = parseLoopPolicyData(json);
      if (parsed.ok) return parsed.value;
      if (!replaceCorrupt)
        throw new StorageError(corruptLoopPolicyMessage('maestro_loop_policy (engine)', parsed.issues), 'engine:maestro_loop_policy');
    }
    return emptyLoopPolicy(this.newSessionId(), this.clock.now().toISOString());
  }
}
