import { z } from 'zod';
import { countTurn } from './conversation.ts';
import { errorBody } from './openai-chat-format.ts';
import type { ScriptedMessage } from './script.ts';
import type { ScriptedReply } from './scripted-responder.ts';
import { splitIntoChunks } from './split-into-chunks.ts';
import { WireInputError, type WireEvent, type WireFormat, type WireRequest } from './wire-format.ts';

const itemSchema = z.looseObject({ type: z.string().optional(), role: z.string().optional() });
type Item = z.infer<typeof itemSchema>;

const requestSchema = z.looseObject({
  model: z.string().default(''),
  instructions: z.string().nullish(),
  input: z.union([z.string(), z.array(itemSchema)]),
  previous_response_id: z.string().nullish(),
  tools: z
    .array(
      z.looseObject({
        type: z.string(),
        name: z.string().optional(),
        tools: z.array(z.looseObject({ type: z.string(), name: z.string().optional() })).optional(),
      }),
    )
    .nullish(),
  stream: z.boolean().nullish(),
});

function textOf(content: unknown, separator: string): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .flatMap((part: { type?: unknown; text?: unknown }) => (typeof part.text === 'string' && part.type !== 'refusal' ? [part.text] : []))
    .join(separator);
}

/** Converts items to messages; consecutive assistant items (a text and its calls) make one assistant message. */
function toMessages(items: Item[]): { system: string[]; messages: ScriptedMessage[] } {
  const system: string[] = [];
  const messages: ScriptedMessage[] = [];
  function assistant(): ScriptedMessage {
    const last = messages.at(-1);
    if (last?.role === 'assistant') return last;
    const message: ScriptedMessage = { role: 'assistant', content: '' };
    messages.push(message);
    return message;
  }
  function call(id: unknown, name: unknown, encoded: unknown): void {
    const message = assistant();
    (message.tool_calls ??= []).push({ id: String(id ?? ''), name: String(name ?? ''), arguments: String(encoded ?? '') });
  }
  for (const item of items) {
    switch (item.type ?? 'message') {
      case 'message':
        if (item.role === 'system' || item.role === 'developer') system.push(textOf(item.content, '\n'));
        else if (item.role === 'assistant') assistant().content += textOf(item.content, '');
        else messages.push({ role: 'user', content: textOf(item.content, '\n') });
        break;
      case 'function_call':
        call(item.call_id, item.name, item.arguments);
        break;
      case 'custom_tool_call':
        call(item.call_id, item.name, item.input);
        break;
      case 'function_call_output':
      case 'custom_tool_call_output':
        messages.push({ role: 'tool', content: textOf(item.output, '\n'), tool_call_id: String(item.call_id ?? '') });
        break;
      // Reasoning and built-in tool items carry nothing a script matches on.
    }
  }
  return { system, messages };
}

function usageOf(reply: ScriptedReply): object {
  return {
    input_tokens: reply.inputTokens,
    input_tokens_details: { cached_tokens: reply.cacheReadTokens },
    output_tokens: reply.outputTokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: reply.inputTokens + reply.outputTokens,
  };
}

function incompleteReason(finishReason: string): string | undefined {
  if (finishReason === 'length') return 'max_output_tokens';
  if (finishReason === 'content_filter') return 'content_filter';
  return undefined;
}

type Tools = z.infer<typeof requestSchema>['tools'];

/** Tool names, a namespace's tools after the namespace, and the tools a call must name specially. */
function readTools(tools: Tools): { names: string[]; special: Map<string, { namespace?: string; custom: boolean }> } {
  const names: string[] = [];
  const special = new Map<string, { namespace?: string; custom: boolean }>();
  for (const tool of tools ?? []) {
    const name = tool.name ?? tool.type;
    names.push(name);
    if (tool.type === 'custom') special.set(name, { custom: true });
    if (tool.type !== 'namespace') continue;
    for (const inner of tool.tools ?? []) {
      if (inner.name === undefined) continue;
      names.push(inner.name);
      special.set(inner.name, { namespace: name, custom: inner.type === 'custom' });
    }
  }
  return { names, special };
}

function outputItems(reply: ScriptedReply, sequence: number, request: WireRequest): Item[] {
  const items: Item[] = [];
  if (reply.text.length > 0) {
    const content = [{ type: 'output_text', text: reply.text, annotations: [], logprobs: [] }];
    items.push({ type: 'message', id: `msg_scripted_${sequence}`, status: 'completed', role: 'assistant', content });
  }
  reply.toolCalls.forEach((call, index) => {
    const special = request.specialTools?.get(call.name);
    const id = `fc_scripted_${sequence}_${index}`;
    const namespace = special?.namespace === undefined ? {} : { namespace: special.namespace };
    if (special?.custom) {
      items.push({ type: 'custom_tool_call', id, call_id: call.id, name: call.name, input: call.arguments, status: 'completed', ...namespace });
    } else {
      items.push({ type: 'function_call', id, call_id: call.id, name: call.name, arguments: call.arguments, status: 'completed', ...namespace });
    }
  });
  return items;
}

function responseObject(reply: ScriptedReply, sequence: number, model: string, output: Item[] | undefined): object {
  const reason = incompleteReason(reply.finishReason);
  return {
    id: `resp_scripted_${sequence}`,
    object: 'response',
    created_at: 0,
    status: output === undefined ? 'in_progress' : reason === undefined ? 'completed' : 'incomplete',
    error: null,
    incomplete_details: output !== undefined && reason !== undefined ? { reason } : null,
    model,
    output: output ?? [],
    parallel_tool_calls: true,
    tool_choice: 'auto',
    tools: [],
    usage: output === undefined ? null : usageOf(reply),
  };
}

function streamEvents(reply: ScriptedReply, sequence: number, model: string, output: Item[]): WireEvent[] {
  const events: WireEvent[] = [];
  const push = (type: string, data: object, characters = 0, isDelta = false): void => {
    events.push({ event: type, data: { type, sequence_number: events.length, ...data }, isDelta, characters });
  };
  push('response.created', { response: responseObject(reply, sequence, model, undefined) });
  push('response.in_progress', { response: responseObject(reply, sequence, model, undefined) });
  output.forEach((item, output_index) => {
    const item_id = item.id;
    if (item.type === 'message') {
      const part = { type: 'output_text', text: '', annotations: [], logprobs: [] };
      push('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', content: [] } });
      push('response.content_part.added', { item_id, output_index, content_index: 0, part });
      for (const delta of splitIntoChunks(reply.text, reply.chunkSize)) {
        push('response.output_text.delta', { item_id, output_index, content_index: 0, delta, logprobs: [] }, delta.length, true);
      }
      push('response.output_text.done', { item_id, output_index, content_index: 0, text: reply.text, logprobs: [] });
      push('response.content_part.done', { item_id, output_index, content_index: 0, part: { ...part, text: reply.text } });
    } else if (item.type === 'custom_tool_call') {
      const input = String(item.input);
      push('response.output_item.added', { output_index, item: { ...item, input: '', status: 'in_progress' } });
      for (const delta of splitIntoChunks(input, reply.chunkSize)) {
        push('response.custom_tool_call_input.delta', { item_id, output_index, delta }, 0, true);
      }
      push('response.custom_tool_call_input.done', { item_id, output_index, input });
    } else {
      const encoded = String(item.arguments);
      push('response.output_item.added', { output_index, item: { ...item, arguments: '', status: 'in_progress' } });
      for (const delta of splitIntoChunks(encoded, reply.chunkSize)) {
        push('response.function_call_arguments.delta', { item_id, output_index, delta }, 0, true);
      }
      push('response.function_call_arguments.done', { item_id, output_index, arguments: encoded });
    }
    push('response.output_item.done', { output_index, item });
  });
  const response = responseObject(reply, sequence, model, output);
  push((response as { status: string }).status === 'incomplete' ? 'response.incomplete' : 'response.completed', { response });
  return events;
}

/**
 * OpenAI's Responses API, `POST /v1/responses`. Every response is kept, so a later request can
 * name its items (`item_reference`, as the AI SDK sends with `store`) or the whole response
 * (`previous_response_id`), as OpenAI does for stored responses.
 */
export function createResponsesWire(): WireFormat {
  const itemsById = new Map<string, Item>();
  const conversations = new Map<string, Item[]>();

  function resolve(input: string | Item[], previous: string | null | undefined): Item[] {
    const items: Item[] = [];
    if (previous != null) {
      const earlier = conversations.get(previous);
      if (earlier === undefined) throw new WireInputError(`Previous response with id '${previous}' not found.`);
      items.push(...earlier);
    }
    if (typeof input === 'string') return [...items, { type: 'message', role: 'user', content: input }];
    for (const item of input) {
      if (item.type !== 'item_reference') {
        items.push(item);
        continue;
      }
      const found = itemsById.get(String(item.id));
      if (found === undefined) throw new WireInputError(`Item with id '${String(item.id)}' not found.`);
      items.push(found);
    }
    return items;
  }

  function remember(sequence: number, request: WireRequest, output: Item[]): void {
    for (const item of output) itemsById.set(String(item.id), item);
    conversations.set(`resp_scripted_${sequence}`, [...((request.items ?? []) as Item[]), ...output]);
  }

  return {
    wire: 'responses',
    parse(body) {
      const parsed = requestSchema.parse(body);
      const items = resolve(parsed.input, parsed.previous_response_id);
      const { system, messages } = toMessages(items);
      if (parsed.instructions != null) system.unshift(parsed.instructions);
      const stream = parsed.stream === true;
      const tools = readTools(parsed.tools);
      return {
        request: {
          wire: 'responses',
          model: parsed.model,
          system: system.join('\n\n'),
          messages,
          tools: tools.names,
          stream,
          turn: countTurn(messages.length, (index) => messages[index].role),
        },
        includeUsage: true,
        items,
        specialTools: tools.special,
      };
    },
    errorBody,
    responseBody(reply, sequence, request) {
      const output = outputItems(reply, sequence, request);
      remember(sequence, request, output);
      return responseObject(reply, sequence, request.request.model, output);
    },
    streamEvents(reply, sequence, request) {
      const output = outputItems(reply, sequence, request);
      remember(sequence, request, output);
      return streamEvents(reply, sequence, request.request.model, output);
    },
    streamEnd: '',
  };
}
