import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunRecord } from '../src/store/records.ts';
import type { ScriptedRequest, ScriptedTurn } from '../src/testing/index.ts';
import { createWorkspace, type Workspace } from './helpers/cadre-cli.ts';
import { scriptedWires, wireModelFlags, wireModels } from './helpers/wires.ts';

/** An agent whose front matter sets the shape of its results. */
const counterAgent = `---
description: Counts the files of the workspace.
mode: subagent
tools: [list_files]
output_schema:
  type: object
  properties:
    files:
      type: integer
      minimum: 0
  required: [files]
---
You are the counter. Count the files.
`;

/** The shape the parent asks of the scout in its call. */
const findingsSchema = {
  type: 'object',
  properties: { paths: { type: 'array', items: { type: 'string' } }, summary: { type: 'string' } },
  required: ['paths', 'summary'],
  additionalProperties: false,
};

/**
 * The parent fans out to the scout (schema in the call; it first gives a value missing a field,
 * then the repaired one through `final_result`) and the counter (schema in its front matter; it
 * answers with JSON alone), then ends with the values it read.
 */
function respond(request: ScriptedRequest): ScriptedTurn {
  if (request.system.includes('You are the scout')) {
    const repaired = request.messages.at(-1)?.content.includes('does not match the schema');
    return repaired
      ? { tool_calls: [{ name: 'final_result', arguments: { paths: ['notes.txt', 'src/app.ts'], summary: 'Two files.' } }] }
      : { tool_calls: [{ name: 'final_result', arguments: { paths: ['notes.txt'] } }] };
  }
  if (request.system.includes('You are the counter')) return { text: '{"files": 2}' };
  if (request.turn === 0) {
    return {
      tool_calls: [
        {
          name: 'agent_parallel',
          arguments: {
            tasks: [
              { agent: 'scout', task: 'Find the files', output_schema: findingsSchema },
              { agent: 'counter', task: 'Count the files' },
            ],
          },
        },
      ],
    };
  }
  const results = request.messages.at(-1)?.content ?? '';
  return { text: results.includes('"summary": "Two files."') && results.includes('"files": 2') ? 'Both values arrived.' : 'Values missing.' };
}

let workspace: Workspace;
beforeAll(async () => {
  // With workers (scripts/test-e2e-workers.ts), they carry out the runs of sessions on every wire: they get the keys too.
  workspace = await createWorkspace({ script: respond, workerEnv: { ...wireModels.messages.env, ...wireModels.responses.env } });
  await writeFile(join(workspace.cwd, '.cadre', 'agents', 'counter.md'), counterAgent);
});
afterAll(() => workspace.close());

describe.each(scriptedWires)('a pipeline gets validated JSON from subagents on the %s wire', (wire) => {
  it('carries result.value through cadre run --json, cadre show and the parent', async () => {
    const before = workspace.server.requests.length;
    const { flags, env } = wireModelFlags(wire, workspace.server.baseURL);
    const result = await workspace.run(['run', ...flags, '--db', workspace.database, '--json', 'count and find'], { env });
    expect(result.code).toBe(0);
    const lines = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; run?: RunRecord; text?: string; session_id?: string });
    expect(lines.at(-1)).toMatchObject({ type: 'session-end', status: 'completed', text: 'Both values arrived.' });
    const ended = lines.filter((line) => line.run?.status === 'completed').map((line) => line.run!);
    expect(ended.find((run) => run.agent === 'scout')?.result?.value).toEqual({ paths: ['notes.txt', 'src/app.ts'], summary: 'Two files.' });
    expect(ended.find((run) => run.agent === 'counter')?.result?.value).toEqual({ files: 2 });

    const sessionId = lines.at(-1)!.session_id!;
    const runs = await workspace.json<RunRecord[]>(['runs', sessionId]);
    expect(runs.map((run) => run.status)).toEqual(['completed', 'completed']);
    const scout = runs.find((run) => run.agent === 'scout')!;
    const { run: shown } = await workspace.json<{ run: RunRecord }>(['show', scout.id]);
    expect(shown.output_schema).toEqual(findingsSchema);
    expect(shown.result?.value).toEqual({ paths: ['notes.txt', 'src/app.ts'], summary: 'Two files.' });
    const text = await workspace.run(['show', scout.id, '--db', workspace.database]);
    expect(text.stdout).toContain('Value (output: json):\n{\n  "paths": [\n    "notes.txt",\n    "src/app.ts"\n  ],\n  "summary": "Two files."\n}');

    const requests = workspace.server.requests.slice(before);
    const scoutRequests = requests.filter((request) => request.system.includes('You are the scout'));
    // One attempt and one repair, which names the missing field.
    expect(scoutRequests).toHaveLength(2);
    expect(scoutRequests[1].messages.at(-1)?.content).toContain('summary: is required');
    expect(requests.every((request) => request.wire === wire)).toBe(true);
    expect(scoutRequests.every((request) => request.tools.includes('final_result'))).toBe(true);
  });
});
