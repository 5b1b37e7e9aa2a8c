import type {
  LanguageModelV4,
  LanguageModelV4CallOptions,
  LanguageModelV4Content,
  LanguageModelV4Prompt,
  LanguageModelV4StreamPart,
  LanguageModelV4Usage,
} from '@ai-sdk/provider';
import { setTimeout as delay } from 'node:timers/promises';
import { convertArrayToReadableStream } from 'ai/test';

/** Marks the worker's system prompt, so the model knows which side of a delegation it plays. */
export const workerMarker = 'BENCH-WORKER';

/** What the bench model does for one scenario. */
export interface BenchScenario {
  /** `agent` calls in the parent's first model call (all in one step). */
  fanOut: number;
  /** Whether those calls set `run_in_background: true`. */
  background: boolean;
  /** `noop` calls a worker makes, one per step, before it answers. */
  toolCalls: number;
  /** Characters of the worker's final answer. */
  answerChars: number;
  /** How long each model call waits (a timer) before it answers, in ms; 0 or absent: at once. */
  latencyMs?: number;
}

/** A deterministic in-process model that counts its calls. */
export interface BenchModel extends LanguageModelV4 {
  /** Model calls made so far (streamed or not). */
  calls: number;
}

/** Characters per streamed text delta: the default `chunk_size` of cadre's scripted model. */
export const chunkChars = 20;

const usage: LanguageModelV4Usage = {
  inputTokens: { total: 100, noCache: 100, cacheRead: 0, cacheWrite: undefined },
  outputTokens: { total: 10, text: 10, reasoning: 0 },
};

/**
 * The mock model both implementations share. Its reply depends only on the prompt: the system
 * prompt (worker or parent) and the number of assistant messages since the last user message.
 * A plain `LanguageModelV4` rather than `MockLanguageModelV4`, which keeps every call's options
 * and would inflate the memory being measured.
 */
export function createBenchModel(scenario: BenchScenario): BenchModel {
  const answer = 'The task is done and checked. '.repeat(Math.ceil(scenario.answerChars / 30)).slice(0, scenario.answerChars);

  function reply(prompt: LanguageModelV4Prompt): LanguageModelV4Content[] {
    let step = 0;
    let lastUser = '';
    for (let index = prompt.length - 1; index >= 0; index--) {
      const message = prompt[index];
      if (message.role === 'assistant') step++;
      if (message.role === 'user') {
        const first = message.content[0];
        lastUser = first?.type === 'text' ? first.text : '';
        break;
      }
    }
    const system = prompt[0]?.role === 'system' ? prompt[0].content : '';
    if (system.includes(workerMarker)) {
      if (step < scenario.toolCalls) return [{ type: 'tool-call', toolCallId: `noop_${step}`, toolName: 'noop', input: '{}' }];
      return [{ type: 'text', text: answer }];
    }
    if (lastUser.startsWith('<subagent-notification>')) return [{ type: 'text', text: 'done' }];
    if (step > 0) return [{ type: 'text', text: scenario.background ? 'started' : 'All subagents answered.' }];
    return Array.from({ length: scenario.fanOut }, (_, index): LanguageModelV4Content => {
      const input: Record<string, unknown> = { agent: 'worker', task: `Task ${index}: check part ${index}.`, description: `part ${index}` };
      if (scenario.background) input.run_in_background = true;
      return { type: 'tool-call', toolCallId: `call_${index}`, toolName: 'agent', input: JSON.stringify(input) };
    });
  }

  const finishOf = (content: LanguageModelV4Content[]) =>
    content[0]?.type === 'tool-call' ? { unified: 'tool-calls' as const, raw: 'tool_calls' } : { unified: 'stop' as const, raw: 'stop' };

  const model: BenchModel = {
    specificationVersion: 'v4',
    provider: 'bench',
    modelId: 'bench',
    supportedUrls: {},
    calls: 0,

    async doGenerate(options: LanguageModelV4CallOptions) {
      model.calls++;
      if (scenario.latencyMs) await delay(scenario.latencyMs);
      const content = reply(options.prompt);
      return { content, finishReason: finishOf(content), usage, warnings: [] };
    },

    async doStream(options: LanguageModelV4CallOptions) {
      model.calls++;
      if (scenario.latencyMs) await delay(scenario.latencyMs);
      const content = reply(options.prompt);
      const parts: LanguageModelV4StreamPart[] = [{ type: 'stream-start', warnings: [] }];
      for (const part of content) {
        if (part.type !== 'text') {
          parts.push(part as LanguageModelV4StreamPart);
          continue;
        }
        parts.push({ type: 'text-start', id: 'text' });
        for (let at = 0; at < part.text.length; at += chunkChars) parts.push({ type: 'text-delta', id: 'text', delta: part.text.slice(at, at + chunkChars) });
        parts.push({ type: 'text-end', id: 'text' });
      }
      parts.push({ type: 'finish', usage, finishReason: finishOf(content) });
      return { stream: convertArrayToReadableStream(parts) };
    },
  };
  return model;
}
