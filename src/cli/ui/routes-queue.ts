import { InvalidInputError } from '../../domain/errors.js';
import type { Hono } from 'hono';
import { type ConsoleEnv, type ConsoleServerOptions, doneNotice, page } from './context.js';
import { AddForm, commandOf, readForm, RequeueForm } from './forms.js';
import type { Notice } from './pages.js';
import { type findingsBlock, queuePage } from './queue-page.js';

export function registerQueue(app: Hono<ConsoleEnv>, options: ConsoleServerOptions): void {
  const { backend } = options;
  app.get('/queue', async (c) => c.html(page(c, options, 'Queue', queuePage(await backend.queue()), doneNotice(c))));
  app.post('/queue/requeue', async (c) => {
    const form = readForm(RequeueForm, await c.req.parseBody({ all: true }).catch(() => undefined));
    const name = form.ok ? form.value.name : '';
    const known = (await backend.queue()).rejected.some((r) => r.name === name);
    if (!known) {
      const notice: Notice = { kind: 'refused', text: `Refused: "${name}" is not in .maestro/rejected/; nothing changed.` };
      return c.html(page(c, options, 'Queue', queuePage(await backend.queue()), notice), 404);
    }
    try {
      await backend.requeue(name);
    } catch (error) {
      if (!(error instanceof InvalidInputError)) throw error;
      const notice: Notice = { kind: 'refused', text: `Refused: ${error.message}; nothing changed.` };
      return c.html(page(c, options, 'Queue', queuePage(await backend.queue()), notice), 409);
    }
    return c.redirect('/queue?done=requeued', 303);
  });
  app.post('/queue/add', async (c) => {
    const form = readForm(AddForm, await c.req.parseBody({ all: true }).catch(() => undefined));
    if (!form.ok) {
      const notice: Notice = { kind: 'refused', text: `Refused: ${form.problem}; nothing was written.` };
      return c.html(page(c, options, 'Queue', queuePage(await backend.queue()), notice), 400);
    }
    const { name, text } = await commandOf(form.value);
    const again = async (notice: Notice, findings: Parameters<typeof findingsBlock>[0] | undefined, status: 200 | 422) =>
      c.html(
        page(c, options, 'Queue', queuePage(await backend.queue(), { name, text, ...(findings ? { findings } : {}) }), notice),
        status,
      );
    if (!text.trim())
      return again({ kind: 'refused', text: 'Refused: paste a command or choose a file; nothing was written.' }, undefined, 422);
    if (form.value.action === 'check') {
      const findings = (await backend.app.review(text)).findings;
      const ok = findings.length === 0;
      return again(
        {
          kind: ok ? 'ok' : 'refused',
          text: ok ? 'Checked: every gate would let it run (nothing written yet).' : `Checked: ${whyNot(findings)} (nothing written).`,
        },
        findings,
        ok ? 200 : 422,
      );
    }
    const result = await backend.add(name || `ui-${Date.now()}.json`, text);
    if (result.added) return c.redirect('/queue?done=added', 303);
    const why = result.problem ?? whyNot(result.findings);
    return again({ kind: 'refused', text: `Refused: ${why}; nothing was written into commands/.` }, result.findings, 422);
  });
}

/** What the findings say of the command: not a valid command at all, or one a gate would stop or pause. */
function whyNot(findings: readonly { readonly effect: 'invalid' | 'pause' | 'stop' }[]): string {
  return findings.some((f) => f.effect !== 'invalid') ? 'it would not run unattended' : 'it is not a valid command';
}
