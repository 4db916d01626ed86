import type { Hono } from 'hono';
import { HitlRefusedError } from '../../app/hitl.js';
import type { ConsoleBackend } from '../../compose/console.js';
import { pausedRuns } from '../hitl.js';
import { showDetails } from '../hitl-show.js';
import { type ConsoleEnv, type ConsoleServerOptions, doneNotice, page, RUN_ID } from './context.js';
import { decisionsPage, type KeptNote, raceSentence } from './decision-card.js';
import { DecisionForm, readForm } from './forms.js';

/** Every run paused for a person, oldest pause first, with what its card shows. */
export async function decisionRows(backend: ConsoleBackend) {
  const rows = await pausedRuns(backend.app);
  const out = [];
  for (const row of rows) {
    const state = await backend.app.deps.ledger.load(row.run_id).catch(() => undefined);
    if (state) out.push({ row, state, details: await showDetails({ app: backend.app, runId: row.run_id, state }) });
  }
  return out.sort((a, b) => b.row.age_seconds - a.row.age_seconds);
}

export function registerDecisions(app: Hono<ConsoleEnv>, options: ConsoleServerOptions): void {
  const { backend } = options;
  app.get('/decisions', async (c) => c.html(page(c, options, 'Decisions', decisionsPage(await decisionRows(backend)), doneNotice(c))));
  app.post('/decisions/:id', async (c) => {
    const runId = c.req.param('id');
    const form = readForm(DecisionForm, await c.req.parseBody().catch(() => undefined));
    const note = form.ok ? (form.value.note?.trim() ?? '') : '';
    // What the person typed is never lost: a refused decision shows it again, in the card or on its own.
    const kept: KeptNote | undefined = note ? { runId, note } : undefined;
    const refuse = async (text: string, status: 400 | 404 | 409) =>
      c.html(page(c, options, 'Decisions', decisionsPage(await decisionRows(backend), kept), { kind: 'refused', text }), status);
    // A decision is always bound to the pause the page showed: without one it could decide a later pause.
    if (!form.ok) return refuse(`Refused: ${form.problem}; nothing changed. Reload the page and decide again.`, 400);
    if (!RUN_ID.test(runId)) return refuse(`Refused: there is no run "${runId}" in this workspace; nothing changed.`, 404);
    const { decision, pause_id: pauseId } = form.value;
    if (decision === 'stop' && !note)
      return refuse('Say why you stop the run: the reason is kept with the decision. Nothing changed.', 400);
    try {
      const by = { name: c.get('session').name, via: 'console' as const, from: options.placeOf?.(c) ?? 'an unknown place' };
      const result = await backend.decide({ runId, decision, pauseId, by, ...(note ? { note } : {}) });
      const done = result.decision === 'continue' ? `continue-${result.resumer ?? 'console'}` : 'stop';
      return c.redirect(`/runs/${encodeURIComponent(runId)}?done=${done}`, 303);
    } catch (error) {
      if (!(error instanceof HitlRefusedError)) throw error;
      const state = await backend.app.deps.ledger.load(runId).catch(() => undefined);
      return refuse(raceSentence(state, pauseId, error.message), 409);
    }
  });
}
