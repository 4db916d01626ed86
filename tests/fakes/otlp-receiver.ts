import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach } from 'vitest';
import { tempWorkspace } from './fixtures.js';

/** One span as an OTLP/HTTP receiver got it, decoded from the JSON encoding into plain values. */
export interface ReceivedSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string | undefined;
  readonly name: string;
  /** OTLP's numbering: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  readonly kind: number;
  readonly startMs: number;
  readonly endMs: number;
  readonly attributes: Record<string, unknown>;
  readonly events: { name: string; timeMs: number; attributes: Record<string, unknown> }[];
  readonly status: { code: number; message?: string };
  readonly resource: Record<string, unknown>;
}

export interface OtlpReceiver {
  /** The base endpoint, as `OTEL_EXPORTER_OTLP_ENDPOINT` or `telemetry.otlp_endpoint` takes it. */
  readonly endpoint: string;
  readonly spans: ReceivedSpan[];
  /** Every request as it came: method, path, content type and headers. */
  readonly requests: { method: string; path: string; contentType: string; headers: IncomingMessage['headers'] }[];
  close(): Promise<void>;
}

/**
 * A real OTLP/HTTP traces receiver on 127.0.0.1 (what an OpenTelemetry collector or Jaeger listens
 * with on port 4318): `POST /v1/traces` with a JSON `ExportTraceServiceRequest` is decoded and kept;
 * anything else gets 404 (or 415 for a body that is not JSON).
 */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const requests: OtlpReceiver['requests'] = [];
  const server = createServer((req, res) => void handle(req, res));
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const contentType = req.headers['content-type'] ?? '';
    requests.push({ method: req.method ?? '', path: req.url ?? '', contentType, headers: req.headers });
    if (req.method !== 'POST' || req.url !== '/v1/traces') {
      res.writeHead(404).end();
      return;
    }
    if (!contentType.startsWith('application/json')) {
      res.writeHead(415).end();
      return;
    }
    spans.push(...decodeTraces(JSON.parse(Buffer.concat(chunks).toString('utf8'))));
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  };
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans,
    requests,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

interface OtlpValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: number | string;
  doubleValue?: number;
  arrayValue?: { values?: OtlpValue[] };
  kvlistValue?: { values?: OtlpKeyValue[] };
}
interface OtlpKeyValue {
  key: string;
  value: OtlpValue;
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string | number;
  endTimeUnixNano: string | number;
  attributes?: OtlpKeyValue[];
  events?: { name: string; timeUnixNano: string | number; attributes?: OtlpKeyValue[] }[];
  status?: { code?: number; message?: string };
}
interface OtlpRequest {
  resourceSpans?: { resource?: { attributes?: OtlpKeyValue[] }; scopeSpans?: { spans?: OtlpSpan[] }[] }[];
}

function decodeTraces(body: OtlpRequest): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const rs of body.resourceSpans ?? []) {
    const resource = attributesOf(rs.resource?.attributes);
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        out.push({
          traceId: s.traceId,
          spanId: s.spanId,
          parentSpanId: s.parentSpanId || undefined,
          name: s.name,
          kind: s.kind,
          startMs: Number(BigInt(s.startTimeUnixNano) / 1_000_000n),
          endMs: Number(BigInt(s.endTimeUnixNano) / 1_000_000n),
          attributes: attributesOf(s.attributes),
          events: (s.events ?? []).map((e) => ({
            name: e.name,
            timeMs: Number(BigInt(e.timeUnixNano) / 1_000_000n),
            attributes: attributesOf(e.attributes),
          })),
          status: { code: s.status?.code ?? 0, ...(s.status?.message ? { message: s.status.message } : {}) },
          resource,
        });
      }
    }
  }
  return out;
}

function attributesOf(list: OtlpKeyValue[] | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map((kv) => [kv.key, valueOf(kv.value)]));
}

function valueOf(v: OtlpValue): unknown {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.arrayValue) return (v.arrayValue.values ?? []).map(valueOf);
  if (v.kvlistValue) return attributesOf(v.kvlistValue.values);
  return undefined;
}

/** A temporary workspace and an OTLP receiver for each test of the calling file, both torn down after it. */
export function withOtlpWorkspace(): { readonly ws: Awaited<ReturnType<typeof tempWorkspace>>; receiver: OtlpReceiver } {
  const current = {} as { ws: Awaited<ReturnType<typeof tempWorkspace>>; receiver: OtlpReceiver };
  beforeEach(async () => {
    current.ws = await tempWorkspace();
    current.receiver = await startOtlpReceiver();
  });
  afterEach(async () => {
    await current.receiver.close();
    await current.ws.cleanup();
  });
  return current;
}
