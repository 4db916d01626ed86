import type { CommandFinding } from '../../compose/console.js';
import type { QueueView } from '../../compose/console.js';
import { html, type SafeHtml, typed, withheld } from './html.js';

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
<button aria-label="Requeue ${r.name}">Requeue</button></form></li>`,
  );
  const engine = queue.engine
    ? html`<p>The engine's queue: ${queue.engine.queued} queued, ${queue.engine.running} running,
${queue.engine.paused} paused, ${queue.engine.rejected} rejected.</p>`
    : '';
  // With no watcher (and no engine's intake), a command put in commands/ waits for good: the page says so.
  const idle =
    !queue.watcher_running && !queue.engine
      ? html`<p class="notice refused" role="status">No watcher runs on this workspace: nothing in commands/ is taken up until one starts on this machine.</p>`
      : '';
  return html`<h1>Queue</h1>${engine}${idle}
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
<input name="name" value="${typed(added?.name ?? '')}" placeholder="task.json" pattern="[A-Za-z0-9][A-Za-z0-9_.\\-]*\\.json"></label>
<label>Command JSON <textarea name="text" rows="8" spellcheck="false">${typed(added?.text ?? '')}</textarea></label>${withheld(added?.text, 'The command you sent')}${withheld(added?.name, 'The file name you typed')}
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
