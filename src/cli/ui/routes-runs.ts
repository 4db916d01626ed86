import path from 'node:path';
import type { Hono } from 'hono';
import { stream, streamSSE } from 'hono/streaming';
import type { LiveEvent, RunAudit } from '../../compose/console.js';
import { screenText } from '../../domain/screen.js';
import { unreadableCheckpoint, unreadableSentence } from '../../domain/unreadable-checkpoint.js';
import { renderTranscript } from '../../domain/transcript.js';
import { TranscriptFeed } from '../transcript-feed.js';
import { type ConsoleEnv, type ConsoleServerOptions, doneNotice, page, RUN_ID } from './context.js';
import { readForm } from './forms.js';
import { markdownHtml } from './html.js';
import { livePage, problemPage, runPage } from './pages.js';
import { findRuns, RunsQuery, runsPage } from './runs-list.js';
import { decisionRows } from './routes-decisions.js';

/** Runs: the list, one run in full, its pictures. */
export function registerRuns(app: Hono<ConsoleEnv>, options: ConsoleServerOptions): void {
  const { backend } = options;
  app.get('/runs', async (c) => {
    const query = readForm(RunsQuery, c.req.query());
    if (!query.ok) return c.html(page(c, options, 'Runs', problemPage(`Not a search this page can do: ${query.problem}`)), 400);
    return c.html(page(c, options, 'Runs', runsPage(findRuns(await backend.runs(), query.value), query.value)));
  });
  app.get('/runs/:id', async (c) => {
    const runId = c.req.param('id');
    const unknown = () => c.html(page(c, options, 'Unknown run', problemPage(`There is no run "${runId}" in this workspace.`)), 404);
    if (!RUN_ID.test(runId)) return unknown();
    const [run, audit] = await Promise.all([backend.run(runId), backend.audit(runId)]);
    if (!run) {
      const problem = await withoutReadableCheckpoint(backend, runId, audit);
      return problem === undefined ? unknown() : c.html(page(c, options, runId, problemPage(problem)), 200);
    }
    const details = (await backend.app.pauseDetails(runId))?.details;
    if (!details) return unknown();
    const transcript = renderTranscript(run.state, run.status, { audience: 'console', prices: backend.app.config.prices });
    const part = Number.parseInt(c.req.query('part') ?? '1', 10);
    const artifact = await backend.artifact(run.state, Number.isInteger(part) ? part - 1 : 0);
    const next = c.req.query('done') ? await nextWaiting(options, runId) : undefined;
    const body = runPage({
      ...run,
      transcript,
      artifact,
      audit,
      details,
      carrying: backend.isCarrying(runId),
      ...(next !== undefined ? { next } : {}),
    });
    return c.html(page(c, options, runId, body, doneNotice(c)));
  });
  // The whole artifact, screened, as a download: part after part, so a large one neither fills memory nor holds up other pages.
  app.get('/runs/:id/artifact', async (c) => {
    const runId = c.req.param('id');
    const run = RUN_ID.test(runId) ? await backend.run(runId) : undefined;
    const file = run?.state.artifact;
    if (!run || !file || !(await backend.artifact(run.state, 0))) return c.text('no such artifact', 404);
    c.header('Content-Type', 'text/markdown; charset=utf-8');
    c.header('Content-Disposition', `attachment; filename="${path.basename(file).replace(/[^A-Za-z0-9._-]/g, '_')}"`);
    return stream(c, async (out) => {
      for await (const text of backend.artifactDownload(run.state)) await out.write(text);
    });
  });
  // What the page following a run asks when it (re)connects: whether the run has moved on meanwhile.
  app.get('/runs/:id/status', async (c) => {
    const runId = c.req.param('id');
    const run = RUN_ID.test(runId) ? await backend.run(runId) : undefined;
    if (!run) return c.json({ status: 'unknown' }, 404);
    const task = screenText(run.state.command.task_description.trim().split('\n')[0] ?? '');
    return c.json({ status: run.status, pause_id: run.state.pause?.pause_id ?? null, task });
  });
  app.post('/runs/:id/resume', async (c) => {
    const runId = c.req.param('id');
    const by = { name: c.get('session').name, via: 'console' as const, from: options.placeOf?.(c) ?? 'an unknown place' };
    if (RUN_ID.test(runId) && (await backend.resume(runId, by))) return c.redirect(`/runs/${encodeURIComponent(runId)}?done=resumed`, 303);
    const notice = {
      kind: 'refused' as const,
      text: `Refused: run ${runId} is not waiting to be resumed (it is running, or it has ended); nothing changed.`,
    };
    return c.html(page(c, options, runId, problemPage(notice.text)), 409);
  });
  app.get('/runs/:id/pictures/:file', async (c) => {
    const runId = c.req.param('id');
    const run = RUN_ID.test(runId) ? await backend.run(runId) : undefined;
    const svg = run ? await backend.picture(run.state, c.req.param('file')) : undefined;
    if (svg === undefined) return c.text('no such picture', 404);
    return c.body(svg, 200, {
      'Content-Type': 'image/svg+xml',
      'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'",
    });
  });
}

/** A value with every string in it screened. */
function screenedDeep(value: unknown): unknown {
  if (typeof value === 'string') return screenText(value);
  if (Array.isArray(value)) return value.map(screenedDeep);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, screenedDeep(v)]));
  return value;
}

export function registerLive(app: Hono<ConsoleEnv>, options: ConsoleServerOptions): void {
  app.get('/live', (c) => c.html(page(c, options, 'Live', livePage())));
  app.get('/live/events', (c) =>
    streamSSE(c, async (stream) => {
      let chain = Promise.resolve();
      // Every string leaves screened, whatever its record (a checkpoint kept raw by an older maestro too).
      const send = (event: string, data: unknown) => {
        chain = chain.then(() => stream.writeSSE({ event, data: JSON.stringify(screenedDeep(data)) })).catch(() => undefined);
      };
      // The same feed as `run --follow`: every string in an event has been through the detector.
      // A step's reply goes with its Markdown rendered here, as every page renders it (screened, HTML shown as text).
      const feed = new TranscriptFeed((e) =>
        send('transcript', e.kind === 'step_finished' ? { ...e, reply_html: markdownHtml(screenText(e.reply)).text } : e),
      );
      const listener = (e: LiveEvent) => {
        if (e.kind === 'progress') feed.onProgress(e.event);
        else send('status', e);
      };
      const stop = await options.backend.live.subscribe(listener);
      send('ready', {});
      await new Promise<void>((resolve) => {
        const ping = setInterval(() => send('ping', {}), 15_000);
        stream.onAbort(() => {
          clearInterval(ping);
          stop();
          resolve();
        });
      });
    }),
  );
}

/** The run that has waited longest for a person, other than this one (offered once a decision is taken); null when none waits. */
async function nextWaiting(options: ConsoleServerOptions, runId: string) {
  const others = (await decisionRows(options.backend)).cards.filter((r) => r.row.run_id !== runId);
  const first = others[0];
  if (!first) return null;
  const task = first.state.command.task_description.split('\n')[0] ?? first.row.run_id;
  return { runId: first.row.run_id, task, more: others.length - 1 };
}

/**
 * What the page of a run with no checkpoint to show says: that its checkpoint is there and cannot be
 * read (not a run that never had one), or what its audit log tells; undefined when there is no such run.
 */
async function withoutReadableCheckpoint(
  backend: ConsoleServerOptions['backend'],
  runId: string,
  audit: RunAudit | undefined,
): Promise<string | undefined> {
  const unreadable = await backend.app.pauseDetails(runId).then(
    () => undefined,
    (error: unknown) => unreadableCheckpoint(runId, error),
  );
  if (unreadable) {
    const sentence = unreadableSentence(unreadable);
    return `${sentence.charAt(0).toUpperCase()}${sentence.slice(1)}.`;
  }
  return audit ? withoutCheckpoint(runId, audit) : undefined;
}

/** A run with an audit log and no checkpoint: a command that did not validate (which fields, from its log), or one cut short. */
function withoutCheckpoint(runId: string, audit: RunAudit): string {
  const invalid = audit.records.findLast((r) => r.event === 'COMMAND_INVALID');
  if (!invalid) return `Run ${runId} ended before its first checkpoint was kept; its audit log holds what happened.`;
  const fields = (invalid.details as { issue_paths?: unknown } | undefined)?.issue_paths;
  const at = Array.isArray(fields) && fields.length > 0 ? ` (the fields at fault: ${fields.map(String).join(', ')})` : '';
  return `Run ${runId} ended invalid, ${invalid.reason_code}: its command file did not validate${at}, so nothing ran. Fix the command and add it again.`;
}
