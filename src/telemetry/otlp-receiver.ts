import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One span as an OTLP/JSON export carries it, its attributes flattened (for tests). */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  attributes: Record<string, unknown>;
  links: Array<{ traceId: string; spanId: string }>;
  status: { code?: number; message?: string } | undefined;
  /** The span's events, with their attributes. */
  events: Array<{ name: string; attributes: Record<string, unknown> }>;
}

/** A tiny OTLP/HTTP collector on 127.0.0.1 that keeps what it is sent to `/v1/traces` (for tests). */
export interface OtlpReceiver {
  /** The base endpoint, as `OTEL_EXPORTER_OTLP_ENDPOINT` takes it. */
  endpoint: string;
  /** Spans of every JSON export so far. */
  spans: ReceivedSpan[];
  /** Each request's content type and raw body (JSON or protobuf). */
  requests: Array<{ path: string; contentType: string; body: Buffer }>;
  close(): Promise<void>;
}

/** Starts an {@link OtlpReceiver} on a free port. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const requests: OtlpReceiver['requests'] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks);
      const contentType = request.headers['content-type'] ?? '';
      requests.push({ path: request.url ?? '', contentType, body });
      if (request.url !== '/v1/traces') {
        response.writeHead(404).end();
        return;
      }
      if (contentType.includes('json')) spans.push(...spansOf(JSON.parse(body.toString('utf8'))));
      response.writeHead(200, { 'content-type': contentType.includes('json') ? 'application/json' : 'application/x-protobuf' });
      response.end(contentType.includes('json') ? '{}' : undefined);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

interface JsonValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
  arrayValue?: { values?: JsonValue[] };
}

function attributeValue(value: JsonValue): unknown {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.arrayValue) return (value.arrayValue.values ?? []).map(attributeValue);
  return undefined;
}

function spansOf(body: { resourceSpans?: Array<{ scopeSpans?: Array<{ spans?: any[] }> }> }): ReceivedSpan[] {
  const spans: ReceivedSpan[] = [];
  for (const resource of body.resourceSpans ?? []) {
    for (const scope of resource.scopeSpans ?? []) {
      for (const span of scope.spans ?? []) {
        spans.push({
          traceId: span.traceId,
          spanId: span.spanId,
          parentSpanId: span.parentSpanId || undefined,
          name: span.name,
          attributes: Object.fromEntries(
            (span.attributes ?? []).map((attribute: { key: string; value: JsonValue }) => [attribute.key, attributeValue(attribute.value)]),
          ),
          links: (span.links ?? []).map((link: { traceId: string; spanId: string }) => ({ traceId: link.traceId, spanId: link.spanId })),
          status: span.status,
          events: (span.events ?? []).map((event: { name: string; attributes?: Array<{ key: string; value: JsonValue }> }) => ({
            name: event.name,
            attributes: Object.fromEntries((event.attributes ?? []).map((attribute) => [attribute.key, attributeValue(attribute.value)])),
          })),
        });
      }
    }
  }
  return spans;
}
