import type { Hono } from 'hono';
import { HitlRefusedError } from '../../app/hitl.js';
import type { ConsoleBackend } from '../../compose/console.js';
import { pausedRuns } from '../hitl.js';
import { showDetails } from '../hitl-show.js';
import { type ConsoleEnv, type ConsoleServerOptions, doneNotice, page, RUN_ID } from './context.js';
import { DecisionForm, readForm } from './forms.js';
import { decisionsPage } from './pages.js';

async function decisionRows(backend: ConsoleBackend) {
  const rows = await pausedRuns(backend.app);
  const out = [];
  for (const row of rows) {
    const state = await backend.app.deps.ledger.load(row.run_id).catch(() => undefined);
    if (state) out.push({ row, details: await showDetails({ app: backend.app, runId: row.run_id, state }) });
  }
  return out;
}

export function registerDecisions(app: Hono<ConsoleEnv>, options: ConsoleServerOptions): void {
  const { backend } = options;
  app.get('/decisions', async (c) => c.html(page(c, options, 'Decisions', decisionsPage(await decisionRows(backend)), doneNotice(c))));
  app.post('/decisions/:id', async (c) => {
    const runId = c.req.param('id');
    const refuse = async (text: string, status: 404 | 409 | 400) =>
      c.html(page(c, options, 'Decisions', decisionsPage(await decisionRows(backend)), { kind: 'refused', text }), status);
    // A decision is always bound to the pause the page showed: without one it could decide a later pause.
    const form = readForm(DecisionForm, await c.req.parseBody().catch(() => undefined));
    if (!form.ok) return refuse(`Refused: ${form.problem}; nothing changed. Reload the page and decide again.`, 400);
    if (!RUN_ID.test(runId)) return refuse(`Refused: there is no run "${runId}" in this workspace; nothing changed.`, 404);
    const { decision, pause_id: pauseId } = form.value;
    try {
      const note = form.value.note?.trim();
      const by = { name: c.get('session').name, via: 'console' as const, from: options.placeOf?.(c) ?? 'an unknown place' };
      const result = await backend.decide({ runId, decision, pauseId, by, ...(note ? { note } : {}) });
      if (result.decision === 'continue')
        return c.redirect(`/runs/${encodeURIComponent(runId)}?done=continue-${result.resumer ?? 'console'}`, 303);
    } catch (error) {
      if (error instanceof HitlRefusedError) return refuse(`Refused: ${error.message}`, 409);
      throw error;
    }
    return c.redirect(`/runs/${encodeURIComponent(runId)}?done=${decision}`, 303);
  });
}
