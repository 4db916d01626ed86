import type { ArtifactView } from '../../compose/console.js';
import type { RunAudit } from '../../compose/console.js';
import type { RunState } from '../../domain/run-state.js';
import type { ShowDetails } from '../../compose/console.js';
import { decisionBlock, nextPauseBlock } from './decision-card.js';
import { html, markdownHtml, type SafeHtml } from './html.js';
import { outcomeBlock } from './outcome.js';
import { verdictRadar } from './radar.js';

/** The console's pages, in the order of its menu. */
const MENU = [
  ['/runs', 'Runs'],
  ['/live', 'Live'],
  ['/decisions', 'Decisions'],
  ['/queue', 'Queue'],
] as const;

/**
 * A whole page: the menu and who is signed in, a notice if any, the body. Scripts and styles come
 * from this server only. Without a person (the sign-in page) it shows nothing of the workspace.
 */
export function layout(options: {
  title: string;
  active: string;
  workspace: string;
  person?: string;
  body: SafeHtml;
  notice?: Notice;
}): string {
  const { title, active, workspace, person, body, notice } = options;
  const menu = MENU.map(([href, label]) => html`<a href="${href}"${active === href ? html` aria-current="page"` : ''}>${label}</a>`);
  const top =
    person === undefined
      ? html`<strong>maestro</strong>`
      : html`<strong>maestro</strong> <nav>${menu}</nav><span class="ws">${workspace}</span>
<span class="who">${person} <button type="button" id="sign-out">Sign out</button></span>`;
  return `<!doctype html>${html`<html lang="en"><head><meta charset="utf-8"><title>${title} · maestro</title>
<meta name="viewport" content="width=device-width, initial-scale=1"><link rel="stylesheet" href="/static/app.css">
<script src="/static/app.js" defer></script></head>
<body><header>${top}</header>
<main>${notice ? noticeHtml(notice) : ''}${body}</main></body></html>`}`;
}

/** The page a tab without a session gets: a token to type (or the printed address's, read by the script). */
export function signInPage(): string {
  const body = html`<h1>Sign in</h1>
<p>Open the address <code>maestro ui</code> printed, or type the token the person who runs the console gave you.
The sign-in holds for this tab only.</p>
<form id="sign-in" class="sign-in" method="post" action="/session">
<label>Your token <input type="password" name="token" autocomplete="off" required></label>
<button>Sign in</button></form>
<p id="sign-in-problem" class="notice refused" role="alert" hidden></p>
<noscript><p class="notice refused">The console needs JavaScript: it keeps your sign-in in this tab only.</p></noscript>`;
  return layout({ title: 'Sign in', active: '', workspace: '', body });
}

/** A message at the top of a page: what was done, or why it was refused (nothing changed). */
export interface Notice {
  readonly kind: 'ok' | 'refused';
  readonly text: string | SafeHtml;
}

function noticeHtml(notice: Notice): SafeHtml {
  return html`<p class="notice ${notice.kind}" role="${notice.kind === 'refused' ? 'alert' : 'status'}">${notice.text}</p>`;
}

export function badge(status: string): SafeHtml {
  return html`<span class="badge s-${status}">${status}</span>`;
}

/** One run in full: its status, the decision to take if it waits for one, the artifact and pictures, the audit chain, the transcript. */
export function runPage(options: {
  state: RunState;
  status: string;
  /** This console carries the run on (or has it in line to). */
  carrying: boolean;
  transcript: string;
  artifact: ArtifactView | undefined;
  audit: RunAudit | undefined;
  details: ShowDetails;
  /** After a decision: the next run that waits for a person (null: none), offered at the top. */
  next?: Parameters<typeof nextPauseBlock>[0] | null;
}): SafeHtml {
  const { state, status, details } = options;
  const id = encodeURIComponent(state.run_id);
  const picture = (file: string) => (/^[A-Za-z0-9][A-Za-z0-9_.-]*\.svg$/.test(file) ? `/runs/${id}/pictures/${file}` : undefined);
  return html`<h1>Run <code>${state.run_id}</code> ${badge(status)}</h1>
${options.next !== undefined ? nextPauseBlock(options.next ?? undefined) : ''}
<p class="task">${state.command.task_description.split('\n')[0] ?? ''}</p>
${goingOnBlock(state.run_id, status, options.carrying)}
${decisionBlock({ details, state })}
${outcomeBlock(state, status, options.audit)}
${auditBlock(options.audit, artifactMatches(options.audit, options.artifact))}
${verdictRadar(state)}
${artifactBlock({ state, view: options.artifact, recorded: recordedHash(options.audit), picture })}
<section class="transcript"><h2>Transcript</h2>${markdownHtml(options.transcript)}</section>`;
}

/**
 * A run that goes on, followed live on its page (the script reloads it when the run pauses or ends);
 * or one that nobody runs any more, with the button that carries it on in this console.
 */
function goingOnBlock(runId: string, status: string, carrying: boolean): SafeHtml {
  if (status === 'running') {
    const who = carrying ? 'This console carries it on.' : 'A maestro process (a watcher, a worker, or a run in a terminal) runs it.';
    return html`<section class="follow" data-follow="${runId}" aria-live="polite"><h2>Going on</h2>
<p class="follow-state">${who} Each step appears here once it is done; the page shows how it ends.</p><div class="live-steps"></div></section>`;
  }
  if (status !== 'interrupted' && status !== 'continued' && status !== 'error') return html``;
  const why =
    status === 'error'
      ? 'A storage failure stopped it at its last checkpoint.'
      : status === 'continued'
        ? 'A person chose continue; no watcher has taken it up yet.'
        : 'It stopped at its last checkpoint: nobody is running it.';
  return html`<section class="resume"><h2>Not running</h2><p>${why} Resume it here: this console carries it on from that checkpoint
(no finished model call is repeated).</p>
<form method="post" action="/runs/${encodeURIComponent(runId)}/resume"><button>Resume run ${runId}</button></form></section>`;
}

const TORN = ', with a torn last line (a write cut short by a crash)';

/** The SHA-256 the run's audit log recorded for the artifact it wrote (its last ARTIFACT_WRITTEN), if any. */
function recordedHash(audit: RunAudit | undefined): string | undefined {
  const written = audit?.records.findLast((r) => r.event === 'ARTIFACT_WRITTEN');
  return typeof written?.details?.sha256 === 'string' ? written.details.sha256 : undefined;
}

/** Whether the artifact's bytes now are those the audit log recorded; undefined when either is missing. */
function artifactMatches(audit: RunAudit | undefined, view: ArtifactView | undefined): boolean | undefined {
  const recorded = recordedHash(audit);
  return recorded === undefined || view === undefined ? undefined : recorded === view.sha256;
}

function auditBlock(audit: RunAudit | undefined, artifactOk: boolean | undefined): SafeHtml {
  if (!audit) return html`<section class="audit"><h2>Audit log</h2><p>This run has no audit log.</p></section>`;
  const v = audit.verification;
  const verdict =
    v.status === 'broken'
      ? html`<p class="chain broken">The audit chain does not verify: ${v.message}${v.line === null ? '' : ` (line ${v.line})`}</p>`
      : artifactOk === false
        ? html`<p class="chain broken">The audit chain verifies (${v.records} record(s)), but the artifact on disk is not the one it records: see below.</p>`
        : html`<p class="chain ok">The audit chain verifies: ${v.records} record(s)${v.status === 'torn' ? TORN : ''}.</p>`;
  const rows = audit.records.map(
    (r) => html`<tr><td class="n">${r.seq}</td><td><time>${r.ts}</time></td><td>${r.event}</td><td>${r.layer}</td><td>${r.decision}</td>
<td>${r.reason_code}</td><td>${r.final_decider}${decidedBy(r)}${r.sealed ? ' · sealed' : ''}</td></tr>`,
  );
  return html`<section class="audit"><h2>Audit log</h2>${verdict}
<details><summary>Decision trail (${audit.records.length} records)</summary>
<table><thead><tr><th>#</th><th>When</th><th>Event</th><th>Layer</th><th>Decision</th><th>Reason</th><th>By</th></tr></thead>
<tbody>${rows}</tbody></table></details></section>`;
}

/**
 * The artifact: whole and rendered when it is small; a large one in parts, as text, with the way
 * to the others; always a download; and whether its bytes are still those the audit log recorded.
 */
function artifactBlock(options: {
  state: RunState;
  view: ArtifactView | undefined;
  recorded: string | undefined;
  picture: (file: string) => string | undefined;
}): SafeHtml {
  const { state, view, recorded } = options;
  if (!state.artifact) return html``;
  const title = html`<h2>Artifact <small>${state.artifact}</small></h2>`;
  if (!view) return html`<section class="artifact">${title}<p>The file is not in this workspace any more (moved or deleted).</p></section>`;
  const id = encodeURIComponent(state.run_id);
  const integrity =
    recorded === undefined
      ? html`<p class="integrity">The audit log records no hash for this file.</p>`
      : recorded === view.sha256
        ? html`<p class="integrity ok">Its bytes match the hash its audit log recorded (sha256 ${recorded.slice(0, 12)}…).</p>`
        : html`<p class="integrity broken" role="alert">This file was changed after the run wrote it: its bytes no longer match the hash
the audit log recorded (sha256 ${recorded.slice(0, 12)}…, now ${view.sha256.slice(0, 12)}…). What is shown is the file as it is now.</p>`;
  const download = html`<p><a href="/runs/${id}/artifact" data-download="${state.artifact.split('/').at(-1) ?? 'artifact.md'}">Download the artifact</a>
(${(view.bytes / 1024).toFixed(0)} KB, screened as every page is)</p>`;
  if (view.parts === 1)
    return html`<section class="artifact">${title}${integrity}${download}${markdownHtml(view.text, options.picture)}</section>`;
  const link = (n: number, label: string) => html`<a href="/runs/${id}?part=${n}">${label}</a>`;
  const nav = html`<nav class="parts" aria-label="Parts of the artifact">Part ${view.part + 1} of ${view.parts}
${view.part > 0 ? link(view.part, 'previous part') : ''} ${view.part + 1 < view.parts ? link(view.part + 2, 'next part') : ''}</nav>`;
  return html`<section class="artifact">${title}${integrity}
<p>This artifact is ${(view.bytes / 1_048_576).toFixed(1)} MB: too large to show whole, it is shown in parts, as text.</p>
${download}${nav}<pre class="artifact-part">${view.text}</pre>${nav}</section>`;
}

/** ` · Ana (console)`: the person a HITL_DECIDED (or RUN_RESUMED) record names, if it names one. */
function decidedBy(record: RunAudit['records'][number]): string {
  const name = record.details?.decided_by ?? record.details?.resumed_by;
  if (typeof name !== 'string') return '';
  const via = record.details?.via;
  // A person, with how they decided; a gate's record names the gate whose decision it carries on.
  if (typeof via === 'string') return ` · ${name} (${via === 'cli' ? 'via the CLI' : 'via the console'})`;
  return record.final_decider === 'SYSTEM' ? ` · as decided by the ${name} gate` : ` · ${name}`;
}

/** Live: the councils at work, fed by server-sent events (static/app.js draws them). */
export function livePage(): SafeHtml {
  return html`<h1>Live</h1><p id="live-state">Connecting…</p><div id="live" aria-live="polite"></div>
<section class="live-ended"><h2>Just now</h2><p>Runs that paused or ended while you watched (the last 10).</p><ul id="live-ended"></ul></section>
<noscript>The live view needs JavaScript; the Runs page shows every run without it.</noscript>`;
}

/** A page for what cannot be shown or done: an unknown run, a bad request. */
export function problemPage(text: string): SafeHtml {
  return html`<h1>Not possible</h1><p class="notice refused" role="alert">${text}</p>`;
}
