import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunRecord } from '../src/store/records.ts';
import { createWorkspace, type Workspace } from './helpers/cadre-cli.ts';
import { scriptedWires, wireModelFlags } from './helpers/wires.ts';

let workspace: Workspace;
beforeAll(async () => {
  workspace = await createWorkspace();
});
afterAll(() => workspace.close());

// cadre's own providers on their real wires: @ai-sdk/anthropic speaks Messages, @ai-sdk/openai
// speaks Responses. The base URL comes from --base-url, and for Messages from CADRE_BASE_URL.
describe.each(scriptedWires)('cadre run on the %s wire', (wire) => {
  it('delegates to a subagent that calls a tool', async () => {
    const before = workspace.server.requests.length;
    const url = workspace.server.baseURL;
    const { flags, env } = wireModelFlags(wire, url);
    const fromEnv = wire === 'messages';
    const args = ['run', ...(fromEnv ? flags.slice(0, 2) : flags), '--db', workspace.database, 'delegate please'];
    const result = await workspace.run(args, { env: fromEnv ? { ...env, CADRE_BASE_URL: url } : env });
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
    // The subagent's second request carries the list_files result, and the primary's the agent tool's.
    const toolResults = (scout: boolean) =>
      requests
        .filter((request) => request.system.includes('You are the scout') === scout)
        .flatMap((request) => request.messages)
        .filter((message) => message.role === 'tool');
    expect(toolResults(true).some((message) => message.content.includes('src') && message.content.includes('notes.txt'))).toBe(true);
    expect(toolResults(false).some((message) => message.content.includes('The workspace holds notes.txt'))).toBe(true);
    expect(JSON.stringify(workspace.server.received)).not.toMatch(/test-(anthropic|openai)-key/);
  });
});
