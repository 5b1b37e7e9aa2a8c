import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunRecord } from '../src/store/records.ts';
import { createWorkspace, type Workspace } from './helpers/cadre-cli.ts';

let workspace: Workspace;
beforeAll(async () => {
  workspace = await createWorkspace();
});
afterAll(() => workspace.close());

function oneLine(stderr: string): string {
  const lines = stderr.trim().split('\n');
  expect(lines).toHaveLength(1);
  return lines[0];
}

describe('cadre agents', () => {
  it('lists the agents that load and reports a broken file with its path and field, exit 0', async () => {
    const directory = join(workspace.cwd, 'more-agents');
    await mkdir(directory, { recursive: true });
    await writeFile(join(directory, 'helper.md'), '---\ndescription: Helps.\n---\nYou help.\n');
    await writeFile(join(directory, 'broken.md'), '---\nname: broken\nmode: subagent\n---\nNo description.\n');
    const result = await workspace.run(['agents', '--agents', 'more-agents']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^helper\s+all\s+\(session model\)\s+all \(6\)\s+more-agents\/helper\.md\s+Helps\./m);
    expect(result.stdout).toMatch(/^scout\s+subagent/m);
    expect(result.stdout).toMatch(/^main\s+primary/m);
    expect(result.stderr).toContain(`${join(directory, 'broken.md')}: description: required`);
    const json = await workspace.run(['agents', '--agents', 'more-agents', '--json']);
    const document = JSON.parse(json.stdout) as { agents: Array<{ name: string }>; errors: Array<{ path: string; field: string }> };
    expect(document.agents.map((agent) => agent.name)).toEqual(['general', 'helper', 'main', 'scout']);
    expect(document.errors).toEqual([expect.objectContaining({ path: join(directory, 'broken.md'), field: 'description' })]);
  });
});

describe('configuration errors exit 2 with one line naming what to set', () => {
  it.each([
    [['--model', 'openai-compatible:scripted'], /--base-url.*CADRE_BASE_URL/],
    [['--model', 'mistral:large'], /unknown provider 'mistral'/],
    [['--model', 'anthropic:claude-sonnet-4-5'], /ANTHROPIC_API_KEY/],
    [[], /--model.*CADRE_MODEL.*cadre-scripted-server/],
    [['--model', 'openai-compatible:scripted', '--base-url', 'http://127.0.0.1:9/v1', '--agent', 'nope'], /Unknown agent 'nope'\. Primary agents: main/],
    [['--model', 'openai-compatible:scripted', '--base-url', 'not a url'], /--base-url must be a URL/],
    [['--bogus-flag'], /unknown option '--bogus-flag'/],
  ])('cadre run %j', async (flags, expected) => {
    const result = await workspace.run(['run', ...flags, 'hello']);
    expect(result.code).toBe(2);
    expect(result.stderr.split('\n')[0]).toMatch(expected);
    expect(result.stderr).not.toMatch(/\n\s+at /);
    expect(result.stdout).toBe('');
  });

  it('refuses a missing prompt when stdin is empty', async () => {
    const result = await workspace.run(['run', ...workspace.modelFlags]);
    expect(result.code).toBe(2);
    expect(oneLine(result.stderr)).toMatch(/^cadre: No prompt/);
  });
});

describe('model errors', () => {
  it('exits 1 with a one-line error when the primary agent fails', async () => {
    const result = await workspace.run(['run', ...workspace.modelFlags, 'primary fails']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^cadre: the primary agent failed: .*scripted primary failure.*$/m);
    expect(result.stderr.match(/scripted primary failure/g)).toHaveLength(1);
    expect(result.stderr).not.toMatch(/\n\s+at /);
    expect(result.stdout).toBe('');
  });

  it('marks a subagent run failed with model_error and lets the parent answer', async () => {
    const result = await workspace.run(['run', ...workspace.modelFlags, 'subagent fails']);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('The subagent failed with a model error, so I answer on my own.\n');
    expect(result.stderr).toMatch(/\[run_\w+ scout\] failed \(\d+s\): model_error: .*scripted subagent failure/);
    expect(result.stderr).not.toMatch(/\n\s+at /);
    const sessionId = result.stderr.match(/Session (ses_\w+)/)![1];
    const [run] = await workspace.json<RunRecord[]>(['runs', sessionId]);
    expect(run).toMatchObject({ status: 'failed', error: { kind: 'model_error' } });
  });
});
