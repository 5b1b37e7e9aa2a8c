import type { Tool, ToolExecutionOptions } from 'ai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { checkToolInput } from '../tools/check-tool-input.ts';
import { defineTool } from '../tools/define-tool.ts';
import { recordToolCalls, type StartingToolCall, type ToolCallOutcome, type ToolCallRecorder } from './record-tool-calls.ts';
import { composeTools } from './tool-pipeline.ts';

const options: ToolExecutionOptions<any> = { toolCallId: 'call_1', messages: [], context: undefined };
const execute = (tool: Tool, input: unknown) => (tool.execute as (input: unknown, options: ToolExecutionOptions<any>) => unknown)(input, options);

// As in cadre's pipeline, the input check after the record runs the tool on the checked input.

/** A recorder that logs, and waits for `gate` (when given) before a call may run. */
function recorder(log: string[], gate?: Promise<void>): ToolCallRecorder & { outcomes: ToolCallOutcome[] } {
  const outcomes: ToolCallOutcome[] = [];
  return {
    outcomes,
    record(call: StartingToolCall) {
      log.push(`record ${call.toolName} ${JSON.stringify(call.input)}`);
      return gate;
    },
    settled(_id, outcome) {
      outcomes.push(outcome);
    },
  };
}

const tool = (run: () => any) => defineTool({ name: 'probe', description: 'Probe', inputSchema: z.object({}), execute: run });

describe('recordToolCalls', () => {
  it('runs a call at once, with no promise, when the record needs no wait and the tool answers at once', () => {
    const log: string[] = [];
    const journal = recorder(log);
    const tools = composeTools({ probe: tool(() => (log.push('run'), 'done')) }, [recordToolCalls(journal), checkToolInput]);
    expect(execute(tools.probe!, {})).toBe('done');
    expect(log).toEqual(['record probe {}', 'run']);
    expect(journal.outcomes).toEqual([{ ok: true, output: 'done' }]);
  });

  it('runs a call only once its record resolved', async () => {
    const log: string[] = [];
    let release!: () => void;
    const journal = recorder(log, new Promise<void>((resolve) => (release = resolve)));
    const tools = composeTools({ probe: tool(() => (log.push('run'), 'done')) }, [recordToolCalls(journal), checkToolInput]);
    const output = execute(tools.probe!, {}) as Promise<unknown>;
    await new Promise((resolve) => setImmediate(resolve));
    expect(log).toEqual(['record probe {}']);
    release();
    expect(await output).toBe('done');
    expect(log).toEqual(['record probe {}', 'run']);
  });

  it('never runs a call whose record failed', async () => {
    const log: string[] = [];
    const journal = recorder(log, Promise.reject(new Error('disk full')));
    const tools = composeTools({ probe: tool(() => (log.push('run'), 'done')) }, [recordToolCalls(journal), checkToolInput]);
    await expect(execute(tools.probe!, {})).rejects.toThrow('disk full');
    expect(log).toEqual(['record probe {}']);
    expect(journal.outcomes).toEqual([]);
  });

  it('tells how a failing call ended, thrown at once or rejected later, and passes the error on', async () => {
    const journal = recorder([]);
    const thrown = composeTools(
      {
        probe: tool(() => {
          throw new Error('at once');
        }),
      },
      [recordToolCalls(journal), checkToolInput],
    );
    expect(() => execute(thrown.probe!, {})).toThrow('at once');
    const rejected = composeTools(
      {
        probe: tool(async () => {
          throw new Error('later');
        }),
      },
      [recordToolCalls(journal), checkToolInput],
    );
    await expect(execute(rejected.probe!, {})).rejects.toThrow('later');
    expect(journal.outcomes.map((outcome) => !outcome.ok && (outcome.error as Error).message)).toEqual(['at once', 'later']);
  });

  it('drains a stream of preliminary results: the model and the recorder see its last value, once', async () => {
    const journal = recorder([]);
    const tools = composeTools(
      {
        probe: tool(async function* () {
          yield 'first';
          yield 'last';
        }),
      },
      [recordToolCalls(journal), checkToolInput],
    );
    expect(await execute(tools.probe!, {})).toBe('last');
    expect(journal.outcomes).toEqual([{ ok: true, output: 'last' }]);
  });
});
