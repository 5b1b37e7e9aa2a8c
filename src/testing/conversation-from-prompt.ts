import type { LanguageModelV4CallOptions, LanguageModelV4Message, LanguageModelV4ToolResultOutput } from '@ai-sdk/provider';
import { countTurn, type Conversation } from './conversation.ts';
import type { ScriptedMessage, ScriptedRequest } from './script.ts';

type UserMessage = Extract<LanguageModelV4Message, { role: 'user' }>;
type AssistantMessage = Extract<LanguageModelV4Message, { role: 'assistant' }>;

/**
 * A lazy conversation over an AI SDK prompt. Each part is converted the way
 * `@ai-sdk/openai-compatible` sends it, so the in-process model and the HTTP server see the same text.
 */
export function conversationFromPrompt(options: LanguageModelV4CallOptions, model: string, stream: boolean): Conversation {
  const { prompt } = options;
  const turn = countTurn(prompt.length, (index) => prompt[index].role);
  let system: string | undefined;
  let request: ScriptedRequest | undefined;

  const conversation: Conversation = {
    turn,
    system() {
      system ??= prompt
        .filter((message) => message.role === 'system')
        .map((message) => message.content)
        .join('\n\n');
      return system;
    },
    firstUserText() {
      const message = prompt.find((message) => message.role === 'user');
      return message === undefined ? '' : userText(message);
    },
    lastUserText() {
      const message = prompt.findLast((message) => message.role === 'user');
      return message === undefined ? '' : userText(message);
    },
    hasTool(name) {
      return options.tools?.some((tool) => tool.type === 'function' && tool.name === name) ?? false;
    },
    userMessageCount() {
      let count = 0;
      for (const message of prompt) if (message.role === 'user') count++;
      return count;
    },
    inputCharacters() {
      let total = conversation.system().length;
      for (const message of prompt) {
        if (message.role === 'user') total += userText(message).length;
        else if (message.role === 'assistant') total += assistantText(message).length;
        else if (message.role === 'tool') {
          for (const part of message.content) if (part.type === 'tool-result') total += toolResultText(part.output).length;
        }
      }
      return total;
    },
    request() {
      request ??= {
        model,
        system: conversation.system(),
        messages: prompt.flatMap(toScriptedMessages),
        tools: (options.tools ?? []).filter((tool) => tool.type === 'function').map((tool) => tool.name),
        stream,
        turn,
      };
      return request;
    },
  };
  return conversation;
}

function toScriptedMessages(message: LanguageModelV4Message): ScriptedMessage[] {
  switch (message.role) {
    case 'system':
      return [];
    case 'user':
      return [{ role: 'user', content: userText(message) }];
    case 'assistant': {
      const toolCalls = message.content.flatMap((part) =>
        part.type === 'tool-call' ? [{ id: part.toolCallId, name: part.toolName, arguments: serializeArguments(part.input) }] : [],
      );
      const scripted: ScriptedMessage = { role: 'assistant', content: assistantText(message) };
      if (toolCalls.length > 0) scripted.tool_calls = toolCalls;
      return [scripted];
    }
    case 'tool':
      return message.content.flatMap((part) =>
        part.type === 'tool-result' ? [{ role: 'tool' as const, content: toolResultText(part.output), tool_call_id: part.toolCallId }] : [],
      );
  }
}

function userText(message: UserMessage): string {
  const { content } = message;
  if (content.length === 1 && content[0].type === 'text') return content[0].text;
  return content.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('\n');
}

function assistantText(message: AssistantMessage): string {
  let text = '';
  for (const part of message.content) if (part.type === 'text') text += part.text;
  return text;
}

function toolResultText(output: LanguageModelV4ToolResultOutput): string {
  switch (output.type) {
    case 'text':
    case 'error-text':
      return output.value;
    case 'execution-denied':
      return output.reason ?? 'Tool call execution denied.';
    default:
      return JSON.stringify(output.value);
  }
}

function serializeArguments(input: unknown): string {
  if (typeof input !== 'string') return JSON.stringify(input);
  try {
    JSON.parse(input);
    return input;
  } catch {
    // The provider re-encodes a string that is not JSON so the API always receives valid JSON.
    return JSON.stringify(input);
  }
}
