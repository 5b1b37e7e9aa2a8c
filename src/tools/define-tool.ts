import { jsonSchema, tool, type Tool, type ToolExecutionOptions } from 'ai';
import { z } from 'zod';
import { originalTool } from '../loop/tool-pipeline.ts';
import type { ApprovalPreview } from '../store/records.ts';
import { ToolInputError } from './tool-input-error.ts';

export { ToolInputError } from './tool-input-error.ts';

/** What a tool can do to the world, for permission rules (docs/tools-and-approvals.md). */
export type ToolRisk = 'read' | 'write' | 'exec' | 'network';

/** The tool risks, least dangerous first. */
export const toolRisks: readonly ToolRisk[] = ['read', 'write', 'exec', 'network'];

/** A cadre tool: data first, so tools can be listed, documented and tested. */
export interface ToolDefinition<INPUT> {
  name: string;
  description: string;
  inputSchema: z.ZodType<INPUT>;
  /** What the tool can do, for permission rules. @default 'read' */
  risk?: ToolRisk;
  /**
   * The call's main argument (`bash`'s command, `write_file`'s path): what rules with an argument
   * prefix (`bash(npm test*)`) match and what an approval shows. @default none
   */
  argument?: (input: INPUT) => string | undefined;
  /**
   * What an ask for approval shows of a call, computed when it asks: the diff a write would make,
   * the full command. Secrets in it are redacted by whoever stores it. @default none
   */
  preview?: (input: INPUT) => Promise<ApprovalPreview | undefined> | ApprovalPreview | undefined;
  /**
   * Refuses a call that can never run (a path outside the workspace) by throwing a
   * {@link ToolInputError}: called before permission rules are consulted, so nobody is asked to
   * approve it. `execute` checks again (the file system may change meanwhile). @default none
   */
  check?: (input: INPUT) => Promise<void> | void;
  /**
   * Whether the tool's output may hold a secret nobody has redacted yet: a file, a command's
   * output, an environment value. A tool whose output is made only of text that already passed
   * cadre's redaction (a subagent's answer, a run's activity) says false, so its results are not
   * scanned a second time. @default true
   */
  carriesSecrets?: boolean;
  execute: (input: INPUT, options: ToolExecutionOptions<any>) => Promise<string> | string;
}

/** What cadre knows of a tool made by {@link defineTool}. */
export interface ToolInfo {
  name: string;
  risk: ToolRisk;
  /** See `ToolDefinition.carriesSecrets`. */
  carriesSecrets: boolean;
  /** The main argument of a raw (unchecked) input, when it has one. */
  argument(input: unknown): string | undefined;
  /** Throws a {@link ToolInputError} for an input the tool would refuse anyway; see `ToolDefinition.check`. */
  check(input: unknown): Promise<void>;
  /** The input the tool's schema accepts (defaults applied), or a {@link ToolInputError} saying what to fix. */
  parse(input: unknown): unknown;
  /** The main argument of an input {@link ToolInfo.parse} returned. */
  argumentOfParsed(input: unknown): string | undefined;
  /** What an ask shows of a call with an input {@link ToolInfo.parse} returned; see `ToolDefinition.preview`. */
  previewOfParsed(input: unknown): Promise<ApprovalPreview | undefined>;
  /** The tool's own check (`ToolDefinition.check`) of a parsed input; undefined when it has none. */
  checkParsed(input: unknown): Promise<void> | void;
  /** The tool's `execute` on a parsed input, without checking it again. */
  executeParsed(input: unknown, options: ToolExecutionOptions<any>): Promise<string> | string;
}

const toolInfos = new WeakMap<object, ToolInfo>();

/**
 * The name, risk and main argument of a tool made by {@link defineTool} (also once it went
 * through the tool pipeline, `composeTools`); undefined for other tools.
 */
export function toolInfo(tool: object): ToolInfo | undefined {
  return toolInfos.get(tool) ?? toolInfos.get(originalTool(tool as Tool));
}

/**
 * Turns a {@link ToolDefinition} into an AI SDK tool. The model sees the zod schema as JSON
 * schema, but input is checked inside `execute`, so a bad call comes back to the model as a tool
 * error that says what to fix (never a crash of the loop, never a raw validation dump).
 *
 * @example defineTool({ name: 'echo', description: 'Echoes', inputSchema: z.object({ text: z.string() }), execute: ({ text }) => text })
 */
export function defineTool<INPUT>(definition: ToolDefinition<INPUT>): Tool {
  const made = tool({
    description: definition.description,
    inputSchema: modelSchemaOf(definition.inputSchema),
    execute: async (raw: unknown, options: ToolExecutionOptions<any>) => {
      const parsed = definition.inputSchema.safeParse(raw);
      if (!parsed.success) throw new ToolInputError(describeInputProblems(definition.name, parsed.error));
      return definition.execute(parsed.data, options);
    },
  });
  const argumentOf = definition.argument;
  const parse = (input: unknown): INPUT => {
    const parsed = definition.inputSchema.safeParse(input);
    if (!parsed.success) throw new ToolInputError(describeInputProblems(definition.name, parsed.error));
    return parsed.data;
  };
  toolInfos.set(made, {
    name: definition.name,
    risk: definition.risk ?? 'read',
    carriesSecrets: definition.carriesSecrets ?? true,
    argument(input) {
      if (!argumentOf) return undefined;
      const parsed = definition.inputSchema.safeParse(input);
      return parsed.success ? argumentOf(parsed.data) : undefined;
    },
    async check(input) {
      await definition.check?.(parse(input));
    },
    parse,
    argumentOfParsed: (input) => argumentOf?.(input as INPUT),
    previewOfParsed: async (input) => definition.preview?.(input as INPUT),
    checkParsed: (input) => definition.check?.(input as INPUT),
    executeParsed: (input, options) => definition.execute(input as INPUT, options),
  });
  return made;
}

/** Converting a zod schema costs more than a model step; tools are made per turn, schemas once. */
const modelSchemas = new WeakMap<z.ZodType, ReturnType<typeof jsonSchema<unknown>>>();

/** The JSON schema the model sees; input is accepted as is and checked in `execute`. */
function modelSchemaOf(inputSchema: z.ZodType): ReturnType<typeof jsonSchema<unknown>> {
  let schema = modelSchemas.get(inputSchema);
  if (!schema) {
    const converted = z.toJSONSchema(inputSchema, { io: 'input' }) as Record<string, unknown>;
    delete converted.$schema;
    schema = jsonSchema<unknown>(converted as Parameters<typeof jsonSchema>[0], { validate: (value) => ({ success: true, value }) });
    modelSchemas.set(inputSchema, schema);
  }
  return schema;
}

/** `Invalid input for tool 'agent': task: ...; max_turns: .... Fix these and call it again.` */
export function describeInputProblems(toolName: string, error: z.ZodError): string {
  const problems = error.issues.map((issue) => {
    const path = issue.path.length > 0 ? issue.path.join('.') : 'input';
    return `${path}: ${issue.message}`;
  });
  return `Invalid input for tool '${toolName}': ${problems.join('; ')}. Fix these and call it again.`;
}
