import type { Command } from 'commander';
import type { CliContext, ExitCode } from '../cli-context.ts';
import { collect } from '../command-options.ts';
import type { McpFlags } from '../mcp.ts';

/** Registers `cadre mcp`; the MCP SDK and the runtime are loaded when it runs. */
export function registerMcp(program: Command, context: CliContext, exit: ExitCode): void {
  program
    .command('mcp')
    .description("cadre's delegation tools as an MCP server over stdio (or streamable HTTP with --http)")
    .option('--session <id>', "the parent session of the host's runs (default: one per workspace)")
    .option('--agents <dir>', 'also load agent files from this directory (repeatable)', collect)
    .option('--model <spec>', 'model spec provider:model-id for the subagents (or CADRE_MODEL)')
    .option('--base-url <url>', 'base URL of the model API, for openai-compatible: (or CADRE_BASE_URL)')
    .action(async (_flags: McpFlags, command: Command) => {
      const { mcpCommand } = await import('../mcp.ts');
      exit.code = await mcpCommand(context, command.optsWithGlobals<McpFlags>());
    });
}
