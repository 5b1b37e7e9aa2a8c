import { z } from 'zod';
import { countTurn } from './conversation.ts';
import type { ScriptedMessage } from './script.ts';
import type { ScriptedReply } from './scripted-responder.ts';
import { splitIntoChunks } from './split-into-chunks.ts';
import { argumentsValue, type WireEvent, type WireFormat, type WireRequest } from './wire-format.ts';

const blockSchema = z.looseObject({ type: z.string() });
const contentSchema = z.union([z.string(), z.array(blockSchema)]);

const requestSchema = z.looseObject({
  model: z.string().default(''),
  system: contentSchema.nullish(),
  messages: z.array(z.looseObject({ role: z.string(), content: contentSchema })),
  tools: z.array(z.looseObject({ name: z.string().optional(), type: z.string().optional() })).nullish(),
  stream: z.boolean().nullish(),
});

type Block = z.infer<typeof blockSchema>;

function textOf(content: string | Block[] | null | undefined, separator: string): string {
  if (content == null) return '';
  if (typeof content === 'string') return content;
  return content.flatMap((block) => (block.type === 'text' && typeof block.text === 'string' ? [block.text] : [])).join(separator);
}

/**
 * Reads a Messages request body. A user message's `tool_result` blocks become tool messages, and
 * its text a user message after them, so the turns count as on Chat Completions; `system` (the
 * field, or a message with that role) is the system text.
 * @throws {z.ZodError} when the body is not a Messages request
 */
function parseMessagesRequest(body: unknown): WireRequest {
  const parsed = requestSchema.parse(body);
  const system = parsed.system == null ? [] : [textOf(parsed.system, '\n')];
  const messages: ScriptedMessage[] = [];
  for (const message of parsed.messages) {
    const blocks: Block[] = typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
    if (message.role === 'system') {
      system.push(textOf(blocks, '\n'));
    } else if (message.role === 'assistant') {
      const scripted: ScriptedMessage = { role: 'assistant', content: textOf(blocks, '') };
      const calls = blocks.filter((block) => block.type === 'tool_use');
      if (calls.length > 0) {
        scripted.tool_calls = calls.map((block) => ({
          id: String(block.id ?? ''),
          name: String(block.name ?? ''),
          arguments: JSON.stringify(block.input ?? {}),
        }));
      }
      messages.push(scripted);
    } else {
      for (const block of blocks) {
        if (block.type !== 'tool_result') continue;
        const content = block.content as string | Block[] | undefined;
        messages.push({ role: 'tool', content: textOf(content, '\n'), tool_call_id: String(block.tool_use_id ?? '') });
      }
      const hasText = blocks.some((block) => block.type === 'text');
      if (hasText || blocks.every((block) => block.type !== 'tool_result')) messages.push({ role: 'user', content: textOf(blocks, '\n') });
    }
  }
  const stream = parsed.stream === true;
  return {
    request: {
      wire: 'messages',
      model: parsed.model,
      system: system.join('\n\n'),
      messages,
      tools: (parsed.tools ?? []).flatMap((tool) => {
        const name = tool.name ?? tool.type;
        return name === undefined ? [] : [name];
      }),
      stream,
      turn: countTurn(messages.length, (index) => messages[index].role),
    },
    includeUsage: true,
  };
}

/** Anthropic's error type for an HTTP status. */
function anthropicErrorType(status: number): string {
  const byStatus: Record<number, string> = {
    401: 'authentication_error',
    403: 'permission_error',
    404: 'not_found_error',
    413: 'request_too_large',
    429: 'rate_limit_error',
    529: 'overloaded_error',
  };
  return byStatus[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error');
}

function stopReason(finishReason: string): string {
  const reasons: Record<string, string> = { stop: 'end_turn', tool_calls: 'tool_use', length: 'max_tokens' };
  return reasons[finishReason] ?? finishReason;
}

/** Anthropic reports input tokens without the cached ones, and each cache count beside them. */
function inputUsage(reply: ScriptedReply): object {
  return {
    input_tokens: reply.inputTokens - reply.cacheReadTokens - reply.cacheWriteTokens,
    cache_creation_input_tokens: reply.cacheWriteTokens,
    cache_read_input_tokens: reply.cacheReadTokens,
  };
}

function messageBody(reply: ScriptedReply, sequence: number, model: string): object {
  const content: object[] = [];
  if (reply.text.length > 0) content.push({ type: 'text', text: reply.text });
  for (const call of reply.toolCalls) content.push({ type: 'tool_use', id: call.id, name: call.name, input: argumentsValue(call.arguments) });
  return {
    id: `msg_scripted_${sequence}`,
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: stopReason(reply.finishReason),
    stop_sequence: null,
    usage: { ...inputUsage(reply), output_tokens: reply.outputTokens },
  };
}

function streamEvents(reply: ScriptedReply, sequence: number, model: string): WireEvent[] {
  const event = (type: string, data: object, characters = 0, isDelta = false): WireEvent => ({
    event: type,
    data: { type, ...data },
    isDelta,
    characters,
  });
  const message = { ...messageBody(reply, sequence, model), content: [], stop_reason: null, usage: { ...inputUsage(reply), output_tokens: 0 } };
  const events = [event('message_start', { message }), event('ping', {})];
  let index = 0;
  if (reply.text.length > 0) {
    events.push(event('content_block_start', { index, content_block: { type: 'text', text: '' } }));
    for (const text of splitIntoChunks(reply.text, reply.chunkSize)) {
      events.push(event('content_block_delta', { index, delta: { type: 'text_delta', text } }, text.length, true));
    }
    events.push(event('content_block_stop', { index }));
    index++;
  }
  for (const call of reply.toolCalls) {
    events.push(event('content_block_start', { index, content_block: { type: 'tool_use', id: call.id, name: call.name, input: {} } }));
    for (const partial_json of splitIntoChunks(call.arguments, reply.chunkSize)) {
      events.push(event('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json } }, 0, true));
    }
    events.push(event('content_block_stop', { index }));
    index++;
  }
  events.push(
    event('message_delta', { delta: { stop_reason: stopReason(reply.finishReason), stop_sequence: null }, usage: { output_tokens: reply.outputTokens } }),
    event('message_stop', {}),
  );
  return events;
}

/** Anthropic's Messages API, `POST /v1/messages`; usage is always reported, with both cache counts. */
export const anthropicMessagesWire: WireFormat = {
  wire: 'messages',
  parse: parseMessagesRequest,
  errorBody: (message, type, status) => ({ type: 'error', error: { type: type ?? anthropicErrorType(status), message } }),
  responseBody: (reply, sequence, { request }) => messageBody(reply, sequence, request.model),
  streamEvents: (reply, sequence, { request }) => streamEvents(reply, sequence, request.model),
  streamEnd: '',
};

/** A rough count for `POST /v1/messages/count_tokens`: characters / 4, as the scripted usage estimates. */
export function countTokensBody(body: unknown): object {
  const { request } = parseMessagesRequest(body);
  const characters = request.messages.reduce((total, message) => total + message.content.length, request.system.length);
  return { input_tokens: Math.ceil(characters / 4) };
}
