import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createApp } from '../../../src/compose/app.js';
import { auditEvent } from '../../../src/domain/audit.js';
import { runDecision } from '../../../src/domain/decision.js';
import { FakeClock } from '../../fakes/fake-clock.js';
import { withOtlpWorkspace } from '../../fakes/otlp-receiver.js';

const RUN = '20260101T000000Z-c0ffee';
const otel = withOtlpWorkspace();

/** The app as `maestro run` composes it, with tracing asked for; notices are kept. */
async function tracedApp(telemetry: Record<string, unknown>, env: Record<string, string> = {}) {
  await writeFile(
    path.join(otel.ws.dir, 'maestro.config.json'),
    JSON.stringify({ telemetry: { otlp_endpoint: otel.receiver.endpoint, ...telemetry } }),
  );
  const notices: string[] = [];
  const app = await createApp({
    workspace: otel.ws.dir,
    env,
    clock: new FakeClock('2026-01-01T00:00:00.000Z', 5),
    tracing: { onNotice: (m) => notices.push(m) },
  });
  return { app, notices };
}

/** One model step as the engine writes it, with its content handed to the telemetry right after the step's records, as the engine does. */
async function oneStep(app: Awaited<ReturnType<typeof createApp>>, content: { prompt: string; reply: string }) {
  const run = await app.deps.ledger.open(RUN);
  await run.commit({ records: [auditEvent('COMMAND_RECEIVED', runDecision('queue', 'COMMAND_RECEIVED'), { bytes: 10 })] });
  await run.commit({
    records: [
      auditEvent('MODEL_CALL', runDecision('model', 'MODEL_CALL_OK'), {
        persona: 'auditor',
        kind: 'turn',
        round: 1,
        model: 'offline/offline-rehearsal-v1',
        duration_ms: 3,
        prompt_tokens: 12,
        completion_tokens: 7,
      }),
    ],
  });
  app.deps.telemetry.recordStepContent({ runId: RUN, persona: 'auditor', ...content });
  await run.commit({ records: [auditEvent('RUN_FINISHED', runDecision('dispatch', 'RUN_COMPLETED'), { status: 'completed' })] });
  await app.telemetry.shutdown();
}

const step = {
  prompt: 'Check the refund for jane.doe@example.com',
  reply: 'Card 4111 1111 1111 1111 was charged twice; ask jane.doe@example.com',
};

describe('telemetry through the composition root (real exporter, real OTLP/HTTP otel.receiver)', () => {
  it('with capture_content, puts the step content on its chat span, redacted', async () => {
    const { app, notices } = await tracedApp({ capture_content: true });
    await oneStep(app, step);
    const chat = otel.receiver.spans.find((s) => s.name === 'chat offline-rehearsal-v1')!;
    expect(chat.attributes['gen_ai.usage.input_tokens']).toBe(12);
    const input = JSON.parse(chat.attributes['gen_ai.input.messages'] as string);
    const output = JSON.parse(chat.attributes['gen_ai.output.messages'] as string);
    expect(input).toEqual([{ role: 'user', parts: [{ type: 'text', content: 'Check the refund for [REDACTED:EMAIL]' }] }]);
    expect(output[0].parts[0].content).toMatch(/^Card \[REDACTED:[A-Z_]+\] was charged twice; ask \[REDACTED:EMAIL\]$/);
    expect(JSON.stringify(otel.receiver.spans)).not.toContain('jane.doe');
    expect(JSON.stringify(otel.receiver.spans)).not.toContain('4111');
    expect(notices).toEqual([]);
  });

  it('without it (the default), sends no content at all', async () => {
    const { app } = await tracedApp({});
    await oneStep(app, step);
    expect(otel.receiver.spans.map((s) => s.name)).toContain('chat offline-rehearsal-v1');
    const all = JSON.stringify(otel.receiver.spans);
    expect(all).not.toContain('gen_ai.input.messages');
    expect(all).not.toContain('refund');
  });

  it('sends the OTLP headers from the environment, and the service name from the config', async () => {
    const { app } = await tracedApp({ service_name: 'council-a' }, { OTEL_EXPORTER_OTLP_HEADERS: 'x-api-key=s3cr3t%2Fvalue' });
    await oneStep(app, step);
    expect(otel.receiver.requests.length).toBeGreaterThan(0);
    expect(otel.receiver.requests[0]!.headers['x-api-key']).toBe('s3cr3t/value');
    expect(otel.receiver.spans[0]!.resource['service.name']).toBe('council-a');
  });

  it('forwards records only as the audit log keeps them: redacted, long text digested', async () => {
    const { app } = await tracedApp({});
    const run = await app.deps.ledger.open(RUN);
    // Raw text under a key that is not a raw-text key, longer than a digest: the log keeps only its digest.
    await run.commit({
      records: [
        auditEvent('SESSION_RECOVERED', runDecision('session', 'SESSION_CORRUPT_MOVED_ASIDE'), {
          persona: 'jane.doe@example.com',
          summary: 'x'.repeat(2000),
        }),
      ],
    });
    await app.telemetry.shutdown();
    const [workflow] = otel.receiver.spans;
    const event = workflow!.events.find((e) => e.name === 'maestro.session_recovered')!;
    expect(event.attributes['maestro.persona']).toBe('[REDACTED:EMAIL]');
    expect(JSON.stringify(event.attributes)).not.toContain('x'.repeat(100));
  });
});
