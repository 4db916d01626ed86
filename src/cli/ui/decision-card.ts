import { parseAssessment } from '../../domain/assessment.js';
import { explainReason } from '../../domain/codes.js';
import { openPause } from '../../domain/hitl-decision.js';
import type { RunState } from '../../domain/run-state.js';
import { withoutCommands, withoutMoveOn } from '../../domain/stop-explanation.js';
import { parseVerdict } from '../../domain/verdict.js';
import { authorText } from '../decision-author.js';
import type { PausedRow, ShowDetails } from '../../compose/console.js';
import type { UnreadableCheckpoint } from '../../domain/unreadable-checkpoint.js';
import { type DecidedOne, decidedList, pickBox, pickValue, selectionForm } from './decide-many.js';
import { html, type SafeHtml, typed, withheld } from './html.js';

/** What Stop does, for every pause. */
const STOP_WOULD = 'end the run as STOPPED, with an artifact that records the stop and your reason.';

/** A note a person typed that was not recorded (their decision lost a race): kept for them on the page. */
export interface KeptNote {
  readonly runId: string;
  readonly note: string;
}

/**
 * What a person may decide on this run: the card of its open pause (what paused it, the whole
 * task, its inputs, what the council said, what each choice does, and the two forms, both bound to
 * the pause), why it is sealed, or only the decisions taken so far.
 */
export function decisionBlock(options: { details: ShowDetails; state: RunState; kept?: string }): SafeHtml {
  const { details: d, state } = options;
  const done = d.decisions.map(
    (h) =>
      html`<li class="decided">${h.decision} at <time>${h.decided_at}</time> on pause <code>${h.pause_id}</code>
(${h.layer}: ${h.reason_code}) by <strong class="author">${authorText(h.by)}</strong>${h.note ? html` — ${h.note}` : ''}</li>`,
  );
  const history = done.length > 0 ? html`<h3>Decisions taken</h3><ul>${done}</ul>` : '';
  if (d.sealed) {
    const by = state.decision;
    const why = by ? html` The ${by.layer} layer sealed it: <code>${by.reason_code}</code> (${explainReason(by.reason_code)}).` : '';
    return html`<section class="decide sealed"><h2>Sealed</h2><p>This run was sealed: nobody can continue it.${why}</p>${history}</section>`;
  }
  const p = d.pause;
  if (!p) return history ? html`<section class="decide">${history}</section>` : html``;
  const id = encodeURIComponent(d.run_id);
  const named = (verb: string) => `${verb} run ${d.run_id}`;
  return html`<section class="decide" data-pause="${p.pause_id}"><h2>Paused for a person</h2>
<p>At <time>${p.requested_at}</time> the <strong>${p.layer}</strong> layer paused it:
<code>${p.reason_code}</code> (${explainReason(p.reason_code)}).</p>
<p class="why">${withoutCommands(withoutMoveOn(p.message))}</p>
<h3>The task</h3><div class="task-text" tabindex="0">${d.task}</div>
${d.redacted.length > 0 ? html`<p class="redacted">Taken out of it before anyone saw it: ${d.redacted.join(', ')} (shown as [REDACTED:…]).</p>` : ''}
<p class="inputs">${inputsLine(state.command.input_artifacts)}</p>
${councilBlock(state)}
<h3>What each choice does</h3>
<dl class="choices"><dt>Continue</dt><dd>${withoutCommands(d.continue_would ?? '')}</dd><dt>Stop</dt><dd>${STOP_WOULD}</dd></dl>
${d.plan ? html`<h3>The loop policy's plan</h3><pre>${d.plan}</pre>` : ''}
${d.conflict_pauses > 1 ? html`<p>This conflict has paused ${d.conflict_pauses} times.</p>` : ''}
${
  // A conflict line the loop policy stopped (sealed): continuing would only stop the run, so only stop is offered.
  d.conflict_stopped
    ? html`<p class="line-stopped">Continue is not offered: it would ${withoutCommands(d.continue_would ?? '')}.</p>`
    : html`<form method="post" action="/decisions/${id}" class="decide-form">
<input type="hidden" name="pause_id" value="${p.pause_id}">
<label>Note (optional, kept with the decision) <textarea name="note" maxlength="2000" rows="2">${typed(options.kept ?? '')}</textarea></label>
<button name="decision" value="continue" class="go" aria-label="${named('Continue')}">Continue</button>
</form>`
}
<details class="stop-box"><summary>Stop this run…</summary>
<form method="post" action="/decisions/${id}" class="stop-form">
<input type="hidden" name="pause_id" value="${p.pause_id}">
<label>Why stop it? (required, kept with the decision)
<textarea name="note" maxlength="2000" rows="2" required>${typed(options.kept ?? '')}</textarea></label>
<button name="decision" value="stop" class="stop" aria-label="${named('Stop')}">Stop</button>
</form></details>${withheld(options.kept, 'Your note')}${history}</section>`;
}

function inputsLine(inputs: readonly string[]): SafeHtml {
  if (inputs.length === 0) return html`No input files.`;
  return html`Input files: ${inputs.map((f, i) => html`${i > 0 ? ', ' : ''}<code>${f}</code>`)}.`;
}

/** Each persona's verdict (or, in a parallel run, assessment) and its reasoning: what the council said before the pause. */
function councilBlock(state: RunState): SafeHtml {
  const said = state.steps.flatMap((s) =>
    s.kind === 'verdict' ? [parseVerdict(s.persona, s.reply)] : s.kind === 'assessment' ? [parseAssessment(s.persona, s.reply)] : [],
  );
  if (said.length === 0) return html`<p class="council">The council was not asked before this pause.</p>`;
  const rows = said.map((v) =>
    v.valid
      ? html`<li><strong>${v.persona}</strong>: <span class="verdict v-${v.action}">${v.action}</span>
(confidence ${v.confidence.toFixed(2)}) — ${v.rationale}</li>`
      : html`<li><strong>${v.persona}</strong>: <span class="verdict v-escalate">unreadable</span> (counts as escalate) — ${v.problem ?? 'missing'}</li>`,
  );
  return html`<h3>What the council said</h3><ul class="council">${rows}</ul>`;
}

/**
 * Decisions: every run paused for a person, oldest first, each with its card and a box that puts it
 * in a selection decided at once; a note that was not recorded, kept; what deciding a selection did.
 */
export function decisionsPage(
  list: DecisionList,
  /** `picked`, `note`: a refused selection, shown again as the person left it. */
  extra: { kept?: KeptNote; select?: string; decided?: readonly DecidedOne[]; picked?: readonly string[]; note?: string } = {},
): SafeHtml {
  const { kept } = extra;
  const rows = list.cards;
  const orphan = kept && !rows.some((r) => r.row.run_id === kept.runId) ? keptNoteBlock(kept.note) : '';
  const decided = html`${extra.decided ? decidedList(extra.decided) : ''}${unreadableBlock(list.unreadable)}`;
  if (rows.length === 0) return html`<h1>Decisions</h1>${decided}${orphan}<p>No run is waiting for a person.</p>`;
  const items = rows.map(
    ({ row, details, state }) =>
      html`<article class="paused" data-run="${row.run_id}" id="run-${row.run_id}">
<h2><a href="/runs/${encodeURIComponent(row.run_id)}">${row.run_id}</a> <small>${state.source}</small></h2>
${rows.length > 1 ? pickBox(row, extra.select === row.reason_code || (extra.picked ?? []).includes(pickValue(row))) : ''}
${decisionBlock({ details, state, ...(kept?.runId === row.run_id ? { kept: kept.note } : {}) })}</article>`,
  );
  const form = selectionForm(
    rows.map((r) => r.row),
    extra.select,
    extra.note,
  );
  return html`<h1>Decisions</h1>${decided}${orphan}<p>${rows.length} run(s) paused for a person, oldest first.</p>${form}${items}`;
}

/** What the Decisions page lists: each paused run's card, and the runs whose checkpoint cannot be read. */
export interface DecisionList {
  readonly cards: readonly { row: PausedRow; details: ShowDetails; state: RunState }[];
  readonly unreadable: readonly UnreadableCheckpoint[];
}

/** The runs whose checkpoint cannot be read: any may wait for a person, so each is named, with why and how to look. */
function unreadableBlock(unreadable: readonly UnreadableCheckpoint[]): SafeHtml {
  if (unreadable.length === 0) return html``;
  const items = unreadable.map(
    (u) =>
      html`<li data-run="${u.run_id}">Run <code>${u.run_id}</code>: its checkpoint cannot be read (${u.problem}). Look with <code>${u.look}</code>.</li>`,
  );
  return html`<section class="unreadable-checkpoints" role="alert"><h2>${unreadable.length} run(s) whose checkpoint cannot be read</h2>
<p>Any of them may be waiting for a person; nothing can be decided on them here until the file is put right.</p><ul>${items}</ul></section>`;
}

function keptNoteBlock(note: string): SafeHtml {
  return html`<section class="kept-note"><h2>Your note</h2><p>It was not recorded. Copy it if you need it.</p>
<textarea readonly rows="3" aria-label="Your note, not recorded">${typed(note)}</textarea>${withheld(note, 'Your note')}</section>`;
}

/** The sentence for a person whose decision lost a race, from the run as it is now. */
export function raceSentence(state: RunState | undefined, pauseId: string, refusal: string): string | SafeHtml {
  const decided = state?.hitl.findLast((h) => h.pause_id === pauseId);
  // Paused again: the page's pause is an earlier one of this run ("-p1" when it is at "-p2"), not one it never had.
  const number = (id: string | undefined) => Number(/-p(\d+)$/.exec(id ?? '')?.[1] ?? Number.NaN);
  const again = state && openPause(state) && number(pauseId) < number(state.pause?.pause_id);
  if (decided) {
    // The time in a <time> element: the page shows it in the reader's own time zone, as every other time.
    const first = html`${authorText(decided.by)} decided this pause first (${decided.decision}, at <time>${decided.decided_at}</time>). Your decision was not recorded.`;
    return again ? html`${first} The run has paused again since: read the new pause and decide again.` : first;
  }
  if (again) return 'The run paused again since your page was shown. Your decision was not recorded: read the new pause and decide again.';
  return `Refused: ${withoutCommands(refusal)}`;
}

/** The next run waiting for a person, offered once a decision is taken. */
export function nextPauseBlock(next: { runId: string; task: string; more: number } | undefined): SafeHtml {
  if (!next) return html`<p class="next-pause">No other run waits for a person.</p>`;
  return html`<p class="next-pause">Next waiting for a person: <a href="/runs/${encodeURIComponent(next.runId)}">${next.task}</a>
${next.more > 0 ? html`(and ${next.more} more on <a href="/decisions">Decisions</a>)` : ''}</p>`;
}
