import type { ScriptedWire } from '../../src/testing/index.ts';

/** A cadre model spec that speaks each of the scripted server's wires, and the key its provider insists on. */
export const wireModels: Record<ScriptedWire, { model: string; env: Record<string, string> }> = {
  // @ai-sdk/anthropic speaks Messages.
  messages: { model: 'anthropic:claude-scripted', env: { ANTHROPIC_API_KEY: 'test-anthropic-key' } },
  // @ai-sdk/openai speaks Responses.
  responses: { model: 'openai:gpt-scripted', env: { OPENAI_API_KEY: 'test-openai-key' } },
  'chat-completions': { model: 'openai-compatible:scripted', env: {} },
};

/** The three wires, for `describe.each`. */
export const scriptedWires = Object.keys(wireModels) as ScriptedWire[];

/**
 * `--model <spec> --base-url <baseURL>` and the environment for a wire, so that a test of `cadre`
 * runs on each: `workspace.run(['run', ...flags, '--db', workspace.database, prompt], { env })`.
 */
export function wireModelFlags(wire: ScriptedWire, baseURL: string): { flags: string[]; env: Record<string, string> } {
  const { model, env } = wireModels[wire];
  return { flags: ['--model', model, '--base-url', baseURL], env };
}
