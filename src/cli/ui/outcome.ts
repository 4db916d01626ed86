import type { Context, Env, Hono } from 'hono';
import { z } from 'zod';
import { OutcomeRefusedError } from '../../compose/console.js';
import type { RunAudit } from '../../compose/console.js';
import type { DecisionAuthor, RunState } from '../../domain/run-state.js';
import { readForm } from './forms.js';
import { html, type SafeHtml } from './html.js';

/** The outcome form: exactly right or wrong, and a note. */
export const OutcomeForm = z.object({
  outcome: z.enum(['right', 'wrong'], { error: 'say once whether the outcome was right or wrong' }),
  note: z.string({ error: 'the form holds more than one note' }).max(500, 'the note is longer than 500 characters').optional(),
});

/** What the run page shows of a run's confirmed outcome, and the form to confirm it (as `maestro outcome` does). */
export function outcomeBlock(state: RunState, status: string, audit: RunAudit | undefined): SafeHtml {
  const arbitrated = state.steps.some((s) => s.kind === 'verdict' || s.kind === 'assessment');
  if (status === 'running' || !arbitrated) return html``;
  const last = audit?.records.filter((r) => r.event === 'OUTCOME_CONFIRMED').at(-1);
  const d = (last?.details ?? {}) as { outcome?: unknown; final_action?: unknown; verdicts?: unknown; decided_by?: unknown; via?: unknown };
  const who = typeof d.decided_by === 'string' ? html` by ${d.decided_by}${d.via === 'cli' ? ' via the CLI' : ''}` : html``;
  const verdicts = d.verdicts && typeof d.verdicts === 'object' ? Object.entries(d.verdicts as Record<string, unknown>) : [];
  const confirmed = last
    ? html`<p class="confirmed">Confirmed at <time>${last.ts}</time>${who}: the council's <code>${String(d.final_action)}</code> was
<strong>${String(d.outcome)}</strong>.</p>
<ul>${verdicts.map(([persona, v]) => html`<li data-persona="${persona}"><code>${persona}</code>'s verdict was ${String(v)}</li>`)}</ul>`
    : html`<p>Nobody has said yet whether this run's outcome was right.</p>`;
  return html`<section class="outcome"><h2>Outcome</h2>${confirmed}
<p>Was the council's outcome right? Each persona's verdict joins its record of confirmed outcomes, which the next runs weigh by
(<code>by_priors</code>, <code>bayesian_fusion</code>); confirming again replaces the earlier confirmation.</p>
<form method="post" action="/runs/${encodeURIComponent(state.run_id)}/outcome" class="outcome-form">
<label>Note <textarea name="note" maxlength="500" rows="2"></textarea></label>
<button name="outcome" value="right">It was right</button> <button name="outcome" value="wrong" class="stop">It was wrong</button>
</form></section>`;
}

export const OUTCOME_RECORDED =
  "Recorded: each persona's verdict in this run joined its record of confirmed outcomes; the next runs weigh by it (by_priors, bayesian_fusion).";

/**
 * `POST /runs/:id/outcome`: a person confirms the run's outcome, as `maestro outcome <run_id> right|wrong`
 * does; back to the run's page (`?done=outcome`), or a page that says why nothing changed.
 */
export function registerOutcome<E extends Env>(
  app: Hono<E>,
  options: {
    readonly runId: RegExp;
    readonly confirm: (input: { runId: string; outcome: string; note?: string; by: DecisionAuthor }) => Promise<unknown>;
    /** Where a request comes from, as a decision records it. */
    readonly placeOf?: (c: Context<E>) => string;
    /** The person signed in. */
    readonly person: (c: Context<E>) => string;
    /** A whole page of the console around `body`. */
    readonly page: (c: Context<E>, body: SafeHtml) => string;
  },
): void {
  app.post('/runs/:id/outcome', async (c) => {
    const runId = c.req.param('id');
    const refuse = (text: string, status: 400 | 404 | 409) => {
      const back = options.runId.test(runId) ? html`<p><a href="/runs/${encodeURIComponent(runId)}">Back to the run</a></p>` : '';
      return c.html(
        options.page(c, html`<h1>Not recorded</h1><p class="notice refused" role="alert">Refused: ${text}; nothing changed.</p>${back}`),
        status,
      );
    };
    if (!options.runId.test(runId)) return refuse(`there is no run "${runId}"`, 404);
    const form = readForm(OutcomeForm, await c.req.parseBody({ all: true }).catch(() => undefined));
    if (!form.ok) return refuse(form.problem, 400);
    const note = form.value.note?.trim();
    try {
      const by = { name: options.person(c), via: 'console' as const, from: options.placeOf?.(c) ?? 'an unknown place' };
      await options.confirm({ runId, outcome: form.value.outcome, by, ...(note ? { note } : {}) });
    } catch (error) {
      if (error instanceof OutcomeRefusedError) return refuse(error.message, 409);
      throw error;
    }
    return c.redirect(`/runs/${encodeURIComponent(runId)}?done=outcome`, 303);
  });
}
