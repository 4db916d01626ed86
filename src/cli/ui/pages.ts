import type { CommandFinding } from '../../app/check-command.js';
import type { QueueView, RunAudit } from '../../compose/console.js';
import type { RunListing } from '../../compose/workspace.js';
import { explainReason } from '../../domain/codes.js';
import { SHOWN_RUN_STATUSES } from '../../domain/run-liveness.js';
import type { RunState } from '../../domain/run-state.js';
import type { PausedRow, ShowDetails } from '../hitl-details.js';
import { html, markdownHtml, type SafeHtml } from './html.js';
import { verdictRadar } from './radar.js';

/** The console's pages, in the order of its menu. */
const MENU = [
  ['/runs', 'Runs'],
  ['/live', 'Live'],
  ['/decisions', 'Decisions'],
  ['/queue', 'Queue'],
] as const;

/** A whole page: the menu, a notice if any, the body. Scripts and styles come from this server only. */
export function layout(options: { title: string; active: string; workspace: string; body: SafeHtml; notice?: Notice }): string {
  const { title, active, workspace, body, notice } = options;
  const menu = MENU.map(([href, label]) => html`<a href="${href}"${active === href ? html` aria-current="page"` : ''}>${label}</a>`);
  return `<!doctype html>${html`<html lang="en"><head><meta charset="utf-8"><title>${title} · maestro</title>
<meta name="viewport" content="width=device-width, initial-scale=1"><link rel="stylesheet" href="/static/app.css">
<script src="/static/app.js" defer></script></head>
<body><header><strong>maestro</strong> <nav>${menu}</nav><span class="ws">${workspace}</span></header>
<main>${notice ? noticeHtml(notice) : ''}${body}</main></body></html>`}`;
}

/** A message at the top of a page: what was done, or why it was refused (nothing changed). */
export interface Notice {
  readonly kind: 'ok' | 'refused';
  readonly text: string;
}

function noticeHtml(notice: Notice): SafeHtml {
  return html`<p class="notice ${notice.kind}" role="${notice.kind === 'refused' ? 'alert' : 'status'}">${notice.text}</p>`;
}

function badge(status: string): SafeHtml {
  return html`<span class="badge s-${status}">${status}</span>`;
}

/** Runs: the list, filterable by status. */
export function runsPage(runs: readonly RunListing[], status: string | undefined): SafeHtml {
  const options = SHOWN_RUN_STATUSES.map((s) => html`<option value="${s}"${s === status ? ' selected' : ''}>${s}</option>`);
  const rows = runs.map(
    (r) => html`<tr data-run="${r.run_id}"><td><a href="/runs/${encodeURIComponent(r.run_id)}">${r.run_id}</a></td>
<td>${badge(r.status)}</td><td>${r.reason_code ?? ''}</td>
<td>${r.task ?? (r.status === 'invalid' ? '(the command file was not valid)' : '(no checkpoint)')}</td>
<td>${r.model ?? ''}</td><td class="n">${r.calls}</td><td class="n">${r.prompt_tokens + r.completion_tokens}</td>
<td class="n">${r.cost_usd === null ? '' : `$${r.cost_usd.toFixed(4)}`}</td><td><time>${r.started_at}</time></td></tr>`,
  );
  return html`<h1>Runs</h1>
<form method="get" action="/runs" class="filter">
<label>Status <select name="status"><option value="">all</option>${options}</select></label>
<button>Filter</button></form>
${
  runs.length === 0
    ? html`<p>No runs${status ? html` with status ${status}` : ''} yet.</p>`
    : html`<table class="runs"><thead><tr><th>Run</th><th>Status</th><th>Reason</th><th>Task</th><th>Model</th><th>Calls</th>
<th>Tokens</th><th>Cost</th><th>Started</th></tr></thead><tbody>${rows}</tbody></table>`
}`;
}

/** One run in full: its status, the decision to take if it waits for one, the artifact and pictures, the audit chain, the transcript. */
export function runPage(options: {
  state: RunState;
  status: string;
  next_step: string | null;
  transcript: string;
  artifact: string | undefined;
  audit: RunAudit | undefined;
  details: ShowDetails;
}): SafeHtml {
  const { state, status, details } = options;
  const id = encodeURIComponent(state.run_id);
  const picture = (file: string) => (/^[A-Za-z0-9][A-Za-z0-9_.-]*\.svg$/.test(file) ? `/runs/${id}/pictures/${file}` : undefined);
  return html`<h1>Run <code>${state.run_id}</code> ${badge(status)}</h1>
<p class="task">${state.command.task_description.split('\n')[0] ?? ''}</p>
${options.next_step ? html`<p>Nobody is running it: resume with <code>${options.next_step}</code></p>` : ''}
${status === 'running' ? html`<p>It is running: <a href="/live">watch it live</a>.</p>` : ''}
${decisionBlock(details, state.decision)}
${auditBlock(options.audit)}
${verdictRadar(state)}
${
  options.artifact
    ? html`<section class="artifact"><h2>Artifact <small>${state.artifact ?? ''}</small></h2>
${markdownHtml(options.artifact, picture)}</section>`
    : ''
}
<section class="transcript"><h2>Transcript</h2>${markdownHtml(options.transcript)}</section>`;
}

const TORN = ', with a torn last line (a write cut short by a crash)';

function auditBlock(audit: RunAudit | undefined): SafeHtml {
  if (!audit) return html`<section class="audit"><h2>Audit log</h2><p>This run has no audit log.</p></section>`;
  const v = audit.verification;
  const verdict =
    v.status === 'broken'
      ? html`<p class="chain broken">The audit chain does not verify: ${v.message}${v.line === null ? '' : ` (line ${v.line})`}</p>`
      : html`<p class="chain ok">The audit chain verifies: ${v.records} record(s)${v.status === 'torn' ? TORN : ''}.</p>`;
  const rows = audit.records.map(
    (r) => html`<tr><td class="n">${r.seq}</td><td><time>${r.ts}</time></td><td>${r.event}</td><td>${r.layer}</td><td>${r.decision}</td>
<td>${r.reason_code}</td><td>${r.final_decider}${r.sealed ? ' · sealed' : ''}</td></tr>`,
  );
  return html`<section class="audit"><h2>Audit log</h2>${verdict}
<details><summary>Decision trail (${audit.records.length} records)</summary>
<table><thead><tr><th>#</th><th>When</th><th>Event</th><th>Layer</th><th>Decision</th><th>Reason</th><th>By</th></tr></thead>
<tbody>${rows}</tbody></table></details></section>`;
}

/** What a person may decide on this run: a form bound to its current pause, why it is sealed, or nothing. */
export function decisionBlock(d: ShowDetails, sealedBy?: RunState['decision']): SafeHtml {
  const done = d.decisions.map(
    (h) =>
      html`<li>${h.decision} at <time>${h.decided_at}</time> on pause <code>${h.pause_id}</code>
(${h.layer}: ${h.reason_code})${h.note ? html` — ${h.note}` : ''}</li>`,
  );
  const history = done.length > 0 ? html`<h3>Decisions taken</h3><ul>${done}</ul>` : '';
  if (d.sealed) {
    return html`<section class="decide sealed"><h2>Sealed</h2>
<p>This run was sealed: nobody can continue it.${sealedWhy(sealedBy)}</p>${history}</section>`;
  }
  if (!d.pause) return history ? html`<section class="decide">${history}</section>` : html``;
  const p = d.pause;
  return html`<section class="decide" data-pause="${p.pause_id}"><h2>Paused for a person</h2>
<p>At <time>${p.requested_at}</time> the <strong>${p.layer}</strong> layer paused it:
<code>${p.reason_code}</code> (${explainReason(p.reason_code)}).</p>
<p class="why">${p.message}</p>
<p><strong>Continue would:</strong> ${d.continue_would ?? ''}<br>
<strong>Stop would:</strong> end the run as STOPPED, with an artifact that records the stop.</p>
${d.plan ? html`<h3>The loop policy's plan</h3><pre>${d.plan}</pre>` : ''}
${d.conflict_pauses > 1 ? html`<p>This conflict has paused ${d.conflict_pauses} times.</p>` : ''}
<form method="post" action="/decisions/${encodeURIComponent(d.run_id)}" class="decide-form">
<input type="hidden" name="pause_id" value="${p.pause_id}">
<label>Note <textarea name="note" maxlength="2000" rows="2"></textarea></label>
${d.conflict_stopped ? '' : html`<button name="decision" value="continue">Continue</button> `}<button name="decision" value="stop" class="stop">Stop</button>
</form>${history}</section>`;
}

function sealedWhy(by: RunState['decision']): SafeHtml | string {
  return by ? html` The ${by.layer} layer sealed it: <code>${by.reason_code}</code> (${explainReason(by.reason_code)}).` : '';
}

/** Decisions: every run paused for a person, each with what paused it and a form bound to that pause. */
export function decisionsPage(rows: readonly { row: PausedRow; details: ShowDetails }[]): SafeHtml {
  if (rows.length === 0) return html`<h1>Decisions</h1><p>No run is waiting for a person.</p>`;
  const items = rows.map(
    ({
      row,
      details,
    }) => html`<article class="paused" data-run="${row.run_id}"><h2><a href="/runs/${encodeURIComponent(row.run_id)}">${row.run_id}</a></h2>
<p class="task">${details.task.split('\n')[0] ?? ''}</p>${decisionBlock(details)}</article>`,
  );
  return html`<h1>Decisions</h1><p>${rows.length} run(s) paused for a person, oldest first.</p>${items}`;
}

/** Queue: waiting, in flight, rejected (with a requeue button), and a form to add a command. */
export function queuePage(queue: QueueView, added?: { name: string; text: string; findings?: readonly CommandFinding[] }): SafeHtml {
  const waiting = queue.queued.map((q) => html`<li><code>${q.file}</code> · ${q.bytes} bytes · <time>${q.modified}</time></li>`);
  const flight = queue.inflight.map(
    (q) =>
      html`<li><a href="/runs/${encodeURIComponent(q.run_id)}">${q.run_id}</a> · ${q.source}
· ${q.run_status ?? 'starting'} · ${q.steps_done} step(s)</li>`,
  );
  const rejected = queue.rejected.map(
    (r) => html`<li data-rejected="${r.name}"><code>${r.name}</code> <code>${r.reason_code ?? ''}</code>
${r.rejected_at ? html`<time>${r.rejected_at}</time>` : ''}${r.message ? html`<pre>${r.message}</pre>` : ''}
<form method="post" action="/queue/requeue" class="inline"><input type="hidden" name="name" value="${r.name}">
<button>Requeue</button></form></li>`,
  );
  const engine = queue.engine
    ? html`<p>The engine's queue: ${queue.engine.queued} queued, ${queue.engine.running} running,
${queue.engine.paused} paused, ${queue.engine.rejected} rejected.</p>`
    : '';
  return html`<h1>Queue</h1>${engine}
${listSection(`Waiting in commands/ (${queue.queued.length})`, waiting, 'Nothing waits.')}
${listSection(`In flight (${queue.inflight.length})`, flight, 'Nothing is in flight.')}
${listSection(`Rejected (${queue.rejected.length})`, rejected, 'Nothing was rejected.')}
${addForm(added)}`;
}

function listSection(title: string, items: readonly SafeHtml[], none: string): SafeHtml {
  return html`<section><h2>${title}</h2>${items.length ? html`<ul>${items}</ul>` : html`<p>${none}</p>`}</section>`;
}

function addForm(added: { name: string; text: string; findings?: readonly CommandFinding[] } | undefined): SafeHtml {
  return html`<section class="add"><h2>Add a command</h2>
<p>Paste a command's JSON or choose a file. It is checked as <code>maestro validate</code> checks it;
only a command that every gate lets run is written into <code>commands/</code>.</p>
<form method="post" action="/queue/add" enctype="multipart/form-data" class="add-form">
<label>File name
<input name="name" value="${added?.name ?? ''}" placeholder="task.json" pattern="[A-Za-z0-9][A-Za-z0-9_.\\-]*\\.json"></label>
<label>Command JSON <textarea name="text" rows="8" spellcheck="false">${added?.text ?? ''}</textarea></label>
<label>or a file <input type="file" name="file" accept=".json,application/json"></label>
<button name="action" value="check">Check</button> <button name="action" value="add">Add to the queue</button>
</form>${added?.findings ? findingsBlock(added.findings) : ''}</section>`;
}

/** What `maestro validate` would say of a command: each finding, what it would do, and what moves it on. */
export function findingsBlock(findings: readonly CommandFinding[]): SafeHtml {
  if (findings.length === 0) return html`<p class="findings ok">No findings: every gate would let this command run.</p>`;
  const items = findings.map((f) => {
    const effect =
      f.effect === 'invalid' ? 'invalid' : `${f.effect === 'pause' ? 'pauses for a person' : 'stops'} (${f.layer}: ${f.reason_code})`;
    return html`<li><pre>${f.lines.join('\n')}</pre>→ ${effect}: ${f.explanation}</li>`;
  });
  return html`<div class="findings refused"><h3>Findings: nothing was written</h3><ul>${items}</ul></div>`;
}

/** Live: the councils at work, fed by server-sent events (static/app.js draws them). */
export function livePage(): SafeHtml {
  return html`<h1>Live</h1><p id="live-state">Connecting…</p><div id="live" aria-live="polite"></div>
<noscript>The live view needs JavaScript; the Runs page shows every run without it.</noscript>`;
}

/** A page for what cannot be shown or done: an unknown run, a bad request. */
export function problemPage(text: string): SafeHtml {
  return html`<h1>Not possible</h1><p class="notice refused" role="alert">${text}</p>`;
}
