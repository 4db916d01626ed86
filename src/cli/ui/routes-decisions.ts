import type { Hono } from 'hono';
import { HitlRefusedError } from '../../compose/console.js';
import type { ConsoleBackend } from '../../compose/console.js';
import { type ConsoleEnv, type ConsoleServerOptions, doneNotice, page, RUN_ID } from './context.js';
import { type DecisionList, decisionsPage, type KeptNote, raceSentence } from './decision-card.js';
import { unreadableCheckpoint } from '../../domain/unreadable-checkpoint.js';
import { type DecidedOne, readPick } from './decide-many.js';
import { DecideManyForm, DecisionForm, readForm } from './forms.js';
import type { Notice } from './pages.js';
import type { SafeHtml } from './html.js';

/** Who takes a continued run up, for the list of a selection decided at once. */
const TAKEN_UP = {
  console: 'this console carries it on',
  watcher: 'the running watcher takes it up',
  worker: 'a worker takes it up',
} as const;

/**
 * Every run paused for a person, oldest pause first, with what its card shows; and the runs whose
 * checkpoint cannot be read (any of them may wait for a person: the page names them, never drops them).
 */
export async function decisionRows(backend: ConsoleBackend): Promise<DecisionList> {
  const list = await backend.app.paused();
  const cards = [];
  const unreadable = [...list.unreadable_checkpoints];
  for (const row of list.paused) {
    try {
      const shown = await backend.app.pauseDetails(row.run_id);
      if (shown) cards.push({ row, ...shown });
    } catch (error) {
      // Its checkpoint was read for the list, and no longer reads.
      unreadable.push(unreadableCheckpoint(row.run_id, error));
    }
  }
  return { cards: cards.sort((a, b) => b.row.age_seconds - a.row.age_seconds), unreadable };
}

export function registerDecisions(app: Hono<ConsoleEnv>, options: ConsoleServerOptions): void {
  const { backend } = options;
  app.get('/decisions', async (c) => {
    const select = c.req.query('select');
    const body = decisionsPage(await decisionRows(backend), select ? { select } : {});
    return c.html(page(c, options, 'Decisions', body, doneNotice(c)));
  });
  // A selection decided at once, with one note: each run by the one decision, bound to the pause its card showed.
  app.post('/decisions', async (c) => {
    const form = readForm(DecideManyForm, await c.req.parseBody({ all: true }).catch(() => undefined));
    const { decision, pick } = form.ok ? form.value : { decision: undefined, pick: [] };
    const note = (form.ok ? form.value.note?.trim() : undefined) ?? '';
    // A refused selection comes back as the person left it: the same runs ticked, the note as typed.
    const left = { picked: pick, note };
    const again = async (status: 200 | 400, notice?: Notice, decided?: readonly DecidedOne[]) =>
      c.html(page(c, options, 'Decisions', decisionsPage(await decisionRows(backend), decided ? { decided } : left), notice), status);
    if (!form.ok || !decision)
      return again(400, { kind: 'refused', text: `Refused: ${form.ok ? 'choose continue or stop' : form.problem}; nothing changed.` });
    // The same run ticked twice is one decision: the second would be told someone (its own sender) decided first.
    const picks = [...new Set(pick)].map(readPick);
    if (picks.length === 0 || picks.some((p) => p === undefined))
      return again(400, { kind: 'refused', text: 'Select one run or more; nothing changed.' });
    if (decision === 'stop' && !note)
      return again(400, { kind: 'refused', text: 'Say why you stop these runs: the reason is kept with each decision. Nothing changed.' });
    const by = { name: c.get('session').name, via: 'console' as const, from: options.placeOf?.(c) ?? 'an unknown place' };
    const decided: DecidedOne[] = [];
    for (const p of picks) {
      if (!p) continue;
      try {
        const result = await backend.decide({ runId: p.runId, decision, pauseId: p.pauseId, by, ...(note ? { note } : {}) });
        decided.push({
          runId: p.runId,
          decision: result.decision,
          outcome: result.decision === 'stop' ? 'stopped' : TAKEN_UP[result.resumer ?? 'console'],
        });
      } catch (error) {
        if (!(error instanceof HitlRefusedError)) throw error;
        const state = (await backend.run(p.runId))?.state;
        decided.push({ runId: p.runId, refused: raceSentence(state, p.pauseId, error.message) });
      }
    }
    return again(200, undefined, decided);
  });
  app.post('/decisions/:id', async (c) => {
    const runId = c.req.param('id');
    // Read with every value: a decision sent twice ("stop" and "continue") is refused, never the last one taken.
    const form = readForm(DecisionForm, await c.req.parseBody({ all: true }).catch(() => undefined));
    const note = form.ok ? (form.value.note?.trim() ?? '') : '';
    // What the person typed is never lost: a refused decision shows it again, in the card or on its own.
    const kept: KeptNote | undefined = note ? { runId, note } : undefined;
    const refuse = async (text: string | SafeHtml, status: 400 | 404 | 409) =>
      c.html(
        page(c, options, 'Decisions', decisionsPage(await decisionRows(backend), kept ? { kept } : {}), { kind: 'refused', text }),
        status,
      );
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
      const state = (await backend.run(runId))?.state;
      return refuse(raceSentence(state, pauseId, error.message), 409);
    }
  });
}
