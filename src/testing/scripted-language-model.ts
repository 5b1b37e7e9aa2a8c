import type {
  LanguageModelV4,
  LanguageModelV4CallOptions,
  LanguageModelV4Content,
  LanguageModelV4FinishReason,
  LanguageModelV4StreamPart,
  LanguageModelV4Usage,
} from '@ai-sdk/provider';
import { APICallError } from 'ai';
import { setTimeout as sleep } from 'node:timers/promises';
import { conversationFromPrompt } from './conversation-from-prompt.ts';
import { errorBody } from './openai-chat-format.ts';
import type { RespondFunction, Script } from './script.ts';
import { createScriptedResponder, type ScriptedReply } from './scripted-responder.ts';
import { splitIntoChunks } from './split-into-chunks.ts';

/** Options of {@link scriptedLanguageModel}. */
export interface ScriptedLanguageModelOptions {
  /** The model id reported to the AI SDK and passed to a respond function. @default 'scripted' */
  modelId?: string;
}

/**
 * An AI SDK language model that answers from a script in-process, with the same semantics as
 * {@link startScriptedServer} but no HTTP. Errors are thrown as `APICallError` with the status code.
 * @throws {z.ZodError} when the script is invalid
 * @example
 * const model = scriptedLanguageModel([{ turns: [{ text: 'Done: {{task}}' }] }]);
 * const { text } = await generateText({ model, prompt: 'count the files' });
 */
export function scriptedLanguageModel(
  script: Script | RespondFunction,
  options: ScriptedLanguageModelOptions = {},
): LanguageModelV4 {
  const { modelId = 'scripted' } = options;
  const respond = createScriptedResponder(script);
  let responseCount = 0;

  async function reply(callOptions: LanguageModelV4CallOptions, stream: boolean): Promise<ScriptedReply> {
    const { abortSignal } = callOptions;
    abortSignal?.throwIfAborted();
    const result = await respond(conversationFromPrompt(callOptions, modelId, stream));
    if (result.delayMs > 0) await sleep(result.delayMs, undefined, { signal: abortSignal });
    if (result.error !== undefined) {
      const body = errorBody(result.error.message, result.error.type);
      throw new APICallError({
        message: result.error.message,
        url: 'scripted:/chat/completions',
        requestBodyValues: {},
        statusCode: result.error.status,
        responseBody: JSON.stringify(body),
        data: body,
      });
    }
    return result;
  }

  return {
    specificationVersion: 'v4',
    provider: 'scripted',
    modelId,
    supportedUrls: {},

    async doGenerate(callOptions) {
      const result = await reply(callOptions, false);
      const content: LanguageModelV4Content[] = [];
      if (result.text.length > 0) content.push({ type: 'text', text: result.text });
      for (const call of result.toolCalls) {
        content.push({ type: 'tool-call', toolCallId: call.id, toolName: call.name, input: call.arguments });
      }
      return {
        content,
        finishReason: finishReasonOf(result.finishReason),
        usage: usageOf(result),
        response: { id: `chatcmpl-scripted-${++responseCount}`, modelId },
        warnings: [],
      };
    },

    async doStream(callOptions) {
      const result = await reply(callOptions, true);
      const parts: LanguageModelV4StreamPart[] = [
        { type: 'stream-start', warnings: [] },
        { type: 'response-metadata', id: `chatcmpl-scripted-${++responseCount}`, modelId },
      ];
      if (result.text.length > 0) {
        parts.push({ type: 'text-start', id: 'txt-0' });
        for (const delta of splitIntoChunks(result.text, result.chunkSize)) parts.push({ type: 'text-delta', id: 'txt-0', delta });
        parts.push({ type: 'text-end', id: 'txt-0' });
      }
      for (const call of result.toolCalls) {
        parts.push({ type: 'tool-input-start', id: call.id, toolName: call.name });
        for (const delta of splitIntoChunks(call.arguments, result.chunkSize)) parts.push({ type: 'tool-input-delta', id: call.id, delta });
        parts.push({ type: 'tool-input-end', id: call.id });
        parts.push({ type: 'tool-call', toolCallId: call.id, toolName: call.name, input: call.arguments });
      }
      parts.push({ type: 'finish', usage: usageOf(result), finishReason: finishReasonOf(result.finishReason) });
      return { stream: streamOf(parts, result.chunkDelayMs, callOptions.abortSignal) };
    },
  };
}

function streamOf(
  parts: LanguageModelV4StreamPart[],
  chunkDelayMs: number,
  abortSignal: AbortSignal | undefined,
): ReadableStream<LanguageModelV4StreamPart> {
  if (chunkDelayMs === 0) {
    return new ReadableStream({
      start(controller) {
        for (const part of parts) controller.enqueue(part);
        controller.close();
      },
    });
  }
  // Cancelling the stream must also end a pending delay, so no timer outlives its reader.
  const canceled = new AbortController();
  const signal = abortSignal === undefined ? canceled.signal : AbortSignal.any([abortSignal, canceled.signal]);
  let index = 0;
  let deltas = 0;
  return new ReadableStream({
    async pull(controller) {
      const part = parts[index++];
      if (part === undefined) return controller.close();
      const isDelta = part.type === 'text-delta' || part.type === 'tool-input-delta';
      if (isDelta && deltas++ > 0) await sleep(chunkDelayMs, undefined, { signal });
      controller.enqueue(part);
    },
    cancel() {
      canceled.abort();
    },
  });
}

function usageOf(reply: ScriptedReply): LanguageModelV4Usage {
  const { inputTokens, outputTokens } = reply;
  return {
    inputTokens: { total: inputTokens, noCache: inputTokens, cacheRead: 0, cacheWrite: undefined },
    outputTokens: { total: outputTokens, text: outputTokens, reasoning: 0 },
    raw: { prompt_tokens: inputTokens, completion_tokens: outputTokens, total_tokens: inputTokens + outputTokens },
  };
}

// The same mapping `@ai-sdk/openai-compatible` applies, so both ways of scripting agree.
function finishReasonOf(raw: string): LanguageModelV4FinishReason {
  switch (raw) {
    case 'stop':
      return { unified: 'stop', raw };
    case 'length':
      return { unified: 'length', raw };
    case 'content_filter':
      return { unified: 'content-filter', raw };
    case 'tool_calls':
    case 'function_call':
      return { unified: 'tool-calls', raw };
    default:
      return { unified: 'other', raw };
  }
}
