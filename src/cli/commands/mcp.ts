import type { Command } from 'commander';
import type { CliContext, ExitCode } from '../cli-context.ts';
import { collect, type RuntimeFlags } from '../command-options.ts';
import type { McpFlags } from '../mcp.ts';

/** Registers `cadre mcp` (serve), `cadre mcp trust` and `cadre mcp list`; the MCP SDK loads when one runs. */
export function registerMcp(program: Command, context: CliContext, exit: ExitCode): void {
  const mcp = program
    .command('mcp')
    .description("cadre's delegation tools as an MCP server over stdio; trust and list the MCP servers cadre's agents use")
    .option('--session <id>', "the parent session of the host's runs (default: one per workspace)")
    .option('--http <port>', 'serve streamable HTTP on 127.0.0.1:PORT instead of stdio, behind a bearer token (0: any free port)')
    .option('--agents <dir>', 'also load agent files from this directory (repeatable)', collect)
    .option('--model <spec>', 'model spec provider:model-id for the subagents (or CADRE_MODEL)')
    .option('--base-url <url>', 'base URL of the model API, for openai-compatible: (or CADRE_BASE_URL)')
    .action(async (_flags: McpFlags, command: Command) => {
      const { mcpCommand } = await import('../mcp.ts');
      exit.code = await mcpCommand(context, command.optsWithGlobals<McpFlags>());
    });
  mcp
    .command('trust')
    .description("trust the servers of this project's .mcp.json (all, or those named), as they are defined now")
    .argument('[names...]', 'server names (default: every server of .mcp.json)')
    .action(async (names: string[], _flags: RuntimeFlags, command: Command) => {
      const { mcpTrustCommand } = await import('../mcp-servers.ts');
      exit.code = await mcpTrustCommand(context, command.optsWithGlobals<RuntimeFlags>(), names);
    });
  mcp
    .command('list')
    .description('start each MCP server agents may use and list its tools, or why it failed')
    .action(async (_flags: RuntimeFlags, command: Command) => {
      const { mcpListCommand } = await import('../mcp-servers.ts');
      exit.code = await mcpListCommand(context, command.optsWithGlobals<RuntimeFlags>());
    });
}
