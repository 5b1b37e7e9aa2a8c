import type { ModelCallOptions, ModelMiddleware } from './compose-model.ts';

/** A message of a model call's prompt, as the model stack sees it (any specification version). */
interface PromptMessage {
  role: string;
  providerOptions?: Record<string, Record<string, unknown> | undefined>;
  [key: string]: unknown;
}

/** A tool of a model call, as the model stack sees it. */
interface PromptTool {
  providerOptions?: Record<string, Record<string, unknown> | undefined>;
  [key: string]: unknown;
}

const ephemeral = { type: 'ephemeral' } as const;

/** Whether a model's provider reads Anthropic's prompt-cache marks (`anthropic.messages`). */
export function readsAnthropicCacheMarks(model: { provider: string }): boolean {
  return model.provider.startsWith('anthropic');
}

/**
 * The model stack's prompt-cache entry, for Anthropic models: every request gets two cache
 * breakpoints (`providerOptions.anthropic.cacheControl: { type: 'ephemeral' }`), one after the
 * tools and the system prompt (on the system prompt; on the last tool when there is none) and one
 * on the last message of the conversation so far. The next request of the same loop, a fork of it
 * or a summary of its result then reads its whole prefix from the provider's cache. The caller's
 * prompt and tools are not changed: the request gets copies of the marked entries.
 * @example composeModel(anthropicModel, [markPromptCache(), reliableCalls(options)])
 */
export function markPromptCache(): ModelMiddleware {
  return {
    transformParams: ({ params }) => Promise.resolve(withCacheMarks(params)),
  };
}

/** The call's options with the two breakpoints marked. */
export function withCacheMarks(params: ModelCallOptions): ModelCallOptions {
  const prompt = params.prompt as PromptMessage[] | undefined;
  if (!Array.isArray(prompt) || prompt.length === 0) return params;
  const marked = prompt.slice();
  // The system prompt leads the prompt; a system message later on is part of the conversation.
  let system = -1;
  while (system + 1 < marked.length && marked[system + 1].role === 'system') system++;
  const last = marked.length - 1;
  if (last > system) marked[last] = withMark(marked[last]);
  if (system >= 0) {
    marked[system] = withMark(marked[system]);
    return { ...params, prompt: marked };
  }
  const tools = params.tools as PromptTool[] | undefined;
  if (!Array.isArray(tools) || tools.length === 0) return { ...params, prompt: marked };
  return { ...params, prompt: marked, tools: [...tools.slice(0, -1), withMark(tools[tools.length - 1])] };
}

function withMark<T extends { providerOptions?: Record<string, Record<string, unknown> | undefined> }>(entry: T): T {
  const options = entry.providerOptions;
  return { ...entry, providerOptions: { ...options, anthropic: { ...options?.anthropic, cacheControl: ephemeral } } };
}
