import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { OtelRunTracer, type OtelRunTracerOptions } from '../../../src/adapters/otel/run-tracer.js';
import type { TracedRecord } from '../../../src/adapters/otel/tracing-audit-log.js';
import { defaultSensitiveScanner } from '../../../src/domain/audit-sanitizer.js';

const RUN = '20260101T000000Z-abc123';
const T0 = Date.parse('2026-01-01T00:00:00.000Z');

/** A record as the tracing audit log forwards it; `at` is milliseconds after T0. */
function rec(event: string, at: number, details: Record<string, unknown> = {}, decision: Partial<TracedRecord> = {}): TracedRecord {
  return {
    run_id: RUN,
    ts: new Date(T0 + at).toISOString(),
    event,
    layer: 'model',
    decision: 'RUN',
    reason_code: `${event}_OK`,
    sealed: false,
    overrideable: false,
    final_decider: 'SYSTEM',
    details,
    ...decision,
  };
}
const call = (at: number, persona: string, extra: Record<string, unknown> = {}) =>
  rec(
    'MODEL_CALL',
    at,
    {
      persona,
      kind: 'turn',
      round: 1,
      model: 'offline/offline-rehearsal-v1',
      duration_ms: 40,
      prompt_tokens: 100,
      completion_tokens: 20,
      ...extra,
    },
    { reason_code: 'MODEL_CALL_OK' },
  );

let exporter: InMemorySpanExporter;
let provider: BasicTracerProvider;
beforeEach(() => {
  exporter = new InMemorySpanExporter();
  provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  // The idle end of a paused run is a timer: fired by hand here.
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
});
afterEach(() => {
  vi.useRealTimers();
  return provider.shutdown();
});

const tracer = (options: Partial<OtelRunTracerOptions> = {}) =>
  new OtelRunTracer({
    tracer: provider.getTracer('test'),
    routes: new Map(),
    captureContent: false,
    scanner: defaultSensitiveScanner,
    ...options,
  });
const ended = () => exporter.getFinishedSpans();
const byName = (name: string) => ended().filter((s) => s.name === name);
const ms = (t: ReadableSpan['startTime']) => t[0] * 1000 + t[1] / 1e6 - T0;
const parentOf = (s: ReadableSpan) => s.parentSpanContext?.spanId;

describe('OtelRunTracer', () => {
  it('keeps a paused run open for the records that follow the pause, then ends it at its last record', () => {
    const t = tracer();
    t.onRecord(rec('COMMAND_RECEIVED', 0, {}, { layer: 'queue' }));
    t.onRecord(
      rec(
        'ARBITRATED',
        100,
        { final_action: 'investigate', strategy: 'majority_vote' },
        { layer: 'arbitration', decision: 'PAUSE_FOR_HITL', reason_code: 'ARBITRATION_INVESTIGATE' },
      ),
    );
    t.onRecord(
      rec(
        'HITL_REQUESTED',
        110,
        { pause_id: `${RUN}-p1`, pause_class: 'judgement' },
        { layer: 'arbitration', decision: 'PAUSE_FOR_HITL', reason_code: 'ARBITRATION_INVESTIGATE' },
      ),
    );
    // The loop policy asks the synthesizer for a plan after the pause: still this invocation.
    t.onRecord(call(500, 'coordinator', { kind: 'plan', duration_ms: undefined }));
    expect(byName('invoke_workflow maestro')).toEqual([]);
    expect(vi.getTimerCount()).toBe(1);

    vi.runAllTimers();
    const [workflow] = byName('invoke_workflow maestro');
    expect(ms(workflow!.startTime)).toBe(0);
    expect(ms(workflow!.endTime)).toBe(500);
    expect(workflow!.attributes).toMatchObject({
      'maestro.run.status': 'paused',
      'maestro.pause.reason_code': 'ARBITRATION_INVESTIGATE',
      'maestro.pause.id': `${RUN}-p1`,
      'maestro.arbitration.final_action': 'investigate',
    });
    const plan = byName('invoke_agent coordinator')[0]!;
    expect(parentOf(plan)).toBe(workflow!.spanContext().spanId);
    expect(plan.attributes['maestro.step.kind']).toBe('plan');
  });

  it('ends a run at its terminal record, and starts a new workflow span for a record that comes after', () => {
    const t = tracer();
    t.onRecord(rec('COMMAND_RECEIVED', 0));
    t.onRecord(rec('RUN_FINISHED', 50, { status: 'completed' }, { layer: 'dispatch', reason_code: 'RUN_COMPLETED' }));
    vi.runAllTimers();
    expect(byName('invoke_workflow maestro')).toHaveLength(1);
    t.onRecord(rec('HITL_DECIDED', 60, {}, { layer: 'hitl', final_decider: 'USER' }));
    t.endAll();
    const workflows = byName('invoke_workflow maestro');
    expect(workflows.map((w) => w.attributes['maestro.run.entry'])).toEqual(['COMMAND_RECEIVED', 'HITL_DECIDED']);
  });

  it('begins a new invocation on RUN_RESUMED, ending the one still open', () => {
    const t = tracer();
    t.onRecord(rec('COMMAND_RECEIVED', 0));
    t.onRecord(call(100, 'auditor'));
    t.onRecord(rec('RUN_RESUMED', 5000, {}, { layer: 'queue' }));
    const [first] = byName('invoke_workflow maestro');
    expect(ms(first!.endTime)).toBe(100);
    expect(byName('invoke_agent auditor')).toHaveLength(1);
    t.endAll();
    expect(byName('invoke_workflow maestro').map((w) => w.attributes['maestro.run.entry'])).toEqual(['COMMAND_RECEIVED', 'RUN_RESUMED']);
  });

  it('times a step from the records: agent from the previous record, chat for its duration, tools after it', () => {
    const t = tracer();
    t.onRecord(rec('GATE', 0, { skipped: false }, { layer: 'dispatch', reason_code: 'ORCH_RUN_OK' }));
    // A reroute is written during the call; it does not move the step's start.
    t.onRecord(
      rec(
        'REROUTE',
        30,
        { from_route: 'cloud', to_route: 'local', failure: 'timeout' },
        { layer: 'reroute', decision: 'REROUTE', reason_code: 'REROUTE_ALLOWED' },
      ),
    );
    t.onRecord(call(100, 'coordinator'));
    t.onRecord(
      rec(
        'KNOWLEDGE_REQUEST',
        104,
        { persona: 'coordinator', action: 'READ_FILE', status: 'provided', path: 'a.md' },
        { layer: 'knowledge', reason_code: 'KNOWLEDGE_PROVIDED' },
      ),
    );
    t.onRecord(
      rec(
        'KNOWLEDGE_REQUEST',
        107,
        { persona: 'coordinator', action: 'QUERY_CORTEX', status: 'refused' },
        { layer: 'knowledge', reason_code: 'KNOWLEDGE_PRIVILEGE_DENIED' },
      ),
    );
    t.onRecord(rec('ARBITRATED', 200, {}, { layer: 'arbitration' }));
    t.endAll();

    const agent = byName('invoke_agent coordinator')[0]!;
    const chat = byName('chat offline-rehearsal-v1')[0]!;
    const [read, query] = [byName('execute_tool READ_FILE')[0]!, byName('execute_tool QUERY_CORTEX')[0]!];
    expect([ms(agent.startTime), ms(agent.endTime)]).toEqual([0, 107]);
    expect([ms(chat.startTime), ms(chat.endTime)]).toEqual([60, 100]);
    expect([ms(read.startTime), ms(read.endTime), ms(query.startTime), ms(query.endTime)]).toEqual([100, 104, 104, 107]);
    for (const child of [chat, read, query]) expect(parentOf(child)).toBe(agent.spanContext().spanId);
    expect(query.status).toMatchObject({ code: 2, message: 'KNOWLEDGE_PRIVILEGE_DENIED' });
    expect(read.status.code).toBe(0);
    const workflow = byName('invoke_workflow maestro')[0]!;
    expect(workflow.attributes).toMatchObject({
      'maestro.reroute.count': 1,
      'maestro.reroute.from_route': 'cloud',
      'maestro.reroute.to_route': 'local',
    });
    expect(workflow.events.map((e) => e.name)).toEqual(['maestro.gate', 'maestro.reroute', 'maestro.arbitrated']);
  });

  it('keeps the steps of personas that speak at once apart: tools and content go to their own agent', () => {
    const t = tracer({ captureContent: true });
    t.onRecord(rec('COMMAND_RECEIVED', 0));
    t.onRecord(call(100, 'coordinator', { kind: 'assessment' }));
    t.onRecord(call(101, 'auditor', { kind: 'assessment' }));
    t.onRecord(rec('KNOWLEDGE_REQUEST', 102, { persona: 'coordinator', action: 'READ_FILE', status: 'provided' }, { layer: 'knowledge' }));
    t.onRecord(rec('KNOWLEDGE_REQUEST', 103, { persona: 'auditor', action: 'QUERY_CORTEX', status: 'provided' }, { layer: 'knowledge' }));
    t.recordStepContent({ runId: RUN, persona: 'coordinator', prompt: 'p', reply: 'from the coordinator' });
    t.onRecord(rec('ARBITRATED', 200, {}, { layer: 'arbitration' }));
    t.endAll();
    const agent = (persona: string) => byName(`invoke_agent ${persona}`)[0]!.spanContext().spanId;
    expect(parentOf(byName('execute_tool READ_FILE')[0]!)).toBe(agent('coordinator'));
    expect(parentOf(byName('execute_tool QUERY_CORTEX')[0]!)).toBe(agent('auditor'));
    const chats = byName('chat offline-rehearsal-v1');
    const withContent = chats.filter((c) => c.attributes['gen_ai.output.messages'] !== undefined);
    expect(withContent.map(parentOf)).toEqual([agent('coordinator')]);
    expect(chats.every((c) => c.attributes['gen_ai.output.type'] === 'json')).toBe(true);
  });

  it('places a call exactly when its record says when it started', () => {
    const t = tracer();
    t.onRecord(rec('COMMAND_RECEIVED', 0));
    t.onRecord(call(300, 'coordinator', { started_at: new Date(T0 + 20).toISOString(), duration_ms: 50 }));
    t.endAll();
    const chat = byName('chat offline-rehearsal-v1')[0]!;
    expect([ms(chat.startTime), ms(chat.endTime)]).toEqual([20, 70]);
    expect(ms(byName('invoke_agent coordinator')[0]!.startTime)).toBe(0);
  });

  it('names the provider and server of a configured route', () => {
    const t = tracer({ routes: new Map([['local', { provider: 'openai', serverAddress: '127.0.0.1', serverPort: 11434 }]]) });
    t.onRecord(rec('COMMAND_RECEIVED', 0));
    t.onRecord(call(10, 'strategist', { model: 'local/llama3.1:8b', kind: 'verdict' }));
    t.onRecord(
      rec('JSON_MODE_FALLBACK', 11, { persona: 'strategist', route: 'local', from: 'json_schema', to: 'json_object', status: 400 }),
    );
    t.endAll();
    const chat = byName('chat llama3.1:8b')[0]!;
    expect(chat.kind).toBe(2);
    expect(chat.attributes).toMatchObject({
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'llama3.1:8b',
      'server.address': '127.0.0.1',
      'server.port': 11434,
      'gen_ai.output.type': 'json',
      'maestro.route': 'local',
    });
    expect(chat.events.map((e) => e.name)).toEqual(['maestro.json_mode_fallback']);
  });

  describe('message content', () => {
    const content = {
      runId: RUN,
      persona: 'coordinator',
      prompt: 'Write to jane.doe@example.com',
      reply: 'I will ask jane.doe@example.com',
    };

    it('is never attached when capture is off', () => {
      const t = tracer();
      t.onRecord(call(10, 'coordinator'));
      t.recordStepContent(content);
      t.endAll();
      expect(Object.keys(byName('chat offline-rehearsal-v1')[0]!.attributes).filter((k) => k.includes('messages'))).toEqual([]);
    });

    it('goes on the chat span of that persona, after its MODEL_CALL record, redacted', () => {
      const t = tracer({ captureContent: true });
      t.onRecord(rec('COMMAND_RECEIVED', 0));
      t.onRecord(call(10, 'coordinator'));
      t.onRecord(call(20, 'strategist'));
      t.recordStepContent(content);
      t.recordStepContent({ ...content, persona: 'strategist', reply: 'after' });
      t.endAll();
      const [first, second] = byName('chat offline-rehearsal-v1');
      expect(first!.attributes['gen_ai.input.messages']).toBe(
        JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: 'Write to [REDACTED:EMAIL]' }] }]),
      );
      expect(first!.attributes['gen_ai.output.messages']).toBe(
        JSON.stringify([{ role: 'assistant', parts: [{ type: 'text', content: 'I will ask [REDACTED:EMAIL]' }], finish_reason: 'stop' }]),
      );
      expect(second!.attributes['gen_ai.output.messages']).toContain('"after"');
      expect(JSON.stringify(ended().map((s) => s.attributes))).not.toContain('jane.doe');
    });

    it('is dropped, not kept, when its run ends before a chat span takes it', () => {
      const t = tracer({ captureContent: true });
      t.onRecord(rec('COMMAND_RECEIVED', 0));
      t.recordStepContent({ ...content, persona: 'auditor' });
      t.onRecord(rec('RUN_FINISHED', 5, {}, { layer: 'dispatch' }));
      t.onRecord(rec('COMMAND_RECEIVED', 10));
      t.onRecord(call(20, 'auditor'));
      t.endAll();
      expect(byName('chat offline-rehearsal-v1')[0]!.attributes['gen_ai.input.messages']).toBeUndefined();
    });
  });
});
