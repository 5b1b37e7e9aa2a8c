import { z } from 'zod';

/** A tool call the scripted model makes. */
export interface ScriptedToolCall {
  /** The tool's name. */
  name: string;
  /** The tool's input: an object, or a string sent verbatim (to test invalid JSON, say). */
  arguments: Record<string, unknown> | string;
  /** The tool call id. @default `call_<user messages>_<turn>_<index>`, unique within a conversation */
  id?: string;
}

/** An HTTP error the scripted model answers with instead of a completion. */
export interface ScriptedError {
  /** The HTTP status, e.g. 429 or 500. */
  status: number;
  /** The error message (`error.message` in OpenAI's error JSON). */
  message: string;
  /** The error's `type`. @default by status, in the wire's own words (OpenAI's `rate_limit_error`, Anthropic's `overloaded_error`, ...) */
  type?: string;
  /** Sent as the `retry-after` header: seconds, or an HTTP date. */
  retry_after?: number | string;
  /** Sent as the `retry-after-ms` header. */
  retry_after_ms?: number;
}

/**
 * A broken provider, for testing timeouts and retries. `hang` accepts the request and never
 * answers; `reset` drops the connection. With `after_chars`, a streamed reply first sends that
 * many characters of text (0: the stream starts, with no text yet), then hangs (a stall) or drops
 * the connection mid-stream; an unstreamed reply ignores it.
 */
export interface ScriptedFault {
  type: 'hang' | 'reset';
  /** Characters of streamed text to send before the fault. @default the fault comes before any response */
  after_chars?: number;
}

/**
 * Token counts reported for a turn. `input_tokens` counts all input, cached or not, as OpenAI
 * reports it; the Anthropic wire reports `input_tokens` minus both cache counts, as Anthropic does.
 */
export interface ScriptedUsage {
  /** All input tokens: the prompt tokens. */
  input_tokens: number;
  /** Output tokens: the completion tokens. */
  output_tokens: number;
  /** Of `input_tokens`, those read from the prompt cache (`cached_tokens` on OpenAI's wires). @default 0 */
  cache_read_input_tokens?: number;
  /** Of `input_tokens`, those written to the prompt cache (Anthropic's wire only). @default 0 */
  cache_creation_input_tokens?: number;
}

/** One reply of the scripted model. */
export interface ScriptedTurn {
  /** The reply's text; `{{task}}` is replaced by the conversation's first user message. */
  text?: string;
  /** Tool calls, in order; several per turn work. */
  tool_calls?: ScriptedToolCall[];
  /** Milliseconds to wait before the response starts. @default 0 */
  delay_ms?: number;
  /** Characters per streamed text or tool-argument delta. @default 20 */
  chunk_size?: number;
  /** Milliseconds to wait between streamed deltas. @default 0 */
  chunk_delay_ms?: number;
  /** Answer with this HTTP error instead (after `delay_ms`). The server replaces `{{authorization}}` in its message with the request's `Authorization` header, like a provider echoing it. */
  error?: ScriptedError;
  /** Misbehave instead of answering (after `delay_ms`). */
  fault?: ScriptedFault;
  /** Token counts. @default estimated as characters / 4 of the request and of the reply */
  usage?: ScriptedUsage;
  /**
   * OpenAI's `finish_reason`. @default `tool_calls` when the turn calls tools, else `stop`. The other
   * wires translate `stop`, `tool_calls` and `length` (Anthropic's `end_turn`, `tool_use`,
   * `max_tokens`; an `incomplete` response on the Responses wire) and pass any other value through.
   */
  finish_reason?: string;
}

/** Conditions a request must meet for a rule to answer it; all given ones must hold. */
export interface ScriptMatch {
  /** A substring of the system message(s). */
  system_includes?: string;
  /** A substring of the conversation's first user message. */
  user_includes?: string;
  /** A substring of the request's last user message. */
  last_user_includes?: string;
  /** The name of a tool the request offers. */
  has_tool?: string;
}

/** A rule: which conversations it answers, and its replies by turn. */
export interface ScriptRule {
  /** Conditions; a rule without them answers every request, so put it last as a fallback. */
  when?: ScriptMatch;
  /** `turns[i]` answers the request with i assistant messages after the last user message. */
  turns: ScriptedTurn[];
  /** The reply once `turns` is used up. @default the text `(script has no more turns)` */
  after?: ScriptedTurn;
}

/** A script: rules tried in order; the first whose `when` matches answers. */
export type Script = ScriptRule[];

/** A message of a request, in the shape of OpenAI's Chat Completions. */
export interface ScriptedMessage {
  /** System messages are not here but in {@link ScriptedRequest.system}. */
  role: 'user' | 'assistant' | 'tool';
  /** Text content; parts of a multi-part message are joined with new lines. */
  content: string;
  /** Tool calls of an assistant message, with JSON-encoded arguments. */
  tool_calls?: Array<{ id: string; name: string; arguments: string }>;
  /** The call a tool message answers. */
  tool_call_id?: string;
}

/** The HTTP APIs the scripted server speaks, each on its own path under `/v1`. */
export type ScriptedWire = 'chat-completions' | 'messages' | 'responses';

/** A request as the scripted model sees it. */
export interface ScriptedRequest {
  /** The API the request came on; absent for the in-process model. */
  wire?: ScriptedWire;
  /** The model id the client asked for. */
  model: string;
  /** The system message(s), joined with blank lines. */
  system: string;
  /** The messages other than system ones, in order. */
  messages: ScriptedMessage[];
  /** Names of the tools offered. */
  tools: string[];
  /** Whether the client asked for a streamed response. */
  stream: boolean;
  /** The number of assistant messages after the last user message. */
  turn: number;
}

/** A script as code: decides each reply from the request. */
export type RespondFunction = (request: ScriptedRequest) => ScriptedTurn | Promise<ScriptedTurn>;

const nonNegativeInteger = z.number().int().nonnegative();

const turnSchema = z.strictObject({
  text: z.string().optional(),
  tool_calls: z
    .array(
      z.strictObject({
        name: z.string().min(1),
        arguments: z.union([z.record(z.string(), z.unknown()), z.string()]),
        id: z.string().min(1).optional(),
      }),
    )
    .optional(),
  delay_ms: nonNegativeInteger.optional(),
  chunk_size: z.number().int().positive().optional(),
  chunk_delay_ms: nonNegativeInteger.optional(),
  error: z
    .strictObject({
      status: z.number().int().min(400).max(599),
      message: z.string(),
      type: z.string().optional(),
      retry_after: z.union([nonNegativeInteger, z.string().min(1)]).optional(),
      retry_after_ms: nonNegativeInteger.optional(),
    })
    .optional(),
  fault: z.strictObject({ type: z.enum(['hang', 'reset']), after_chars: nonNegativeInteger.optional() }).optional(),
  usage: z
    .strictObject({
      input_tokens: nonNegativeInteger,
      output_tokens: nonNegativeInteger,
      cache_read_input_tokens: nonNegativeInteger.optional(),
      cache_creation_input_tokens: nonNegativeInteger.optional(),
    })
    .refine((usage) => (usage.cache_read_input_tokens ?? 0) + (usage.cache_creation_input_tokens ?? 0) <= usage.input_tokens, {
      message: 'cache_read_input_tokens and cache_creation_input_tokens are parts of input_tokens, so together at most input_tokens',
    })
    .optional(),
  finish_reason: z.string().min(1).optional(),
});

const ruleSchema = z.strictObject({
  when: z
    .strictObject({
      system_includes: z.string().optional(),
      user_includes: z.string().optional(),
      last_user_includes: z.string().optional(),
      has_tool: z.string().optional(),
    })
    .optional(),
  turns: z.array(turnSchema),
  after: turnSchema.optional(),
});

/**
 * The zod schema of a script: a list of rules, or `{ rules: [...] }` (handy as a YAML document).
 * Unknown keys are rejected so a misspelt condition fails loudly instead of matching everything.
 */
export const scriptSchema = z.preprocess(
  // Unwrapping before validating, rather than a union, keeps errors pointing at the offending field.
  (value) => (isRulesDocument(value) ? value.rules : value),
  z.array(ruleSchema),
);

function isRulesDocument(value: unknown): value is { rules: unknown } {
  return typeof value === 'object' && value !== null && Object.keys(value).length === 1 && 'rules' in value;
}

// Fails to compile if the schema and the documented interfaces drift apart.
const schemaMatchesTypes: z.infer<typeof scriptSchema> extends Script ? true : false = true;
void schemaMatchesTypes;

/**
 * Validates a script given as data, e.g. parsed from JSON.
 * @throws {z.ZodError} naming the offending field
 */
export function parseScript(value: unknown): Script {
  return scriptSchema.parse(value);
}
