import type { Tool, ToolExecutionOptions } from 'ai';
import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { checkToolInput } from '../tools/check-tool-input.ts';
import { defineTool, toolInfo, ToolInputError } from '../tools/define-tool.ts';
import { stopToolCalls } from './stop-tool-calls.ts';
import { composeTools, mapToolOutput, originalTool, type ToolMiddleware } from './tool-pipeline.ts';
import { watchToolCalls } from './watch-tool-calls.ts';

const options = (toolCallId = 'call_1', abortSignal?: AbortSignal): ToolExecutionOptions<any> => ({
  toolCallId,
  messages: [],
  abortSignal,
  context: undefined,
});
const execute = (tool: Tool, input: unknown, callOptions = options()) =>
  (tool.execute as (input: unknown, options: ToolExecutionOptions<any>) => unknown)(input, callOptions);

/** An entry that logs when it runs and when its call has ended. */
function logging(name: string, log: string[]): ToolMiddleware {
  return { name, handle: (call, next) => (log.push(`${name} ${call.name}`), mapToolOutput(next, { end: (ok) => log.push(`${name} end ${ok}`) })) };
}

const echo = defineTool({
  name: 'echo',
  description: 'Echoes',
  inputSchema: z.object({ text: z.string(), times: z.number().default(1) }),
  execute: ({ text, times }) => text.repeat(times),
});

describe('composeTools', () => {
  it('runs the entries in order, first outermost, around the tool, and the results back out in reverse', async () => {
    const log: string[] = [];
    const tools = composeTools({ echo }, [logging('a', log), logging('b', log)]);
    expect(await execute(tools.echo!, { text: 'hi' })).toBe('hi');
    expect(log).toEqual(['a echo', 'b echo', 'b end true', 'a end true']);
  });

  it('stays synchronous where nothing waits: a tool that answers at once gives its value, not a promise', () => {
    const now = defineTool({ name: 'now', description: 'Answers at once', inputSchema: z.object({}), execute: () => 'at once' });
    const tools = composeTools({ now }, [watchToolCalls({ onToolCall: () => {}, onToolResult: () => {} }), checkToolInput, stopToolCalls]);
    expect(execute(tools.now!, {}, options('call_1', new AbortController().signal))).toBe('at once');
  });

  it('asks each entry once per tool whether it applies, and skips it for the tools it does not', async () => {
    const asked: string[] = [];
    const log: string[] = [];
    const onlyEcho: ToolMiddleware = { ...logging('only-echo', log), appliesTo: ({ name }) => (asked.push(name), name === 'echo') };
    const other = defineTool({ name: 'other', description: 'Other', inputSchema: z.object({}), execute: () => 'other' });
    const tools = composeTools({ echo, other }, [onlyEcho]);
    await execute(tools.other!, {});
    await execute(tools.echo!, { text: 'x' });
    await execute(tools.echo!, { text: 'y' });
    expect(asked).toEqual(['echo', 'other']);
    expect(log).toEqual(['only-echo echo', 'only-echo end true', 'only-echo echo', 'only-echo end true']);
  });

  it('composes a composed tool into one pipeline: the new entries first, the tool run once', async () => {
    const log: string[] = [];
    let runs = 0;
    const counted = defineTool({ name: 'counted', description: 'Counts', inputSchema: z.object({}), execute: () => String(++runs) });
    const inner = composeTools({ counted }, [logging('inner', log)]);
    const outer = composeTools(inner, [logging('outer', log)]);
    expect(await execute(outer.counted!, {})).toBe('1');
    expect(log).toEqual(['outer counted', 'inner counted', 'inner end true', 'outer end true']);
    expect(originalTool(outer.counted!)).toBe(counted);
    expect(toolInfo(outer.counted!)?.name).toBe('counted');
  });

  it('refuses an entry that calls next twice, so a tool never runs twice for one call', async () => {
    const twice: ToolMiddleware = { name: 'twice', handle: (_call, next) => (next(), next()) };
    const tools = composeTools({ echo }, [twice]);
    expect(() => execute(tools.echo!, { text: 'x' })).toThrow("The tool pipeline's entry 'twice' called next() twice.");
  });

  it('lets an entry refuse a call by throwing, before the tool runs', async () => {
    let ran = false;
    const tool = defineTool({ name: 'guarded', description: 'Guarded', inputSchema: z.object({}), execute: () => ((ran = true), 'ran') });
    const refuse: ToolMiddleware = {
      name: 'refuse',
      handle: () => {
        throw new Error('no');
      },
    };
    const ended: boolean[] = [];
    const tools = composeTools({ tool }, [watchToolCalls({ onToolResult: ({ ok }) => ended.push(ok) }), refuse]);
    expect(() => execute(tools.tool!, {})).toThrow('no');
    expect(ran).toBe(false);
    expect(ended).toEqual([false]);
  });

  it('passes tools without execute through untouched', () => {
    const clientSide = { description: 'client side', inputSchema: z.object({}) } as unknown as Tool;
    expect(composeTools({ clientSide }, [logging('a', [])]).clientSide).toBe(clientSide);
  });
});

describe('checkToolInput', () => {
  it('parses the input once, hands the checked value (defaults applied) to later entries and the tool', async () => {
    let parses = 0;
    const schema = z.object({ text: z.string() }).transform((value) => (parses++, value));
    const seen: unknown[] = [];
    const tool = defineTool({ name: 'once', description: 'Once', inputSchema: schema, execute: ({ text }) => text });
    const spy: ToolMiddleware = { name: 'spy', handle: (call, next) => (seen.push([call.checked, call.input]), next()) };
    const tools = composeTools({ tool, echo }, [checkToolInput, spy]);
    expect(await execute(tools.tool!, { text: 'a' })).toBe('a');
    expect(parses).toBe(1);
    expect(await execute(tools.echo!, { text: 'b' })).toBe('b');
    expect(seen).toEqual([
      [true, { text: 'a' }],
      [true, { text: 'b', times: 1 }],
    ]);
  });

  it("refuses bad input with a ToolInputError saying what to fix, and runs the tool's own check before later entries", async () => {
    const order: string[] = [];
    const tool = defineTool({
      name: 'write',
      description: 'Writes',
      inputSchema: z.object({ path: z.string() }),
      check: async ({ path }) => {
        order.push('check');
        if (path.startsWith('/')) throw new ToolInputError(`${path} is outside the workspace`);
      },
      execute: () => 'written',
    });
    const later: ToolMiddleware = { name: 'later', handle: (_call, next) => (order.push('later'), next()) };
    const tools = composeTools({ tool }, [checkToolInput, later]);
    expect(() => execute(tools.tool!, { path: 3 })).toThrow(ToolInputError);
    await expect(execute(tools.tool!, { path: '/etc/passwd' })).rejects.toThrow('/etc/passwd is outside the workspace');
    expect(await execute(tools.tool!, { path: 'a.txt' })).toBe('written');
    expect(order).toEqual(['check', 'check', 'later']);
  });
});

describe('stopToolCalls', () => {
  it('ends a call 2 s after its run is stopped when the tool ignores its signal', async () => {
    vi.useFakeTimers();
    const hanging = defineTool({ name: 'hang', description: 'Never ends', inputSchema: z.object({}), execute: () => new Promise<string>(() => {}) });
    const tools = composeTools({ hanging }, [checkToolInput, stopToolCalls]);
    const controller = new AbortController();
    const result = execute(tools.hanging!, {}, options('call_1', controller.signal)) as Promise<unknown>;
    controller.abort(new Error('stopped by a person'));
    const settled = vi.fn();
    result.then(settled, settled);
    await vi.advanceTimersByTimeAsync(1900);
    expect(settled).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(200);
    await expect(result).rejects.toThrow('stopped by a person');
    vi.useRealTimers();
  });

  it('lets a tool that honours the stop end with its own result', async () => {
    const polite = defineTool({
      name: 'polite',
      description: 'Ends when stopped',
      inputSchema: z.object({}),
      execute: (_input, { abortSignal }) => new Promise<string>((resolve) => abortSignal?.addEventListener('abort', () => resolve('stopped: run_1'))),
    });
    const tools = composeTools({ polite }, [checkToolInput, stopToolCalls]);
    const controller = new AbortController();
    const result = execute(tools.polite!, {}, options('call_1', controller.signal));
    controller.abort(new Error('stopped by a person'));
    expect(await result).toBe('stopped: run_1');
  });
});

describe('mapToolOutput', () => {
  it('maps each value of a stream of preliminary results and tells the end once', async () => {
    const ends: boolean[] = [];
    async function* stream() {
      yield 'a';
      yield 'b';
    }
    const mapped = mapToolOutput(() => stream(), { value: (value) => String(value).toUpperCase(), end: (ok) => ends.push(ok) }) as AsyncIterable<string>;
    const values: string[] = [];
    for await (const value of mapped) values.push(value);
    expect(values).toEqual(['A', 'B']);
    expect(ends).toEqual([true]);
  });

  it('maps the error of a failed promise', async () => {
    const mapped = mapToolOutput(() => Promise.reject(new Error('secret 123')), { error: () => new Error('secret [redacted]') });
    await expect(mapped).rejects.toThrow('secret [redacted]');
  });
});
