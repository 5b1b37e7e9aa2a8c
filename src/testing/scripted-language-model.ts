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
import type { RespondFunction, Script, ScriptedFault } from './script.ts';
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
export function scriptedLanguageModel(script: Script | RespondFunction, options: ScriptedLanguageModelOptions = {}): LanguageModelV4 {
  const { modelId = 'scripted' } = options;
  const respond = createScriptedResponder(script);
  let responseCount = 0;

  async function reply(callOptions: LanguageModelV4CallOptions, stream: boolean): Promise<ScriptedReply> {
    const { abortSignal } = callOptions;
    abortSignal?.throwIfAborted();
    const result = await respond(conversationFromPrompt(callOptions, modelId, stream));
    if (result.delayMs > 0) await sleep(result.delayMs, undefined, { signal: abortSignal });
    if (result.fault !== undefined && (!stream || result.fault.after_chars === undefined)) {
      if (result.fault.type === 'reset') throw connectionReset();
      await hang(abortSignal);
    }
    if (result.error !== undefined) {
      const { status, retry_after, retry_after_ms } = result.error;
      const message = result.error.message.replaceAll('{{authorization}}', callOptions.headers?.authorization ?? '');
      const body = errorBody(message, result.error.type, status);
      const responseHeaders: Record<string, string> = { 'content-type': 'application/json' };
      if (retry_after !== undefined) responseHeaders['retry-after'] = String(retry_after);
      if (retry_after_ms !== undefined) responseHeaders['retry-after-ms'] = String(retry_after_ms);
      throw new APICallError({
        message,
        url: 'scripted:/chat/completions',
        requestBodyValues: {},
        statusCode: status,
        responseHeaders,
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
      if (result.fault !== undefined) return { stream: faultyStreamOf(parts, result.fault, callOptions.abortSignal) };
      return { stream: streamOf(parts, result.chunkDelayMs, callOptions.abortSignal) };
    },
  };
}

function streamOf(parts: LanguageModelV4StreamPart[], chunkDelayMs: number, abortSignal: AbortSignal | undefined): ReadableStream<LanguageModelV4StreamPart> {
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

/** What a dropped connection looks like to the AI SDK: fetch's `TypeError: terminated`, caused by a reset. */
function connectionReset(): TypeError {
  return new TypeError('terminated', { cause: Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }) });
}

/** Never settles, unless the signal aborts (then rejects with its reason). */
function hang(signal: AbortSignal | undefined): Promise<never> {
  return new Promise<never>((_, reject) => {
    if (signal?.aborted) reject(signal.reason);
    signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
}

/** The parts up to `after_chars` characters of text, then a stall or a reset, as the server does. */
function faultyStreamOf(
  parts: LanguageModelV4StreamPart[],
  fault: ScriptedFault,
  abortSignal: AbortSignal | undefined,
): ReadableStream<LanguageModelV4StreamPart> {
  let index = 0;
  let characters = 0;
  const limit = fault.after_chars ?? 0;
  return new ReadableStream({
    async pull(controller) {
      const part = parts[index++];
      // The first two parts stand for the response's start (its headers and role chunk).
      if (part === undefined || (index > 2 && characters >= limit)) {
        if (fault.type === 'reset') return controller.error(connectionReset());
        return hang(abortSignal).catch((error: unknown) => controller.error(error));
      }
      if (part.type === 'text-delta') characters += part.delta.length;
      controller.enqueue(part);
    },
  });
}

function usageOf(reply: ScriptedReply): LanguageModelV4Usage {
  const { inputTokens, cacheReadTokens, cacheWriteTokens, outputTokens } = reply;
  return {
    inputTokens: {
      total: inputTokens,
      noCache: inputTokens - cacheReadTokens - cacheWriteTokens,
      cacheRead: cacheReadTokens,
      cacheWrite: cacheWriteTokens > 0 ? cacheWriteTokens : undefined,
    },
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
