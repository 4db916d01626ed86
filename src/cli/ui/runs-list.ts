import { z } from 'zod';
import type { IndexedRun, RunListing } from '../../compose/console.js';
import { SHOWN_RUN_STATUSES } from '../../domain/run-liveness.js';
import { html, type SafeHtml } from './html.js';
import { badge } from './pages.js';

const PAGE_SIZE = 50;
const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** A day that is on the calendar: "2026-11-31" is refused, not read as December 1st. */
const day = z
  .string()
  .regex(DAY, 'a date such as 2026-11-29')
  .refine((d) => {
    const t = Date.parse(`${d}T00:00:00Z`);
    return !Number.isNaN(t) && new Date(t).toISOString().startsWith(d);
  }, 'a day that is on the calendar');

/** What the Runs page is asked: a search, a status, a date range (days in the viewer's time zone), a page. */
export const RunsQuery = z.object({
  q: z.string().max(200).default(''),
  status: z.enum(['', ...SHOWN_RUN_STATUSES], { error: `a status is one of ${SHOWN_RUN_STATUSES.join(', ')}` }).default(''),
  from: z.union([z.literal(''), day]).default(''),
  to: z.union([z.literal(''), day]).default(''),
  /** The viewer's offset from UTC in minutes, as `Date#getTimezoneOffset` gives it (the page's script fills it in). */
  tz: z.coerce.number().int().min(-840).max(840).default(0),
  page: z.coerce.number().int().min(1).default(1),
});
export type RunsQuery = z.infer<typeof RunsQuery>;

/** The runs that match, newest first, one page of them. */
export function findRuns(runs: readonly IndexedRun[], query: RunsQuery): { shown: RunListing[]; total: number; pages: number } {
  const words = query.q.toLowerCase().split(/\s+/).filter(Boolean);
  const from = query.from ? localDay(query.from, query.tz, 0) : undefined;
  const to = query.to ? localDay(query.to, query.tz, 1) : undefined;
  const matching = runs.filter(({ listing, text }) => {
    if (query.status && listing.status !== query.status) return false;
    const started = Date.parse(listing.started_at);
    if ((from !== undefined && started < from) || (to !== undefined && started >= to)) return false;
    return words.every((w) => text.includes(w));
  });
  const pages = Math.max(1, Math.ceil(matching.length / PAGE_SIZE));
  const page = Math.min(query.page, pages);
  return { shown: matching.slice((page - 1) * PAGE_SIZE, page * PAGE_SIZE).map((r) => r.listing), total: matching.length, pages };
}

/** The start of a day (plus `days`) in the viewer's time zone, in milliseconds since the epoch. */
function localDay(day: string, tz: number, days: number): number {
  const [y, m, d] = day.split('-').map(Number) as [number, number, number];
  return Date.UTC(y, m - 1, d + days) + tz * 60_000;
}

/** Runs: a search over run ids, tasks and file names, a status, a date range, and pages of 50. */
export function runsPage(found: ReturnType<typeof findRuns>, query: RunsQuery): SafeHtml {
  const options = SHOWN_RUN_STATUSES.map((s) => html`<option value="${s}"${s === query.status ? ' selected' : ''}>${s}</option>`);
  const rows = found.shown.map(
    (r) => html`<tr data-run="${r.run_id}"><td data-label="Run"><a href="/runs/${encodeURIComponent(r.run_id)}">${r.run_id}</a></td>
<td data-label="Status">${badge(r.status)}</td><td data-label="Reason">${r.reason_code ?? ''}</td>
<td data-label="Task">${r.task ?? taskGap(r)}</td>
<td data-label="Model">${r.model ?? ''}</td><td data-label="Calls" class="n">${r.calls}</td>
<td data-label="Tokens" class="n">${r.prompt_tokens + r.completion_tokens}</td>
<td data-label="Cost" class="n">${r.cost_usd === null ? '' : `$${r.cost_usd.toFixed(4)}`}</td>
<td data-label="Started"><time datetime="${r.started_at}">${r.started_at}</time></td></tr>`,
  );
  const page = Math.min(query.page, found.pages);
  const first = (page - 1) * PAGE_SIZE + 1;
  const filtered = Boolean(query.q || query.status || query.from || query.to);
  return html`<h1>Runs</h1>
<form method="get" action="/runs" class="filter" role="search">
<label>Search <input type="search" name="q" value="${query.q}" placeholder="task words, run id or file name"></label>
<label>Status <select name="status"><option value="">all</option>${options}</select></label>
<label>From <input type="date" name="from" value="${query.from}"></label>
<label>To <input type="date" name="to" value="${query.to}"></label>
<input type="hidden" name="tz" value="${query.tz}">
<button>Search runs</button></form>
${
  found.total === 0
    ? html`<p>No runs${filtered ? ' match' : ' yet'}.</p>`
    : html`${query.page > found.pages ? html`<p class="notice">There is no page ${query.page}: this is the last, page ${found.pages}.</p>` : ''}
<p class="count">Runs ${first}–${first + found.shown.length - 1} of ${found.total}${filtered ? ' that match' : ''}.</p>
<table class="runs"><thead><tr><th>Run</th><th>Status</th><th>Reason</th><th>Task</th><th>Model</th><th>Calls</th>
<th>Tokens</th><th>Cost</th><th>Started</th></tr></thead><tbody>${rows}</tbody></table>${pager(query, page, found.pages)}`
}`;
}

function pager(query: RunsQuery, page: number, pages: number): SafeHtml {
  if (pages === 1) return html``;
  const at = (n: number) => {
    const params = new URLSearchParams({
      q: query.q,
      status: query.status,
      from: query.from,
      to: query.to,
      tz: String(query.tz),
      page: String(n),
    });
    for (const [k, v] of [...params]) if (v === '') params.delete(k);
    return `/runs?${params}`;
  };
  return html`<nav class="pager" aria-label="Pages of runs">${page > 1 ? html`<a href="${at(page - 1)}">Newer runs</a>` : ''}
<span>Page ${page} of ${pages}</span>${page < pages ? html`<a href="${at(page + 1)}">Older runs</a>` : ''}</nav>`;
}

/** What stands for the task of a run that has none to show: an invalid command, a checkpoint that cannot be read, none kept. */
function taskGap(r: RunListing): string {
  if (r.status === 'invalid') return '(the command file was not valid)';
  if (r.checkpoint_unreadable !== undefined)
    return `(its checkpoint cannot be read: ${r.checkpoint_unreadable}; it may be waiting for a person — look with: ${r.next_step ?? ''})`;
  return '(no checkpoint)';
}
