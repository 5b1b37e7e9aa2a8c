import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunRecord } from '../src/store/records.ts';
import type { ScriptedWire } from '../src/testing/index.ts';
import { createWorkspace, type Workspace } from './helpers/cadre-cli.ts';

let workspace: Workspace;
beforeAll(async () => {
  workspace = await createWorkspace();
});
afterAll(() => workspace.close());

// cadre's own providers on their real wires: @ai-sdk/anthropic speaks Messages, @ai-sdk/openai speaks Responses.
// The base URL comes from --base-url, or from CADRE_BASE_URL (`baseURL: 'env'`).
const models: Array<{ model: string; wire: ScriptedWire; env: Record<string, string>; baseURL: 'flag' | 'env' }> = [
  { model: 'anthropic:claude-scripted', wire: 'messages', env: { ANTHROPIC_API_KEY: 'test-anthropic-key' }, baseURL: 'env' },
  { model: 'openai:gpt-scripted', wire: 'responses', env: { OPENAI_API_KEY: 'test-openai-key' }, baseURL: 'flag' },
  { model: 'openai-compatible:scripted', wire: 'chat-completions', env: {}, baseURL: 'flag' },
];

describe.each(models)('cadre run --model $model', ({ model, wire, env, baseURL }) => {
  it(`delegates to a subagent that calls a tool, over the ${wire} wire`, async () => {
    const before = workspace.server.requests.length;
    const url = workspace.server.baseURL;
    const flags = ['--model', model, ...(baseURL === 'flag' ? ['--base-url', url] : []), '--db', workspace.database];
    const result = await workspace.run(['run', ...flags, 'delegate please'], { env: baseURL === 'env' ? { ...env, CADRE_BASE_URL: url } : env });
    expect(result.stderr).toMatch(/\[run_\w+ scout\] completed \(\d+s\): The workspace holds notes\.txt/);
    expect(result.stdout).toBe('Final answer: the workspace holds notes.txt and src/app.ts.\n');
    expect(result.code).toBe(0);
    const sessionId = result.stderr.match(/Session (ses_\w+)/)![1];
    const runs = await workspace.json<RunRecord[]>(['runs', sessionId]);
    expect(runs).toMatchObject([{ status: 'completed', agent: 'scout' }]);

    const requests = workspace.server.requests.slice(before);
    // With workers (scripts/test-e2e-workers.ts), the subagent runs on their model, not this one.
    const ours = workspace.workers.length > 0 ? requests.filter((request) => !request.system.includes('You are the scout')) : requests;
    expect(ours.length).toBeGreaterThanOrEqual(2);
    expect(ours.every((request) => request.wire === wire)).toBe(true);
    // The primary's second request carries the agent tool's result, and the subagent's the list_files result.
    const toolResults = requests.flatMap((request) => request.messages).filter((message) => message.role === 'tool');
    expect(toolResults.some((message) => message.content.includes('notes.txt'))).toBe(true);
    expect(toolResults.some((message) => message.content.includes('The workspace holds notes.txt'))).toBe(true);
    expect(JSON.stringify(workspace.server.received)).not.toMatch(/test-(anthropic|openai)-key/);
  });
});
