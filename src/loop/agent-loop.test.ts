import { tracingChannel } from 'node:diagnostics_channel';
import { AI_SDK_TELEMETRY_TRACING_CHANNEL } from 'ai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { scriptedLanguageModel } from '../testing/index.ts';
import { defineTool } from '../tools/define-tool.ts';
import { runAgentLoop, telemetryIsHeard } from './agent-loop.ts';

const tools = {
  echo: defineTool({ name: 'echo', description: 'Echoes.', inputSchema: z.object({ text: z.string() }), execute: ({ text }) => text }),
  fail: defineTool({
    name: 'fail',
    description: 'Fails.',
    inputSchema: z.object({}),
    execute: () => {
      throw new Error('broken tool');
    },
  }),
};

/** Runs one loop and writes down its callbacks in order. */
async function trace(stream: boolean) {
  const seen: string[] = [];
  const result = await runAgentLoop({
    model: scriptedLanguageModel([
      {
        turns: [
          {
            text: 'Looking. ',
            tool_calls: [
              { name: 'echo', arguments: { text: 'hi' } },
              { name: 'fail', arguments: {} },
            ],
          },
          { text: 'All done.' },
        ],
      },
    ]),
    instructions: 'Be brief.',
    messages: [{ role: 'user', content: 'go' }],
    tools,
    maxTurns: 5,
    abortSignal: new AbortController().signal,
    stream,
    onStepStart: (step) => seen.push(`step ${step}`),
    onTextDelta: (_delta, soFar) => seen.push(`text ${soFar}`),
    onToolCall: ({ toolName, input }) => seen.push(`call ${toolName} ${JSON.stringify(input)}`),
    onToolResult: ({ toolName, ok }) => seen.push(`result ${toolName} ${ok}`),
    onStepFinish: (step) => {
      seen.push(`end ${step.stepNumber} ${step.messages.map((message) => message.role).join(',')}`);
    },
  });
  // Deltas differ between the two modes; the last one of each step carries the step's text.
  const texts = seen.filter((entry, index) => !entry.startsWith('text') || !seen[index + 1]?.startsWith('text'));
  return { seen: texts, result };
}

describe('runAgentLoop', () => {
  it.each([true, false])('returns only once the last step end was handled (stream: %s), so nothing it queues lands after the run ends', async (stream) => {
    const log: string[] = [];
    const result = await runAgentLoop({
      model: scriptedLanguageModel([{ turns: [{ text: 'Done.' }] }]),
      instructions: 'Be brief.',
      messages: [{ role: 'user', content: 'go' }],
      tools,
      maxTurns: 5,
      abortSignal: new AbortController().signal,
      stream,
      onStepFinish: async () => {
        await new Promise((resolve) => setTimeout(resolve, 50));
        log.push('step end handled');
      },
    });
    log.push('loop returned');
    expect(result.text).toBe('Done.');
    expect(log).toEqual(['step end handled', 'loop returned']);
  });

  it('tells the same story whether the model is streamed or called whole', async () => {
    const expected = [
      'step 0',
      'text Looking. ',
      'call echo {"text":"hi"}',
      'result echo true',
      'call fail {}',
      'result fail false',
      'end 0 assistant,tool',
      'step 1',
      'text All done.',
      'end 1 assistant',
    ];
    for (const stream of [true, false]) {
      const { seen, result } = await trace(stream);
      // Tools of one step run at once: only each call's own start and end are ordered.
      expect([...seen].sort()).toEqual([...expected].sort());
      expect(seen.indexOf('call echo {"text":"hi"}')).toBeLessThan(seen.indexOf('result echo true'));
      expect(seen.indexOf('text Looking. ')).toBeLessThan(seen.indexOf('call echo {"text":"hi"}'));
      expect(seen.indexOf('end 0 assistant,tool')).toBeLessThan(seen.indexOf('step 1'));
      expect(result).toMatchObject({ text: 'All done.', lastText: 'All done.', steps: 2, finishReason: 'stop', aborted: false });
    }
  });

  it('keeps the text of a step whose tool was running when the loop was stopped', async () => {
    for (const stream of [true, false]) {
      const controller = new AbortController();
      const slow = defineTool({
        name: 'slow',
        description: 'Waits.',
        inputSchema: z.object({}),
        execute: () => {
          controller.abort();
          return 'late';
        },
      });
      const result = await runAgentLoop({
        model: scriptedLanguageModel([{ turns: [{ text: 'Half of the answer.', tool_calls: [{ name: 'slow', arguments: {} }] }, { text: 'never' }] }]),
        instructions: 'Be brief.',
        messages: [{ role: 'user', content: 'go' }],
        tools: { slow },
        maxTurns: 5,
        abortSignal: controller.signal,
        stream,
      });
      expect(result.aborted).toBe(true);
      expect(result.lastText).toBe('Half of the answer.');
    }
  });

  it("leaves the AI SDK's telemetry on while someone receives it, and passes given settings through", async () => {
    const loop = (telemetry?: Parameters<typeof runAgentLoop>[0]['telemetry']) =>
      runAgentLoop({
        model: scriptedLanguageModel([{ turns: [{ text: 'Hi.' }] }]),
        instructions: 'Be brief.',
        messages: [{ role: 'user', content: 'go' }],
        tools: {},
        maxTurns: 1,
        abortSignal: new AbortController().signal,
        stream: false,
        telemetry,
      });
    expect(telemetryIsHeard()).toBe(false);
    const traced: string[] = [];
    const channel = tracingChannel<object, { type: string }>(AI_SDK_TELEMETRY_TRACING_CHANNEL);
    const ignore = () => {};
    const handlers = { start: (message: { type: string }) => void traced.push(message.type), end: ignore, asyncStart: ignore, asyncEnd: ignore, error: ignore };
    channel.subscribe(handlers);
    try {
      expect(telemetryIsHeard()).toBe(true);
      await loop();
      expect(traced.length).toBeGreaterThan(0);
    } finally {
      channel.unsubscribe(handlers);
    }
    expect(telemetryIsHeard()).toBe(false);
    traced.length = 0;
    await loop();
    expect(traced).toEqual([]);

    const starts: string[] = [];
    await loop({ integrations: [{ onStart: () => void starts.push('start') }] });
    expect(starts).toEqual(['start']);
  });
});
