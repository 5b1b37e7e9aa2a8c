import { generateText, stepCountIs, streamText, type LanguageModel, type ToolSet } from 'ai';
import { z } from 'zod';
import { builtInAgents } from '../src/agents/built-in-agents.ts';
import { defineTool } from '../src/tools/define-tool.ts';
import { noopTool, workerSystem } from './bench-tools.ts';

/**
 * Which AI SDK call the baseline uses for the parent and for each subagent. The SDK's defaults
 * throughout, except `generateText, telemetry off`, which turns off the SDK's telemetry as cadre
 * does when nobody receives it.
 */
export type BareCall = 'streamText' | 'generateText' | 'generateText, telemetry off';

const mainSystem = builtInAgents.find((agent) => agent.name === 'main')?.system ?? '';

/** Runs an agent loop to its end: `streamText` with its full stream consumed, or `generateText`. */
export async function bareLoop(call: BareCall, model: LanguageModel, instructions: string, prompt: string, tools: ToolSet, maxSteps: number): Promise<string> {
  const options = { model, instructions, prompt, tools, stopWhen: stepCountIs(maxSteps) };
  if (call === 'generateText') return (await generateText(options)).text;
  if (call === 'generateText, telemetry off') return (await generateText({ ...options, telemetry: { isEnabled: false } })).text;
  const result = streamText(options);
  for await (const part of result.fullStream) {
    if (part.type === 'error') throw part.error;
  }
  return result.text;
}

/**
 * The baseline: the same delegation written directly on the AI SDK, with no persistence. The
 * parent's `agent` tool runs the subagent's loop inline and returns its answer.
 *
 * @example await bareFanOutRound({ call: 'streamText', model, toolCalls: 5 })
 */
export async function bareFanOutRound({ call, model, toolCalls }: { call: BareCall; model: LanguageModel; toolCalls: number }): Promise<void> {
  const agent = defineTool({
    name: 'agent',
    description: 'Delegates one task to a subagent and returns its answer.',
    inputSchema: z.object({ agent: z.string(), task: z.string().min(1), description: z.string().max(80).optional() }),
    execute: ({ task }) => bareLoop(call, model, workerSystem, task, { noop: noopTool }, toolCalls + 1),
  });
  const text = await bareLoop(call, model, mainSystem, 'Fan out the work.', { agent }, 20);
  if (text === '') throw new Error('The bare parent ended without an answer.');
}
