import type { ToolExecutionOptions } from 'ai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { composeTools } from '../loop/tool-pipeline.ts';
import { createSecretRedactor } from '../models/secret-redactor.ts';
import { defineTool } from './define-tool.ts';
import { redactToolOutput } from './redact-tool-output.ts';

const key = 'zq-test-9f8e7d6c5b4a';
const call = (tool: { execute?: unknown }) =>
  (tool.execute as (input: unknown, options: ToolExecutionOptions<any>) => unknown)({}, { toolCallId: 'call_1', messages: [], context: undefined });

describe('redactToolOutput', () => {
  const redactor = createSecretRedactor({ env: { MY_API_KEY: key } });
  const printEnv = defineTool({ name: 'print_env', description: 'Prints', inputSchema: z.object({}), execute: () => `MY_API_KEY is ${key}` });
  const failing = defineTool({
    name: 'failing',
    description: 'Fails',
    inputSchema: z.object({}),
    execute: async () => {
      throw new Error(`bad key ${key}`);
    },
  });
  const subagent = defineTool({
    name: 'subagent',
    description: 'Already redacted',
    inputSchema: z.object({}),
    carriesSecrets: false,
    execute: () => `quoted ${key}`,
  });
  const tools = composeTools({ printEnv, failing, subagent }, [redactToolOutput(redactor)]);

  it('redacts what a tool returns and the errors it throws', async () => {
    expect(await call(tools.printEnv!)).toBe('MY_API_KEY is [redacted]');
    await expect(call(tools.failing!)).rejects.toThrow('bad key [redacted]');
  });

  it('leaves the output of a tool that cannot carry an unredacted secret unscanned', async () => {
    expect(tools.subagent).toBe(subagent);
    expect(await call(tools.subagent!)).toBe(`quoted ${key}`);
  });
});
