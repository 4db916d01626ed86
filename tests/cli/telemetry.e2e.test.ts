import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdir, readFile, symlink, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../fakes/cli.js';
import { startOtlpReceiver, withOtlpWorkspace, type ReceivedSpan } from '../fakes/otlp-receiver.js';

const otel = withOtlpWorkspace();

/** No OTEL_* from the developer's shell leaks into a test. */
const cleanEnv = Object.fromEntries(
  Object.keys(process.env)
    .filter((k) => k.startsWith('OTEL_'))
    .map((k) => [k, undefined]),
);
const maestro = (args: string[], env: Record<string, string | undefined> = {}) =>
  runCli(args, { cwd: otel.ws.dir, env: { ...cleanEnv, ...env } });
const write = (name: string, value: unknown) => writeFile(path.join(otel.ws.dir, name), JSON.stringify(value));
const records = async (file: string) =>
  (await readFile(file, 'utf8'))
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { event: string; details?: Record<string, unknown> });
const traceIdOf = (runId: string) => createHash('sha256').update(`maestro-run:${runId}`).digest('hex').slice(0, 32);

const named = (prefix: string) => otel.receiver.spans.filter((s) => s.name.startsWith(prefix));
const childrenOf = (parent: ReceivedSpan) => otel.receiver.spans.filter((s) => s.parentSpanId === parent.spanId);
const within = (child: ReceivedSpan, parent: ReceivedSpan) => child.startMs >= parent.startMs && child.endMs <= parent.endMs;

describe('OpenTelemetry traces (a real OTLP/HTTP otel.receiver, the real CLI, the offline model)', () => {
  it('traces a completed run: workflow → agent per step → chat with token usage, tools under the agent that asked', async () => {
    await write('maestro.config.json', { telemetry: { otlp_endpoint: otel.receiver.endpoint } });
    // The offline model asks the strategist's notes for when they are there: a link to a file that is gone.
    await mkdir(path.join(otel.ws.dir, 'notes'));
    await symlink('gone.md', path.join(otel.ws.dir, 'notes', 'strategist-context.md'));
    const r = await maestro(['run', 'examples/review-migration.json', '--json']);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as { run_id: string; audit_log: string };
    expect(
      otel.receiver.requests.every((q) => q.method === 'POST' && q.path === '/v1/traces' && q.contentType.startsWith('application/json')),
    ).toBe(true);

    const [workflow, ...others] = named('invoke_workflow');
    expect(others).toEqual([]);
    expect(workflow).toMatchObject({ name: 'invoke_workflow maestro', kind: 1, parentSpanId: undefined, traceId: traceIdOf(out.run_id) });
    expect(workflow!.resource['service.name']).toBe('maestro');
    expect(workflow!.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_workflow',
      'gen_ai.workflow.name': 'maestro',
      'gen_ai.conversation.id': out.run_id,
      'maestro.run.status': 'completed',
      'maestro.reason_code': 'RUN_COMPLETED',
      'maestro.gate.decision': 'RUN',
      'maestro.gate.layer': 'dispatch',
      'maestro.arbitration.strategy': 'confidence_weighted',
      'maestro.arbitration.final_action': 'proceed',
      'maestro.arbitration.decision': 'RUN',
    });
    expect(workflow!.events.filter((e) => e.name === 'maestro.gate').map((e) => e.attributes['maestro.layer'])).toEqual([
      'mediator_advice',
      'meaning',
      'consistency',
      'rfl',
      'ethics',
      'acc',
      'dispatch',
    ]);
    expect(otel.receiver.spans.every((s) => s.traceId === workflow!.traceId)).toBe(true);

    // One agent span per model step, each with exactly one chat span whose usage is the audit log's.
    const calls = (await records(out.audit_log)).filter((x) => x.event === 'MODEL_CALL');
    const agents = named('invoke_agent ');
    expect(agents.map((a) => a.attributes['gen_ai.agent.name'])).toEqual(calls.map((c) => c.details?.persona));
    for (const [i, agent] of agents.entries()) {
      expect(agent.parentSpanId).toBe(workflow!.spanId);
      expect(within(agent, workflow!)).toBe(true);
      const chats = childrenOf(agent).filter((s) => s.name.startsWith('chat '));
      expect(chats).toHaveLength(1);
      const chat = chats[0]!;
      expect(chat).toMatchObject({ name: 'chat offline-rehearsal-v1', kind: 3 });
      expect(within(chat, agent)).toBe(true);
      expect(chat.attributes).toMatchObject({
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'maestro.offline',
        'gen_ai.request.model': 'offline-rehearsal-v1',
        'gen_ai.usage.input_tokens': calls[i]!.details?.prompt_tokens,
        'gen_ai.usage.output_tokens': calls[i]!.details?.completion_tokens,
        'maestro.step.kind': calls[i]!.details?.kind,
      });
    }
    const totals = (await records(out.audit_log)).find((x) => x.event === 'RUN_FINISHED')!.details!;
    const sum = (key: string) => named('chat ').reduce((n, s) => n + (s.attributes[key] as number), 0);
    expect(sum('gen_ai.usage.input_tokens')).toBe(totals.prompt_tokens);
    expect(sum('gen_ai.usage.output_tokens')).toBe(totals.completion_tokens);

    // The coordinator's first turn read the plan; the strategist asked for its notes, whose link leads nowhere.
    const tools = named('execute_tool ');
    const read = tools.find((t) => t.attributes['maestro.path'] === 'examples/migration-plan.md')!;
    expect(read).toMatchObject({ name: 'execute_tool READ_FILE', kind: 1, status: { code: 0 } });
    expect(read.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'READ_FILE',
      'maestro.reason_code': 'KNOWLEDGE_PROVIDED',
    });
    const asker = agents.find((a) => a.spanId === read.parentSpanId)!;
    expect(asker.attributes).toMatchObject({ 'gen_ai.agent.name': 'coordinator', 'maestro.step.kind': 'turn', 'maestro.round': 1 });
    const missing = tools.find((t) => t.attributes['maestro.reason_code'] === 'KNOWLEDGE_NOT_FOUND')!;
    expect(missing.status.code).toBe(2);
    expect(missing.attributes['error.type']).toBe('KNOWLEDGE_NOT_FOUND');

    // Content is off by default: no messages, and no text of the task or its input anywhere.
    const everything = JSON.stringify(otel.receiver.spans);
    expect(everything).not.toContain('gen_ai.input.messages');
    expect(everything).not.toContain('gen_ai.output.messages');
    expect(everything).not.toContain('Assess the migration plan');
    expect(everything).not.toContain('billing reports');
  });

  it('shows a pause (via OTEL_EXPORTER_OTLP_ENDPOINT), and its continuation later joins the same trace', async () => {
    await write('ambiguous.json', {
      task_description: 'The requirements are unclear: choose the message queue for billing',
      config: { max_rounds: 1 },
    });
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: otel.receiver.endpoint, OTEL_SERVICE_NAME: 'council-ci' };
    const paused = await maestro(['run', 'ambiguous.json', '--json'], env);
    expect(paused.code).toBe(3);
    const p = JSON.parse(paused.stdout) as { run_id: string };
    const [first] = named('invoke_workflow');
    expect(first!.resource['service.name']).toBe('council-ci');
    expect(first!.attributes).toMatchObject({
      'maestro.run.entry': 'COMMAND_RECEIVED',
      'maestro.run.status': 'paused',
      'maestro.pause.id': `${p.run_id}-p1`,
      'maestro.pause.class': 'judgement',
      'maestro.pause.layer': 'arbitration',
      'maestro.pause.reason_code': 'ARBITRATION_INVESTIGATE',
      'maestro.arbitration.final_action': 'investigate',
      'maestro.arbitration.decision': 'PAUSE_FOR_HITL',
      'maestro.decision': 'PAUSE_FOR_HITL',
    });
    expect(first!.events.map((e) => e.name)).toContain('maestro.hitl_requested');
    expect(first!.status.code).toBe(0);

    const cont = await maestro(['hitl', 'decide', p.run_id, 'continue', '--run', '--json'], env);
    expect(cont.code).toBe(0);
    const workflows = named('invoke_workflow');
    expect(workflows.map((w) => w.attributes['maestro.run.entry'])).toEqual(['COMMAND_RECEIVED', 'HITL_DECIDED', 'RUN_RESUMED']);
    expect(workflows.every((w) => w.traceId === first!.traceId)).toBe(true);
    expect(workflows[1]!.attributes).toMatchObject({
      'maestro.hitl.decision': 'continue',
      'maestro.hitl.pause_id': `${p.run_id}-p1`,
      'maestro.hitl.paused_reason': 'ARBITRATION_INVESTIGATE',
    });
    expect(workflows[1]!.events[0]!.attributes['maestro.final_decider']).toBe('USER');
    const second = workflows[2]!;
    expect(second.attributes).toMatchObject({
      'maestro.run.status': 'completed',
      'maestro.arbitration.reason_code': 'ARBITRATION_CLEARED_BY_PERSON',
    });
    expect(second.startMs).toBeGreaterThanOrEqual(first!.endMs);
  });

  it('shows a sealed stop at a gate, with no agent span and nothing of the personal data', async () => {
    await write('maestro.config.json', { telemetry: { otlp_endpoint: `${otel.receiver.endpoint}/v1/traces` } });
    await write('pii.json', { task_description: 'Draft a reply to jane.doe@example.com about the refund' });
    const r = await maestro(['run', 'pii.json', '--json']);
    expect(r.code).toBe(4);
    const [workflow] = named('invoke_workflow');
    expect(workflow!.attributes).toMatchObject({
      'maestro.run.status': 'stopped',
      'maestro.gate.decision': 'STOPPED',
      'maestro.gate.layer': 'ethics',
      'maestro.gate.reason_code': 'ETHICS_PII_DETECTED',
      'maestro.gate.sealed': true,
      'maestro.sealed': true,
    });
    expect(named('invoke_agent')).toEqual([]);
    expect(JSON.stringify(otel.receiver.spans)).not.toContain('jane.doe');
  });

  it('shows the steps of parallel mode as sibling agent spans, each with its own chat span of the measured length', async () => {
    await write('maestro.config.json', { telemetry: { otlp_endpoint: otel.receiver.endpoint } });
    await write('parallel.json', {
      task_description: 'Choose the message queue for billing',
      config: { mode: 'parallel', concurrency: 3 },
    });
    // Each offline call takes a moment, so the three assessments are in flight together.
    const r = await maestro(['run', 'parallel.json', '--json'], { MAESTRO_OFFLINE_DELAY_MS: '40' });
    expect(r.code).toBe(0);
    const assessments = named('invoke_agent ').filter((a) => a.attributes['maestro.step.kind'] === 'assessment');
    expect(assessments.map((a) => a.attributes['gen_ai.agent.name']).sort()).toEqual(['auditor', 'coordinator', 'strategist']);
    for (const agent of assessments) {
      expect(agent.parentSpanId).toBe(named('invoke_workflow')[0]!.spanId);
      const chats = childrenOf(agent);
      expect(chats.map((c) => [c.name, c.attributes['gen_ai.output.type']])).toEqual([['chat offline-rehearsal-v1', 'json']]);
      // Each call lasts what it measured (the offline model waited 40 ms), wherever the others were.
      expect(chats[0]!.endMs - chats[0]!.startMs).toBeGreaterThanOrEqual(40);
      expect(within(chats[0]!, agent)).toBe(true);
    }
  });

  it('a watcher sends the spans of every run it took before it stops: one trace per run, the invalid one an error', async () => {
    await write('maestro.config.json', { telemetry: { otlp_endpoint: otel.receiver.endpoint } });
    await write('commands/a.json', { task_description: 'Plan the rollback drill', config: { max_rounds: 1 } });
    const broken = path.join(otel.ws.dir, 'commands', 'b.json');
    await writeFile(broken, '{ "task_description": ');
    // Last written a minute ago: rejected at once, not after the 2 s a file being written is given.
    const old = new Date(Date.now() - 60_000);
    await utimes(broken, old, old);
    const r = await maestro(['watch', '--once', '--json']);
    expect(r.code).toBe(0);
    const workflows = named('invoke_workflow');
    expect(workflows).toHaveLength(2);
    expect(new Set(workflows.map((w) => w.traceId)).size).toBe(2);
    const completed = workflows.find((w) => w.attributes['maestro.run.status'] === 'completed')!;
    expect(named('invoke_agent').every((a) => a.traceId === completed.traceId && a.parentSpanId === completed.spanId)).toBe(true);
    const invalid = workflows.find((w) => w !== completed)!;
    expect(invalid.attributes).toMatchObject({ 'maestro.run.status': 'invalid', 'error.type': 'SPEC_INVALID_INPUT' });
    expect(invalid.status.code).toBe(2);
    expect(invalid.events.map((e) => e.name)).toEqual(['maestro.command_received', 'maestro.command_invalid']);
  });

  it('sends nothing when OTEL_SDK_DISABLED=true, even with an endpoint', async () => {
    const r = await maestro(['run', 'examples/review-migration.json'], {
      OTEL_EXPORTER_OTLP_ENDPOINT: otel.receiver.endpoint,
      OTEL_SDK_DISABLED: 'true',
    });
    expect(r.code).toBe(0);
    expect(otel.receiver.requests).toEqual([]);
  });

  it('says once, and goes on, when the collector is not there', async () => {
    const gone = otel.receiver.endpoint;
    await otel.receiver.close();
    otel.receiver = await startOtlpReceiver(); // closed after the test, as the first one would have been
    // A token in the endpoint's query is never printed with it.
    const r = await maestro(['run', 'examples/review-migration.json', '--json'], {
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${gone}/v1/traces?token=q3V0Xz9kLmN4pR7s`,
    });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ status: 'completed' });
    expect(r.stderr.match(/traces could not be sent/g)).toHaveLength(1);
    expect(r.stderr).toContain('ECONNREFUSED'); // refused at once: no retries with backoff hold up the end
    expect(r.stderr).toContain('/v1/traces?…');
    expect(r.stderr).not.toContain('q3V0Xz9kLmN4pR7s');
  });

  it('refuses an endpoint with a user or password before any run, never printing the password (env and config)', async () => {
    const viaEnv = await maestro(['run', 'examples/review-migration.json', '--json'], {
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://alice:S3cretPassw0rd@127.0.0.1:1',
    });
    expect(viaEnv.code).toBe(2);
    expect(JSON.parse(viaEnv.stdout)).toMatchObject({ status: 'invalid' });
    expect(viaEnv.stdout + viaEnv.stderr).not.toContain('S3cretPassw0rd');
    expect(viaEnv.stderr).toContain('OTEL_EXPORTER_OTLP_ENDPOINT');
    expect(viaEnv.stderr).toContain('OTEL_EXPORTER_OTLP_HEADERS');
    await write('maestro.config.json', { telemetry: { otlp_endpoint: 'http://bob:Hunter2Secret@127.0.0.1:1' } });
    const viaConfig = await maestro(['run', 'examples/review-migration.json']);
    expect(viaConfig.code).toBe(2);
    expect(viaConfig.stdout + viaConfig.stderr).not.toContain('Hunter2Secret');
    expect(viaConfig.stdout + viaConfig.stderr).toContain('telemetry.otlp_endpoint');
    expect(viaConfig.stdout + viaConfig.stderr).toContain('OTEL_EXPORTER_OTLP_HEADERS');
    expect(otel.receiver.requests).toEqual([]);
  });

  it('gives up the last spans at the end when the collector takes them and never answers, and says so once', async () => {
    const silent = createServer(() => undefined); // accepts connections, never answers
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = silent.address() as AddressInfo;
      const r = await maestro(['run', 'examples/review-migration.json', '--json'], {
        OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
      });
      expect(r.code).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ status: 'completed' });
      expect(r.stderr.match(/traces could not be sent/g)).toHaveLength(1);
      expect(r.stderr).toContain('no answer within 300 ms at the end');
    } finally {
      silent.closeAllConnections?.();
      await new Promise((resolve) => silent.close(resolve));
    }
  });
});

describe('message content in traces (telemetry.capture_content), wired from the engine', () => {
  it('is absent by default; when asked for, every chat span carries the step prompt and reply, redacted', async () => {
    await write('maestro.config.json', { telemetry: { otlp_endpoint: otel.receiver.endpoint } });
    expect((await maestro(['run', 'examples/review-migration.json'])).code).toBe(0);
    expect(named('chat ').some((s) => 'gen_ai.input.messages' in s.attributes)).toBe(false);

    otel.receiver.spans.splice(0);
    await write('maestro.config.json', { telemetry: { otlp_endpoint: otel.receiver.endpoint, capture_content: true } });
    const r = await maestro(['run', 'examples/review-migration.json', '--json']);
    expect(r.code).toBe(0);
    const chats = named('chat ');
    expect(chats.length).toBeGreaterThan(0);
    for (const chat of chats) {
      const input = JSON.parse(String(chat.attributes['gen_ai.input.messages'])) as { role: string; parts: { content: string }[] }[];
      const output = JSON.parse(String(chat.attributes['gen_ai.output.messages'])) as { role: string; parts: { content: string }[] }[];
      expect(input[0]?.role).toBe('user');
      expect(output[0]?.parts[0]?.content.length).toBeGreaterThan(0);
    }
    // The first speaker's prompt is the briefing with the task.
    expect(String(chats[0]!.attributes['gen_ai.input.messages'])).toContain('TASK');
  });
});
