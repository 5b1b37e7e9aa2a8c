import { createHash } from 'node:crypto';
import { readFileSync, realpathSync } from 'node:fs';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createMcpHub } from '../mcp/server/mcp-hub.ts';
import { createMcpServer } from '../mcp/server/create-mcp-server.ts';
import { createRunTaskStore } from '../mcp/server/run-task-store.ts';
import { writeLine, type CliContext } from './cli-context.ts';
import type { RuntimeFlags } from './command-options.ts';
import { openRuntime } from './open-runtime.ts';

/** Options of `cadre mcp`. */
export interface McpFlags extends RuntimeFlags {
  session?: string;
}

/**
 * The parent session of a workspace's MCP hosts: the same for every `cadre mcp` started in this
 * directory, so a host that restarts (or a second conversation) still reads its runs.
 */
export function workspaceSessionId(cwd: string): string {
  let directory = cwd;
  try {
    directory = realpathSync(cwd);
  } catch {
    // A directory that cannot be resolved still names itself.
  }
  return `ses_mcp_${createHash('sha256').update(directory).digest('hex').slice(0, 20)}`;
}

/**
 * `cadre mcp`: cadre's delegation tools as an MCP server over stdio until the client goes away.
 * Runs the client started go on after it disconnects; the process leaves once they are over (or on
 * SIGINT/SIGTERM, after which the next `cadre mcp` resumes them).
 */
export async function mcpCommand(context: CliContext, flags: McpFlags, signal?: AbortSignal): Promise<number> {
  // stdout carries the protocol: anything a library prints there would break it.
  const restoreConsole = keepStdoutForProtocol();
  const runtime = await openRuntime({ context, flags, requireModel: true, approvals: 'wait' });
  const { cadre } = runtime;
  const sessionId = flags.session ?? workspaceSessionId(context.cwd);
  const hub = createMcpHub({ cadre, sessionId, onError: (error) => writeLine(context.stderr, `cadre mcp: ${error instanceof Error ? error.message : String(error)}`) });
  try {
    const tools = cadre.tools({ sessionId });
    const taskStore = createRunTaskStore({ cadre, sessionId, tools });
    await cadre.recover();
    const server = createMcpServer({ cadre, sessionId, tools, taskStore, version: packageVersion() });
    hub.add(server);
    const closed = new Promise<void>((resolve) => (server.onclose = resolve));
    await server.connect(new StdioServerTransport());
    writeLine(context.stderr, `cadre mcp: serving session ${sessionId} over stdio.`);
    const stopped = untilStopped(signal);
    await Promise.race([closed, stopped.promise]);
    if (!stopped.done()) {
      // The client went away: what it started goes on until it ends.
      await Promise.race([cadre.waitForIdle(sessionId), stopped.promise]);
    }
    stopped.dispose();
    await server.close().catch(() => {});
    return 0;
  } finally {
    hub.close();
    await runtime.close();
    restoreConsole();
  }
}

/** Resolves on the first SIGINT or SIGTERM (or when `signal` aborts). */
function untilStopped(signal?: AbortSignal) {
  let done = false;
  let resolve!: () => void;
  const promise = new Promise<void>((settle) => (resolve = settle));
  const stop = () => {
    done = true;
    resolve();
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  signal?.addEventListener('abort', stop, { once: true });
  return {
    promise,
    done: () => done,
    dispose() {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      signal?.removeEventListener('abort', stop);
    },
  };
}

/** Sends `console.log` and `console.info` to stderr while the protocol owns stdout. */
function keepStdoutForProtocol(): () => void {
  const { log, info } = console;
  console.log = (...values: unknown[]) => console.error(...values);
  console.info = console.log;
  return () => {
    console.log = log;
    console.info = info;
  };
}

function packageVersion(): string {
  return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
}
