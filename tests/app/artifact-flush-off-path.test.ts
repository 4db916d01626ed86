import { readFile } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { processCommand } from '../../src/app/process-command.js';
import { createApp } from '../../src/compose/app.js';
import { StorageError } from '../../src/domain/errors.js';
import type { ArtifactWriter } from '../../src/domain/ports.js';
import { tempWorkspace } from '../fakes/fixtures.js';
import { finishedCommitsNoted } from '../helpers/watched-ledger.js';

// Issue 24 item 5: the artifact is whole for readers before the run's slot is freed, made durable
// (its fsyncs) in the run's tail, and durable before the run's end is committed; a flush that fails
// ends the run as a storage failure, never as completed.

let ws: Awaited<ReturnType<typeof tempWorkspace>>;
beforeEach(async () => {
  ws = await tempWorkspace();
});
afterEach(() => ws.cleanup());

const command = JSON.stringify({ task_description: 'Choose the cache for the billing service', config: { max_rounds: 1 } });

/** The workspace's writer, noting when the artifact is flushed; `fail` makes its flush fail. */
function watchedWriter(inner: ArtifactWriter, seen: string[], fail = false): ArtifactWriter {
  return {
    check: inner.check.bind(inner),
    place: inner.place.bind(inner),
    write: inner.write.bind(inner),
    writeUnflushed: async (relativePath, content, protect) => {
      const written = await (inner.writeUnflushed?.(relativePath, content, protect) ?? Promise.reject(new Error('no writeUnflushed')));
      seen.push(`readable: ${(await readFile(written.path, 'utf8')) === content}`);
      return {
        path: written.path,
        flush: async () => {
          await written.flush();
          if (fail) throw new StorageError(`could not flush ${written.path}: EIO`, written.path, { errno: 'EIO' });
          seen.push('flushed');
        },
      };
    },
  };
}

describe("the artifact's flush off the run's path", () => {
  it('is readable before the slot is freed, flushed after, and flushed before the end is committed', async () => {
    const app = await createApp({ workspace: ws.dir });
    const seen: string[] = [];
    const ledger = app.deps.ledger;
    const deps = {
      ...app.deps,
      artifacts: watchedWriter(app.deps.artifacts, seen),
      onTail: () => void seen.push('slot free'),
      ledger: finishedCommitsNoted(ledger, () => seen.push('end committed')),
    };
    const outcome = await processCommand({ text: command, source: 't.json' }, deps);
    expect(outcome.status, outcome.message).toBe('completed');
    expect(seen).toEqual(['readable: true', 'slot free', 'flushed', 'end committed']);
  });

  it('that fails ends the run as a storage failure, and no persona remembers it', async () => {
    const app = await createApp({ workspace: ws.dir });
    const deps = { ...app.deps, artifacts: watchedWriter(app.deps.artifacts, [], true) };
    const outcome = await processCommand({ text: command, source: 't.json' }, deps);
    expect(outcome.status).toBe('error');
    expect(outcome.reason_code).toBe('STORAGE_WRITE_FAILED');
    for (const persona of ['auditor', 'strategist', 'coordinator']) {
      expect((await app.deps.sessions.load(persona)).state.runs).toEqual([]);
    }
  });
});
