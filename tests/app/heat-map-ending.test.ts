import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { processCommand } from '../../src/app/process-command.js';
import { createApp } from '../../src/compose/app.js';
import { VECTORS } from '../../src/domain/assessment.js';
import type { PictureRenderer } from '../../src/domain/ports.js';
import { ScriptedLlmClient } from '../fakes/scripted-llm-client.js';
import { tempWorkspace } from '../fakes/fixtures.js';
import { finishedCommitsNoted } from '../helpers/watched-ledger.js';

// The heat map is drawn (on its thread) from the moment the run's end is known, and is on disk beside
// the artifact before the council's memory is saved and the run's end is committed.
//
// Persona memory is saved at the successful end of a run only (DESIGN.md, Persistence): a run whose
// heat map cannot be drawn or written does not end successfully, so its council must not remember it.

let ws: Awaited<ReturnType<typeof tempWorkspace>>;
beforeEach(async () => {
  ws = await tempWorkspace();
});
afterEach(() => ws.cleanup());

const assessment = JSON.stringify({
  action: 'proceed',
  confidence: 0.8,
  rationale: 'proceed it',
  vectors: Object.fromEntries(VECTORS.map((v) => [v, { score: 0.7, rationale: `${v} looks fine` }])),
});
const command = JSON.stringify({ task_description: 'Choose the cache for the billing service', config: { mode: 'parallel' } });

/** A renderer that draws only once `release` is called, noting when it was asked. */
function gatedRenderer(seen: string[]): PictureRenderer & { release: () => void } {
  let release: () => void = () => undefined;
  const gate = new Promise<void>((r) => (release = r));
  return {
    release: () => release(),
    render: async () => {
      seen.push('drawing begun');
      await gate;
      seen.push('drawn');
      return '<svg>heat</svg>\n';
    },
  };
}

describe('the heat map of a run’s ending', () => {
  it('is begun before the artifact is written, and is on disk before the memory is saved and the end committed', async () => {
    const llm = new ScriptedLlmClient((r) => (r.purpose === 'assessment' ? assessment : '### Proposal\nDo it.'));
    const app = await createApp({ workspace: ws.dir, llm });
    const seen: string[] = [];
    const pictures = gatedRenderer(seen);
    const ledger = app.deps.ledger;
    const sessions = app.deps.sessions;
    const deps = {
      ...app.deps,
      pictures,
      onProgress: (e: { kind: string }) => {
        if (e.kind !== 'producing_artifact') return;
        seen.push('artifact');
        pictures.release();
      },
      sessions: {
        load: (id: string) => sessions.load(id),
        recallArchive: (...args: Parameters<typeof sessions.recallArchive>) => sessions.recallArchive(...args),
        appendRun: async (...args: Parameters<typeof sessions.appendRun>) => {
          if (!seen.includes('memory saved')) seen.push('memory saved');
          return sessions.appendRun(...args);
        },
      },
      ledger: finishedCommitsNoted(ledger, () => seen.push('end committed')),
    };
    const outcome = await processCommand({ text: command, source: 't.json' }, deps);
    expect(outcome.status, outcome.message).toBe('completed');
    expect(seen).toEqual(['drawing begun', 'artifact', 'drawn', 'memory saved', 'end committed']);
    const artifact = outcome.artifact ?? '';
    expect(await readFile(artifact.replace(/\.md$/, '.heatmap.svg'), 'utf8')).toBe('<svg>heat</svg>\n');
    expect(await readFile(artifact, 'utf8')).toContain(path.basename(artifact.replace(/\.md$/, '.heatmap.svg')));
  });
});

describe('a heat map that cannot be drawn', () => {
  it('ends the run without it being completed, and no persona remembers the run', async () => {
    const llm = new ScriptedLlmClient((r) => (r.purpose === 'assessment' ? assessment : '### Proposal\nDo it.'));
    const app = await createApp({ workspace: ws.dir, llm });
    const deps = {
      ...app.deps,
      pictures: {
        render: async () => {
          throw new Error('the heat map could not be drawn: bad spec');
        },
      },
    };
    const outcome = await processCommand({ text: command, source: 't.json' }, deps).catch((error: Error) => ({
      status: 'thrown',
      message: error.message,
      run_id: '',
    }));
    expect(outcome.status).not.toBe('completed');
    const runs = await app.deps.ledger.list();
    expect(runs).toHaveLength(1);
    for (const persona of ['auditor', 'strategist', 'coordinator']) {
      expect((await app.deps.sessions.load(persona)).state.runs).toEqual([]);
    }
  });
});
