import { createHash, randomBytes } from 'node:crypto';
import { readFileSync, realpathSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { configLocations } from '../config/config-locations.ts';
import { ConfigError } from '../errors/config-error.ts';
import { serveMcpHttp } from '../mcp/server/serve-mcp-http.ts';
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
  /** `--http PORT`: streamable HTTP on 127.0.0.1 instead of stdio. */
  http?: string;
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
  const port = flags.http === undefined ? undefined : Number(flags.http);
  if (flags.http !== undefined && (!/^\d+$/.test(flags.http) || port! > 65_535))
    throw new ConfigError(`--http must be a port from 0 to 65535, not '${flags.http}'.`);
  // stdout carries the protocol: anything a library prints there would break it.
  const restoreConsole = port === undefined ? keepStdoutForProtocol() : () => {};
  const runtime = await openRuntime({ context, flags, requireModel: true, approvals: 'wait' });
  const { cadre } = runtime;
  const sessionId = flags.session ?? workspaceSessionId(context.cwd);
  const hub = createMcpHub({
    cadre,
    sessionId,
    onError: (error) => writeLine(context.stderr, `cadre mcp: ${error instanceof Error ? error.message : String(error)}`),
  });
  try {
    const tools = cadre.tools({ sessionId });
    const taskStore = createRunTaskStore({ cadre, sessionId, tools });
    await cadre.recover();
    if (port !== undefined)
      return await serveHttp(
        context,
        flags,
        port,
        () => {
          const server = createMcpServer({ cadre, sessionId, tools, taskStore, version: packageVersion() });
          const remove = hub.add(server);
          server.onclose = remove;
          return server;
        },
        signal,
      );
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

/** `cadre mcp --http PORT`: until SIGINT or SIGTERM. */
async function serveHttp(context: CliContext, flags: McpFlags, port: number, makeServer: () => Server, signal?: AbortSignal): Promise<number> {
  const { token, generated, file } = await mcpToken(context, flags);
  const endpoint = await serveMcpHttp({
    port,
    token,
    createServer: makeServer,
    onError: (error) => writeLine(context.stderr, `cadre mcp: ${error instanceof Error ? error.message : String(error)}`),
  }).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'EADDRINUSE') throw new ConfigError(`port ${port} is in use on 127.0.0.1; pass --http N (or --http 0 for any free port).`);
    throw error;
  });
  if (flags.json) writeLine(context.stdout, JSON.stringify({ type: 'mcp-ready', url: endpoint.url, token }));
  else {
    writeLine(context.stdout, `cadre mcp: ${endpoint.url}`);
    writeLine(context.stdout, `Token: ${token}${generated ? ` (generated now, stored in ${file})` : ''}`);
    writeLine(context.stdout, 'Every request needs Authorization: Bearer <token>. Keep it secret.');
  }
  const stopped = untilStopped(signal);
  await stopped.promise;
  stopped.dispose();
  await endpoint.close();
  return 0;
}

/**
 * The bearer token of `cadre mcp --http`: `CADRE_MCP_TOKEN`, else the one stored in the user's
 * configuration directory (`mcp-token`), else a new one, generated once and stored there (mode 600).
 */
async function mcpToken(context: CliContext, flags: McpFlags): Promise<{ token: string; generated: boolean; file: string }> {
  const { userDirectory } = configLocations({ cwd: context.cwd, configFile: flags.config, env: context.env, home: context.env.HOME });
  const file = join(userDirectory, 'mcp-token');
  const fromEnv = context.env.CADRE_MCP_TOKEN?.trim();
  if (fromEnv) return { token: fromEnv, generated: false, file };
  const stored = (await readFile(file, 'utf8').catch(() => '')).trim();
  if (stored) return { token: stored, generated: false, file };
  const token = randomBytes(24).toString('base64url');
  await mkdir(userDirectory, { recursive: true });
  await writeFile(file, `${token}\n`, { mode: 0o600, flag: 'wx' }).catch(async (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EEXIST') throw error;
  });
  // Another process may have stored one first: use whichever is stored.
  return { token: (await readFile(file, 'utf8')).trim(), generated: true, file };
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
