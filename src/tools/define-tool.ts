import { jsonSchema, tool, type Tool, type ToolExecutionOptions } from 'ai';
import { z } from 'zod';
import { ToolInputError } from './tool-input-error.ts';

export { ToolInputError } from './tool-input-error.ts';

/** What a tool can do to the world, for permission rules (CONTRACT section 10). */
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
   * Refuses a call that can never run (a path outside the workspace) by throwing a
   * {@link ToolInputError}: called before permission rules are consulted, so nobody is asked to
   * approve it. `execute` checks again (the file system may change meanwhile). @default none
   */
  check?: (input: INPUT) => Promise<void> | void;
  execute: (input: INPUT, options: ToolExecutionOptions<any>) => Promise<string> | string;
}

/** What cadre knows of a tool made by {@link defineTool}. */
export interface ToolInfo {
  name: string;
  risk: ToolRisk;
  /** The main argument of a raw (unchecked) input, when it has one. */
  argument(input: unknown): string | undefined;
  /** Throws a {@link ToolInputError} for an input the tool would refuse anyway; see `ToolDefinition.check`. */
  check(input: unknown): Promise<void>;
}

const toolInfos = new WeakMap<object, ToolInfo>();

/** The name, risk and main argument of a tool made by {@link defineTool}; undefined for other tools. */
export function toolInfo(tool: object): ToolInfo | undefined {
  return toolInfos.get(tool);
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
  toolInfos.set(made, {
    name: definition.name,
    risk: definition.risk ?? 'read',
    argument(input) {
      if (!argumentOf) return undefined;
      const parsed = definition.inputSchema.safeParse(input);
      return parsed.success ? argumentOf(parsed.data) : undefined;
    },
    async check(input) {
      const parsed = definition.inputSchema.safeParse(input);
      if (!parsed.success) throw new ToolInputError(describeInputProblems(definition.name, parsed.error));
      await definition.check?.(parsed.data);
    },
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
