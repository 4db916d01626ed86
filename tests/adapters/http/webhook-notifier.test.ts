import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { WebhookNotifier, type WebhookOptions } from '../../../src/adapters/http/webhook-notifier.js';
import type { AuditEvent } from '../../../src/domain/audit.js';
import type { PauseNotice } from '../../../src/domain/pause-notice.js';

// Issue 38, point 7: a pause is posted to a webhook beside the run, retried with backoff, recorded.
const NOTICE: PauseNotice = {
  runId: '20261129T080000Z-abc123',
  pause: {
    pause_id: '20261129T080000Z-abc123-p1',
    layer: 'arbitration',
    reason_code: 'ARBITRATION_INVESTIGATE',
    requested_at: '2026-11-29T08:00:01.000Z',
  },
  pauseClass: 'judgement',
};

let server: http.Server | undefined;
afterEach(() => server?.close());

/** A webhook on 127.0.0.1 answering each request with the next status of `statuses` (the last one from then on). */
async function webhook(statuses: number[]): Promise<{ url: string; bodies: unknown[] }> {
  const bodies: unknown[] = [];
  server = http.createServer((req, res) => {
    let text = '';
    req.on('data', (d: Buffer) => (text += d.toString()));
    req.on('end', () => {
      bodies.push(JSON.parse(text));
      res.statusCode = statuses[Math.min(bodies.length - 1, statuses.length - 1)] ?? 200;
      res.end();
    });
  });
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/T000/SECRET-PATH`, bodies };
}

function notifier(url: string, overrides: Partial<WebhookOptions> = {}) {
  const records: { runId: string; event: AuditEvent }[] = [];
  const delays: number[] = [];
  const n = new WebhookNotifier({
    url,
    format: 'json',
    attempts: 4,
    consoleUrl: 'https://maestro.example.org:8443',
    record: async (runId, event) => void records.push({ runId, event }),
    onProblem: () => undefined,
    sleep: async (ms) => void delays.push(ms),
    ...overrides,
  });
  return { n, records, delays };
}

describe('WebhookNotifier', () => {
  it('retries a failing webhook with backoff, then records what was delivered; the message holds codes and a link only', async () => {
    const hook = await webhook([500, 503, 200]);
    const { n, records, delays } = notifier(hook.url);
    n.paused(NOTICE);
    await n.settled(60_000);
    expect(delays).toEqual([1000, 2000]);
    expect(hook.bodies).toHaveLength(3);
    expect(hook.bodies[0]).toEqual({
      event: 'run_paused',
      run_id: NOTICE.runId,
      pause_id: NOTICE.pause.pause_id,
      layer: 'arbitration',
      reason_code: 'ARBITRATION_INVESTIGATE',
      reason: 'the council said investigate: a person should look first',
      pause_class: 'judgement',
      paused_at: NOTICE.pause.requested_at,
      link: `https://maestro.example.org:8443/runs/${NOTICE.runId}`,
    });
    expect(records).toHaveLength(1);
    expect(records[0]?.runId).toBe(NOTICE.runId);
    expect(records[0]?.event).toMatchObject({
      event: 'NOTIFY_SENT',
      decision: 'PAUSE_FOR_HITL',
      reason_code: 'PAUSE_NOTIFIED',
      details: { attempts: 3, status: 200, webhook_host: new URL(hook.url).host },
    });
    expect(JSON.stringify(records)).not.toContain('SECRET-PATH');
  });

  it('gives up at once on an answer that says the message is wrong, and after every attempt on a webhook that stays down', async () => {
    const refused = await webhook([400]);
    const once = notifier(refused.url);
    once.n.paused(NOTICE);
    await once.n.settled(60_000);
    expect(refused.bodies).toHaveLength(1);
    expect(once.records[0]?.event).toMatchObject({
      event: 'NOTIFY_FAILED',
      reason_code: 'PAUSE_NOT_NOTIFIED',
      details: { attempts: 1, last: 'HTTP 400' },
    });
    server?.close();
    const down = notifier(refused.url, { attempts: 3 });
    down.n.paused(NOTICE);
    await down.n.settled(60_000);
    expect(down.delays).toEqual([1000, 2000]);
    expect(down.records[0]?.event).toMatchObject({ event: 'NOTIFY_FAILED', details: { attempts: 3, last: 'ECONNREFUSED' } });
  });

  it('speaks Slack: {"text": …} with a link to the run in the console', async () => {
    const hook = await webhook([200]);
    const { n } = notifier(hook.url, { format: 'slack' });
    n.paused(NOTICE);
    await n.settled(60_000);
    expect(hook.bodies[0]).toEqual({
      text: `maestro: run ${NOTICE.runId} waits for a person — ARBITRATION_INVESTIGATE: the council said investigate: a person should look first. <https://maestro.example.org:8443/runs/${NOTICE.runId}|Decide in the console>`,
    });
  });

  it('gives a delivery still waiting to retry up when the process leaves, and records that', async () => {
    const hook = await webhook([500]);
    const { n, records } = notifier(hook.url, {
      sleep: (_ms, signal) => new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error('left')))),
    });
    n.paused(NOTICE);
    await n.settled(10);
    expect(records[0]?.event).toMatchObject({
      event: 'NOTIFY_FAILED',
      details: { attempts: 1, last: 'HTTP 500', abandoned_at_exit: true },
    });
  });
});
