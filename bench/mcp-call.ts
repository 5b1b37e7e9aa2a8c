/**
 * The cost of one MCP tool call over stdio against a direct tool call: the same `echo` tool, once
 * as a cadre tool (`defineTool`) called in process, once as `mcp__fx__echo` of a real MCP server
 * (test/fixtures/mcp-fixture-server.ts, the official SDK) reached through cadre's MCP client.
 * Calls run one after another, as a model's tool calls of one step would; medians of rounds.
 *
 * `node --expose-gc bench/mcp-call.ts [--quick]`, or `npm run bench -- --only mcp`.
 * @module
 */
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { createMcpClients } from '../src/mcp/client/mcp-clients.ts';
import { defineTool } from '../src/tools/define-tool.ts';
import { collectGarbage, fixed, markdownTable, median, startClock } from './measure.ts';

/** Sizes of the benchmark. */
export interface McpCallOptions {
  /** Calls per round. @default 500 */
  calls?: number;
  rounds?: number;
  warmUp?: number;
}

const fixture = resolve(import.meta.dirname, '..', 'test', 'fixtures', 'mcp-fixture-server.ts');
const options = { toolCallId: 'bench', messages: [], context: {} } as never;

/** Runs the benchmark and returns its report (markdown). */
export async function runMcpCall({ calls = 500, rounds = 10, warmUp = 2 }: McpCallOptions = {}): Promise<string> {
  const direct = defineTool({
    name: 'echo',
    description: 'Echoes the text back.',
    inputSchema: z.object({ text: z.string() }),
    risk: 'read',
    execute: ({ text }) => `echo: ${text}`,
  });
  const clients = createMcpClients({ servers: { fx: { config: { command: process.execPath, args: [fixture] }, source: 'bench' } } });
  try {
    const started = startClock();
    const { tools, failures } = await clients.tools(['fx']);
    const startMs = started().wallMs;
    if (failures.length > 0) throw failures[0];
    const remote = tools.mcp__fx__echo!;
    async function round(tool: typeof direct): Promise<{ wallMs: number; cpuMs: number }> {
      collectGarbage();
      const clock = startClock();
      for (let index = 0; index < calls; index++) {
        const answer = await tool.execute!({ text: `call ${index}` }, options);
        if (answer !== `echo: call ${index}`) throw new Error(`unexpected answer: ${String(answer)}`);
      }
      return clock();
    }
    const measured = { direct: [] as Array<{ wallMs: number; cpuMs: number }>, mcp: [] as Array<{ wallMs: number; cpuMs: number }> };
    for (let index = 0; index < warmUp + rounds; index++) {
      const pair = { direct: await round(direct), mcp: await round(remote) };
      if (index >= warmUp) {
        measured.direct.push(pair.direct);
        measured.mcp.push(pair.mcp);
      }
    }
    const perCall = (samples: Array<{ wallMs: number; cpuMs: number }>, key: 'wallMs' | 'cpuMs') =>
      (median(samples.map((sample) => sample[key])) / calls) * 1000;
    const directWall = perCall(measured.direct, 'wallMs');
    const mcpWall = perCall(measured.mcp, 'wallMs');
    const table = markdownTable(
      ['tool call', 'µs per call (wall)', 'µs per call (CPU of this process)', 'ratio to direct (wall)'],
      [
        ['direct (defineTool, in process)', fixed(directWall, 1), fixed(perCall(measured.direct, 'cpuMs'), 1), '1.0×'],
        ['MCP over stdio (mcp__fx__echo)', fixed(mcpWall, 1), fixed(perCall(measured.mcp, 'cpuMs'), 1), `${fixed(mcpWall / directWall, 0)}×`],
      ],
    );
    return `## One MCP tool call over stdio vs a direct tool call\n\n${calls} sequential calls per round, median of ${rounds} rounds (${warmUp} warm-up). Starting the server and listing its tools: ${fixed(startMs)} ms, once per process.\n\n${table}\n`;
  } finally {
    await clients.close();
  }
}

if (import.meta.main) {
  const { values } = parseArgs({ options: { quick: { type: 'boolean', default: false } } });
  console.log(await runMcpCall(values.quick ? { calls: 100, rounds: 3, warmUp: 1 } : {}));
}
