import type { PausedRow } from '../../compose/console.js';
import { html, type SafeHtml, typed, withheld } from './html.js';

/** One run of a decision taken on a selection: decided (and who takes it up), or refused with why. */
export type DecidedOne =
  | { readonly runId: string; readonly decision: 'continue' | 'stop'; readonly outcome: string }
  | { readonly runId: string; readonly refused: string | SafeHtml };

/** A pick of the selection form: the run and the pause the page showed (a decision is bound to it). */
export function pickValue(row: Pick<PausedRow, 'run_id' | 'pause_id'>): string {
  return `${row.run_id} ${row.pause_id}`;
}

export function readPick(value: string): { runId: string; pauseId: string } | undefined {
  const [runId, pauseId, ...rest] = value.split(' ');
  return runId && pauseId && rest.length === 0 ? { runId, pauseId } : undefined;
}

/**
 * The form that decides a selection of pauses at once, with one note: the runs are picked on their
 * cards (a box each, bound to the pause shown), or all those paused for one reason at a click.
 */
export function selectionForm(rows: readonly PausedRow[], selected: string | undefined, note = ''): SafeHtml {
  if (rows.length < 2) return html``;
  const reasons = [...new Set(rows.map((r) => r.reason_code))].sort();
  const links = reasons.map((reason) => {
    const n = rows.filter((r) => r.reason_code === reason).length;
    return html`<a href="/decisions?select=${encodeURIComponent(reason)}"${selected === reason ? html` aria-current="true"` : ''}>${reason} (${n})</a> `;
  });
  return html`<section class="decide-many"><h2>Decide several at once</h2>
<p>Tick the runs on their cards, or select every run paused for one reason: ${links}</p>
<form method="post" action="/decisions" id="decide-many">
<label>Note for every run decided (required to stop) <textarea name="note" maxlength="2000" rows="2">${typed(note)}</textarea></label>${withheld(note, 'Your note')}
<button name="decision" value="continue" class="go">Continue the selected runs</button>
<button name="decision" value="stop" class="stop">Stop the selected runs</button>
</form></section>`;
}

/** The box on a run's card that puts it in the selection. */
export function pickBox(row: PausedRow, checked: boolean): SafeHtml {
  return html`<label class="pick"><input type="checkbox" name="pick" form="decide-many" value="${pickValue(row)}"${checked ? ' checked' : ''}>
Select run ${row.run_id}</label>`;
}

/** What deciding the selection did, run by run. */
export function decidedList(decided: readonly DecidedOne[]): SafeHtml {
  const items = decided.map((d) =>
    'refused' in d
      ? html`<li class="refused" data-run="${d.runId}"><a href="/runs/${encodeURIComponent(d.runId)}">${d.runId}</a>: not decided — ${d.refused}</li>`
      : html`<li class="ok" data-run="${d.runId}"><a href="/runs/${encodeURIComponent(d.runId)}">${d.runId}</a>: ${d.decision} — ${d.outcome}</li>`,
  );
  const done = decided.filter((d) => !('refused' in d)).length;
  return html`<section class="decided-many" role="status"><h2>Decided ${done} of ${decided.length} selected run(s)</h2><ul>${items}</ul></section>`;
}
