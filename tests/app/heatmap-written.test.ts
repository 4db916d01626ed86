import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { processCommand } from '../../src/app/process-command.js';
import { createApp } from '../../src/compose/app.js';
import { VECTORS } from '../../src/domain/assessment.js';
import type { ArtifactWriter } from '../../src/domain/ports.js';
import { ScriptedLlmClient } from '../fakes/scripted-llm-client.js';
import { tempWorkspace } from '../fakes/fixtures.js';
import { finishedCommitsNoted } from '../helpers/watched-ledger.js';
import { heatmapCells } from '../helpers/svg.js';

// A parallel run's heat map is on disk, beside its artifact, before the run's end is committed.
//
// Persona memory is saved at the successful end of a run only (DESIGN.md, Persistence): a run whose
// heat map cannot be written does not end successfully, so its council must not remember it.

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
const llm = () => new ScriptedLlmClient((r) => (r.purpose === 'assessment' ? assessment : '### Proposal\nDo it.'));

/** The app's artifact writer, calling `onHeatmap` before a heat map is written (throwing, if it throws). */
function heatmapsNoted(artifacts: ArtifactWriter, onHeatmap: () => void): ArtifactWriter {
  return {
    check: artifacts.check.bind(artifacts),
    write: async (relativePath, content, protect) => {
      if (relativePath.endsWith('.heatmap.svg')) onHeatmap();
      return artifacts.write(relativePath, content, protect);
    },
  };
}

describe('the heat map beside the artifact', () => {
  it('is written before the end is committed, linked from the artifact, a cell per persona and vector', async () => {
    const app = await createApp({ workspace: ws.dir, llm: llm() });
    const seen: string[] = [];
    const deps = {
      ...app.deps,
      artifacts: heatmapsNoted(app.deps.artifacts, () => seen.push('heat map written')),
      ledger: finishedCommitsNoted(app.deps.ledger, () => seen.push('end committed')),
    };
    const outcome = await processCommand({ text: command, source: 't.json' }, deps);
    expect(outcome.status, outcome.message).toBe('completed');
    expect(seen).toEqual(['heat map written', 'end committed']);
    const artifact = outcome.artifact ?? '';
    const svg = await readFile(artifact.replace(/\.md$/, '.heatmap.svg'), 'utf8');
    expect(heatmapCells(svg).map((c) => c.text)).toEqual(VECTORS.flatMap(() => ['0.70', '0.70', '0.70', '0.70']));
    expect(await readFile(artifact, 'utf8')).toContain(path.basename(artifact.replace(/\.md$/, '.heatmap.svg')));
  });
});

describe('a heat map that cannot be written', () => {
  it('ends the run without it being completed, and no persona remembers the run', async () => {
    const app = await createApp({ workspace: ws.dir, llm: llm() });
    const deps = {
      ...app.deps,
      artifacts: heatmapsNoted(app.deps.artifacts, () => {
        throw Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' });
      }),
    };
    const outcome = await processCommand({ text: command, source: 't.json' }, deps).catch((error: Error) => ({
      status: 'thrown',
      message: error.message,
      run_id: '',
    }));
    expect(outcome.status).not.toBe('completed');
    expect(await app.deps.ledger.list()).toHaveLength(1);
    for (const persona of ['auditor', 'strategist', 'coordinator']) {
      expect((await app.deps.sessions.load(persona)).state.runs).toEqual([]);
    }
  });
});
