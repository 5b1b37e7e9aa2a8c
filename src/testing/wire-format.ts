import type { ScriptedRequest, ScriptedWire } from './script.ts';
import type { ScriptedReply } from './scripted-responder.ts';

/** A request body read by a wire: the scripted request, and whether a stream ends with usage. */
export interface WireRequest {
  request: ScriptedRequest;
  /** Whether a streamed reply reports usage (Chat Completions only when asked). */
  includeUsage: boolean;
  /** The Responses wire's input items with references resolved, kept to answer a later `previous_response_id`. */
  items?: object[];
  /** The Responses wire's tools that a call must name specially: in a namespace, or custom (free-form input). */
  specialTools?: Map<string, { namespace?: string; custom: boolean }>;
}

/** One server-sent event of a streamed reply. */
export interface WireEvent {
  /** The SSE `event:` field, for wires that name their events. */
  event?: string;
  data: object;
  /** Deltas are the events `chunk_delay_ms` spaces out. */
  isDelta: boolean;
  /** Characters of reply text the event carries, for a fault's `after_chars`. */
  characters: number;
}

/**
 * One HTTP API of the scripted server: how it reads a request body into a {@link ScriptedRequest}
 * and writes a {@link ScriptedReply} back, in one body or as server-sent events.
 */
export interface WireFormat {
  wire: ScriptedWire;
  /**
   * Reads a request body.
   * @throws {Error} (a `z.ZodError` or a {@link WireInputError}) when the body is not a request of this wire
   */
  parse(body: unknown): WireRequest;
  /** The wire's error JSON; `type` is as scripted, or undefined for the wire's default for the status. */
  errorBody(message: string, type: string | undefined, status: number): object;
  /** The reply to a request in one body; `sequence` numbers the server's replies, for ids. */
  responseBody(reply: ScriptedReply, sequence: number, request: WireRequest): object;
  /** The reply to a request as events, in order. */
  streamEvents(reply: ScriptedReply, sequence: number, request: WireRequest): WireEvent[];
  /** Written after the last event, if anything (Chat Completions' `data: [DONE]`). */
  streamEnd: string;
}

/** A request body a wire understands but cannot answer, such as a reference to an unknown item. */
export class WireInputError extends Error {
  override readonly name = 'WireInputError';
}

/** The JSON an SSE event carries, `event:` line first when the wire names its events. */
export function formatEvent(event: WireEvent): string {
  const data = `data: ${JSON.stringify(event.data)}\n\n`;
  return event.event === undefined ? data : `event: ${event.event}\n${data}`;
}

/** Parses tool arguments for wires that send them as objects; a string that is not JSON stays a string. */
export function argumentsValue(encoded: string): unknown {
  try {
    return JSON.parse(encoded);
  } catch {
    return encoded;
  }
}
