import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { processCommand } from '../../src/app/process-command.js';
import { createApp } from '../../src/compose/app.js';
import { tempWorkspace } from '../fakes/fixtures.js';

// Issue 24 item 5: persona memory growing towards its token budget has the tokenizer (~150 ms to
// load) loaded while a run waits for the model, after its request has left; never on the way to a
// call, and not at all while memory is small.

let ws: Awaited<ReturnType<typeof tempWorkspace>>;
beforeEach(async () => {
  ws = await tempWorkspace();
});
afterEach(() => ws.cleanup());

const command = JSON.stringify({ task_description: 'Review the rollout plan', config: { max_rounds: 1 } });

/** The app's deps, the tokenizer never loaded, noting when its load is asked for and when requests leave. */
async function watchedDeps(seen: string[]) {
  const app = await createApp({ workspace: ws.dir });
  let sent = 0;
  return {
    app,
    deps: {
      ...app.deps,
      countTokensIfLoaded: () => undefined,
      countTokens: (text: string) => {
        seen.push('tokenizer loaded');
        return text.length;
      },
      requestSent: async () => {
        await new Promise((r) => setTimeout(r, 5));
        seen.push(`request ${++sent} left`);
      },
    },
  };
}

describe('the tokenizer, loaded while a run waits for the model', () => {
  it('is not loaded for a council whose memory is small', async () => {
    const seen: string[] = [];
    const { deps } = await watchedDeps(seen);
    expect((await processCommand({ text: command, source: 'a.json' }, deps)).status).toBe('completed');
    await new Promise((r) => setTimeout(r, 20));
    expect(seen).not.toContain('tokenizer loaded');
  });

  it('is loaded once a persona memory passes a quarter of its budget, after the request has left', async () => {
    const seen: string[] = [];
    const { app, deps } = await watchedDeps(seen);
    const long = 'x'.repeat(app.deps.config.history.max_tokens);
    await app.deps.sessions.appendRun('auditor', 'r0', [
      { role: 'user', content: long, run_id: 'r0', ts: 't' },
      { role: 'assistant', content: 'noted', run_id: 'r0', ts: 't' },
    ]);
    expect((await processCommand({ text: command, source: 'b.json' }, deps)).status).toBe('completed');
    await new Promise((r) => setTimeout(r, 20));
    const loaded = seen.indexOf('tokenizer loaded');
    expect(loaded).toBeGreaterThan(0);
    expect(seen[loaded - 1]).toBe('request 1 left');
  });
});
