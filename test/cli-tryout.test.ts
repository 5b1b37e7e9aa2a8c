import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createWorkspace, type Workspace } from './helpers/cadre-cli.ts';

// What a new user trying `cadre run` must see on stderr rather than only in an export.

let workspace: Workspace;

beforeEach(async () => {
  workspace = await createWorkspace();
});

afterEach(async () => {
  await workspace.close();
});

describe('cadre run tells the person', () => {
  it('that an MCP server failed to start, once per server', async () => {
    const config = {
      limits: { maxActivePerParent: 4 },
      mcpServers: { dead: { command: 'sh', args: ['-c', 'echo no such thing >&2; exit 3'] }, gone: { command: 'cadre-no-such-program-here' } },
    };
    await writeFile(join(workspace.cwd, 'cadre.config.json'), JSON.stringify(config));
    expect((await workspace.run(['trust'])).code).toBe(0);
    // The primary agent takes two steps (a delegation, then its answer): the servers are needed at each.
    const result = await workspace.run(['run', ...workspace.modelFlags, 'delegate please']);
    expect(result.code).toBe(0);
    const warnings = result.stderr.split('\n').filter((line) => line.startsWith('cadre: warning: MCP server'));
    expect(warnings).toHaveLength(2);
    expect(warnings.find((line) => line.includes("'dead'"))).toMatch(/^cadre: warning: MCP server 'dead' \(.*cadre\.config\.json\) failed to start: .+/);
    expect(warnings.find((line) => line.includes("'gone'"))).toMatch(/failed to start/);
  });
});
