import { describe, expect, it } from 'vitest';
import { checkWorkspace } from '../../src/app/workspace-check.js';
import { triad } from '../fakes/in-memory-stores.js';
import { memoryApp } from '../fakes/memory-app.js';
import { ScriptedLlmClient } from '../fakes/scripted-llm-client.js';

// What would stop every run in a workspace before it starts.

describe('checkWorkspace', () => {
  it('finds nothing in a workspace that can take commands', async () => {
    const app = memoryApp({ routes: { main: { route: {}, client: new ScriptedLlmClient('x') } } });
    expect(await checkWorkspace(app.deps)).toEqual([]);
  });

  it('names broken persona files, each problem on its line', async () => {
    const app = memoryApp({ llm: new ScriptedLlmClient('x') });
    app.personas.problems = [{ file: 'personas/a.md', issues: ['(root): unknown key "mood"', 'order: expected a number'] }];
    expect(await checkWorkspace(app.deps)).toEqual([
      'personas/a.md: (root): unknown key "mood"',
      'personas/a.md: order: expected a number',
    ]);
  });

  it('names each broken route once, with who uses it (a fallback too)', async () => {
    const app = memoryApp({ routes: { main: { route: {}, client: new ScriptedLlmClient('x') } } });
    app.personas.personas = triad().map((p) =>
      p.id === 'coordinator' ? p : { ...p, route: 'gpt-9', ...(p.id === 'auditor' ? { fallback_route: 'gone' } : {}) },
    );
    expect(await checkWorkspace(app.deps)).toEqual([
      'maestro.config.json: no route named "gpt-9" — used by personas/strategist.md, personas/auditor.md',
      'maestro.config.json: no route named "gone" — used by personas/auditor.md (fallback_route)',
    ]);
  });

  it('checks no route when one client answers every persona', async () => {
    const app = memoryApp({ llm: new ScriptedLlmClient('x') });
    app.personas.personas = triad().map((p) => ({ ...p, route: 'gpt-9' }));
    expect(await checkWorkspace(app.deps)).toEqual([]);
  });
});
