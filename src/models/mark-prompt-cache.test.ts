import { describe, expect, it } from 'vitest';
import { readsAnthropicCacheMarks, withCacheMarks } from './mark-prompt-cache.ts';

const mark = { anthropic: { cacheControl: { type: 'ephemeral' } } };

describe('markPromptCache', () => {
  it('marks the system prompt and the last message, leaving the caller’s prompt as it was', () => {
    const prompt = [
      { role: 'system', content: 'You are main.' },
      { role: 'user', content: [{ type: 'text', text: 'Hi' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'Hello' }], providerOptions: { anthropic: { other: 1 } } },
    ];
    const before = structuredClone(prompt);
    const marked = withCacheMarks({ prompt, tools: [{ type: 'function', name: 'read_file' }] });
    expect(marked.prompt).toEqual([
      { ...prompt[0], providerOptions: mark },
      prompt[1],
      { ...prompt[2], providerOptions: { anthropic: { other: 1, cacheControl: { type: 'ephemeral' } } } },
    ]);
    // The system prompt's breakpoint covers the tools before it.
    expect(marked.tools).toEqual([{ type: 'function', name: 'read_file' }]);
    expect(prompt).toEqual(before);
  });

  it('marks the last tool when there is no system prompt, and a prompt of only a system prompt once', () => {
    const tools = [
      { type: 'function', name: 'a' },
      { type: 'function', name: 'b' },
    ];
    const marked = withCacheMarks({ prompt: [{ role: 'user', content: [] }], tools });
    expect(marked.tools).toEqual([tools[0], { ...tools[1], providerOptions: mark }]);
    expect(marked.prompt).toEqual([{ role: 'user', content: [], providerOptions: mark }]);
    expect(withCacheMarks({ prompt: [{ role: 'system', content: 'x' }] }).prompt).toEqual([{ role: 'system', content: 'x', providerOptions: mark }]);
  });

  it('applies to Anthropic models only', () => {
    expect(readsAnthropicCacheMarks({ provider: 'anthropic.messages' })).toBe(true);
    expect(readsAnthropicCacheMarks({ provider: 'openai.responses' })).toBe(false);
    expect(readsAnthropicCacheMarks({ provider: 'openai-compatible.chat' })).toBe(false);
  });
});
