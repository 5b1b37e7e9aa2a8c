import { ConfigError } from '../errors/config-error.ts';

/** The `telemetry` key of the configuration and of {@link createCadre}'s `tracing` option. */
export interface TelemetrySettings {
  /**
   * Whether traces go out. @default on when `endpoint` or `OTEL_EXPORTER_OTLP_ENDPOINT` (or
   * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is set, unless `OTEL_SDK_DISABLED=true`
   */
  enabled?: boolean;
  /**
   * The collector's OTLP/HTTP base URL (`/v1/traces` is added), like `http://localhost:4318`.
   * @default `OTEL_EXPORTER_OTLP_ENDPOINT`, else http://localhost:4318
   */
  endpoint?: string;
  /** The OTLP encoding. @default `OTEL_EXPORTER_OTLP_PROTOCOL`, else 'http/protobuf' */
  protocol?: TelemetryProtocol;
  /**
   * Record message contents, tool inputs and outputs on the spans (always redacted). @default false
   */
  recordContent?: boolean;
}

/** The OTLP encodings cadre can send. */
export type TelemetryProtocol = 'http/json' | 'http/protobuf';

/** Where and how traces go, once telemetry is on. */
export interface ResolvedTelemetry {
  /** The full traces URL (ending in `/v1/traces` unless a traces endpoint was given as is). */
  url: string;
  protocol: TelemetryProtocol;
  recordContent: boolean;
  /** `OTEL_SERVICE_NAME`, else `cadre`. */
  serviceName: string;
}

const protocols: readonly TelemetryProtocol[] = ['http/json', 'http/protobuf'];

/**
 * Telemetry's settings from the configuration and the standard OpenTelemetry environment
 * variables, or null when it is off (then no OpenTelemetry package is loaded at all).
 * @throws {ConfigError} for a protocol other than `http/json` or `http/protobuf`.
 */
export function resolveTelemetry(settings: TelemetrySettings | undefined, env: Record<string, string | undefined> = process.env): ResolvedTelemetry | null {
  if (settings?.enabled === false || env.OTEL_SDK_DISABLED?.toLowerCase() === 'true') return null;
  const tracesEndpoint = given(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
  const baseEndpoint = given(settings?.endpoint) ?? given(env.OTEL_EXPORTER_OTLP_ENDPOINT);
  if (settings?.enabled !== true && tracesEndpoint === undefined && baseEndpoint === undefined) return null;
  const protocol = settings?.protocol ?? given(env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL) ?? given(env.OTEL_EXPORTER_OTLP_PROTOCOL) ?? 'http/protobuf';
  if (!protocols.includes(protocol as TelemetryProtocol)) {
    throw new ConfigError(`The telemetry protocol must be ${protocols.join(' or ')}, not '${protocol}' (gRPC is not supported).`);
  }
  const url = settings?.endpoint === undefined && tracesEndpoint !== undefined ? tracesEndpoint : tracesUrl(baseEndpoint ?? 'http://localhost:4318');
  return {
    url,
    protocol: protocol as TelemetryProtocol,
    recordContent: settings?.recordContent === true,
    serviceName: given(env.OTEL_SERVICE_NAME) ?? 'cadre',
  };
}

/** A base OTLP/HTTP endpoint's traces URL, as the OpenTelemetry specification builds it. */
function tracesUrl(base: string): string {
  if (/\/v1\/traces\/?$/.test(base)) return base;
  return `${base.replace(/\/+$/, '')}/v1/traces`;
}

function given(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}
