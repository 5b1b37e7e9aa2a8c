import { z } from 'zod';
import { countTurn } from './conversation.ts';
import type { ScriptedMessage } from './script.ts';
import type { ScriptedReply } from './scripted-responder.ts';
import { splitIntoChunks } from './split-into-chunks.ts';
import type { WireEvent, WireFormat, WireRequest } from './wire-format.ts';

const contentSchema = z.union([z.string(), z.array(z.looseObject({ type: z.string(), text: z.string().optional() }))]).nullish();

const requestSchema = z.looseObject({
  model: z.string().default(''),
  messages: z.array(
    z.looseObject({
      role: z.string(),
      content: contentSchema,
      tool_calls: z.array(z.looseObject({ id: z.string(), function: z.looseObject({ name: z.string(), arguments: z.string() }) })).nullish(),
      tool_call_id: z.string().nullish(),
    }),
  ),
  tools: z.array(z.looseObject({ function: z.looseObject({ name: z.string() }).optional() })).nullish(),
  stream: z.boolean().nullish(),
  stream_options: z.looseObject({ include_usage: z.boolean().nullish() }).nullish(),
});

/**
 * Reads a Chat Completions request body.
 * @throws {z.ZodError} when the body is not a Chat Completions request
 */
function parseChatRequest(body: unknown): WireRequest {
  const parsed = requestSchema.parse(body);
  const system: string[] = [];
  const messages: ScriptedMessage[] = [];
  for (const message of parsed.messages) {
    const content = textOf(message.content);
    if (message.role === 'system' || message.role === 'developer') {
      system.push(content);
    } else if (message.role === 'assistant') {
      const scripted: ScriptedMessage = { role: 'assistant', content };
      if (message.tool_calls != null && message.tool_calls.length > 0) {
        scripted.tool_calls = message.tool_calls.map((call) => ({
          id: call.id,
          name: call.function.name,
          arguments: call.function.arguments,
        }));
      }
      messages.push(scripted);
    } else if (message.role === 'tool') {
      messages.push({ role: 'tool', content, tool_call_id: message.tool_call_id ?? '' });
    } else {
      messages.push({ role: 'user', content });
    }
  }
  const stream = parsed.stream === true;
  return {
    request: {
      wire: 'chat-completions',
      model: parsed.model,
      system: system.join('\n\n'),
      messages,
      tools: (parsed.tools ?? []).flatMap((tool) => (tool.function === undefined ? [] : [tool.function.name])),
      stream,
      turn: countTurn(messages.length, (index) => messages[index].role),
    },
    includeUsage: stream && parsed.stream_options?.include_usage === true,
  };
}

function textOf(content: z.infer<typeof contentSchema>): string {
  if (content == null) return '';
  if (typeof content === 'string') return content;
  return content.flatMap((part) => (part.type === 'text' && part.text !== undefined ? [part.text] : [])).join('\n');
}

/** OpenAI's error JSON for a message, with the type as scripted or OpenAI's for the status. */
export function errorBody(message: string, type: string | undefined, status: number): object {
  return { error: { message, type: type ?? openAIErrorType(status), param: null, code: null } };
}

/** OpenAI's error type for an HTTP status. */
export function openAIErrorType(status: number): string {
  if (status === 429) return 'rate_limit_error';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}

function usageOf(reply: ScriptedReply): object {
  return {
    prompt_tokens: reply.inputTokens,
    completion_tokens: reply.outputTokens,
    total_tokens: reply.inputTokens + reply.outputTokens,
    // Only when there is something to say, as OpenAI-compatible servers without a cache do.
    ...(reply.cacheReadTokens > 0 ? { prompt_tokens_details: { cached_tokens: reply.cacheReadTokens } } : {}),
  };
}

/** The non-streaming `chat.completion` body of a reply. */
function completionBody(reply: ScriptedReply, id: string, model: string): object {
  const message: Record<string, unknown> = { role: 'assistant', content: reply.toolCalls.length > 0 && reply.text === '' ? null : reply.text };
  if (reply.toolCalls.length > 0) {
    message.tool_calls = reply.toolCalls.map((call) => ({
      id: call.id,
      type: 'function',
      function: { name: call.name, arguments: call.arguments },
    }));
  }
  return {
    id,
    object: 'chat.completion',
    // Zero rather than the clock keeps responses byte-for-byte deterministic; clients treat it as absent.
    created: 0,
    model,
    choices: [{ index: 0, message, finish_reason: reply.finishReason }],
    usage: usageOf(reply),
  };
}

/** The chunks of a streamed reply, in OpenAI's format, before `data: [DONE]`. */
function streamChunks(reply: ScriptedReply, id: string, model: string, includeUsage: boolean): WireEvent[] {
  const chunk = (choices: object[], extra: object = {}): object => ({
    id,
    object: 'chat.completion.chunk',
    created: 0,
    model,
    choices,
    ...extra,
  });
  const delta = (value: object, characters = 0): WireEvent => ({
    data: chunk([{ index: 0, delta: value, finish_reason: null }]),
    isDelta: true,
    characters,
  });
  const chunks: WireEvent[] = [{ data: chunk([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]), isDelta: false, characters: 0 }];
  for (const text of splitIntoChunks(reply.text, reply.chunkSize)) chunks.push(delta({ content: text }, text.length));
  reply.toolCalls.forEach((call, index) => {
    chunks.push(delta({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] }));
    for (const part of splitIntoChunks(call.arguments, reply.chunkSize)) {
      chunks.push(delta({ tool_calls: [{ index, function: { arguments: part } }] }));
    }
  });
  chunks.push({ data: chunk([{ index: 0, delta: {}, finish_reason: reply.finishReason }]), isDelta: false, characters: 0 });
  if (includeUsage) chunks.push({ data: chunk([], { usage: usageOf(reply) }), isDelta: false, characters: 0 });
  return chunks;
}

/** OpenAI's Chat Completions, `POST /v1/chat/completions`. */
export const chatCompletionsWire: WireFormat = {
  wire: 'chat-completions',
  parse: parseChatRequest,
  errorBody,
  responseBody: (reply, sequence, { request }) => completionBody(reply, `chatcmpl-scripted-${sequence}`, request.model),
  streamEvents: (reply, sequence, { request, includeUsage }) => streamChunks(reply, `chatcmpl-scripted-${sequence}`, request.model, includeUsage),
  streamEnd: 'data: [DONE]\n\n',
};
