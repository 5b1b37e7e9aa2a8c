import { jsonSchema, tool, type Tool } from 'ai';
import { outputValidator, type OutputSchema } from './output-schema.ts';

/** The name of the tool a run with an `output_schema` gives its result with. */
export const finalResultToolName = 'final_result';

/** What a run's attempt ended with: a value the schema accepts, or what is wrong. */
export type OutputVerdict =
  | { ok: true; value: Record<string, unknown>; text: string }
  | {
      ok: false;
      /** What is wrong, naming the failing fields: said to the subagent, and the run's error at the end. */
      problem: string;
      /** The last thing the subagent gave (its text, or the value it passed to the tool as JSON): the partial result. */
      lastText: string;
    };

/**
 * The structured result of one run: the final tool it is offered (its input schema the output
 * schema), and the verdict on what each attempt ended with.
 */
export interface OutputCapture {
  /** The tool `final_result`, to add to the run's tools. */
  readonly tool: Tool;
  /** Whether the subagent called the tool in this attempt: its loop ends after that step. */
  called(): boolean;
  /**
   * The verdict on an attempt: the last call of the tool when there was one, otherwise the final
   * text when it is JSON alone (no code fence).
   * @param finalText the text of the attempt's last step.
   * @param lastText the last non-empty text of any step.
   */
  judge(finalText: string, lastText: string): OutputVerdict;
  /** The message that sends a failed attempt back to the subagent. */
  repairMessage(problem: string): string;
  /** Starts the next attempt (after a repair message). */
  nextAttempt(): void;
  /**
   * The value a stored transcript already ends with: its last assistant message called the tool
   * with a value the schema accepts, and no user message came after it (a run whose process died
   * before its end was written). Null otherwise.
   */
  givenIn(transcript: ReadonlyArray<{ role: string; content: unknown }>): { value: Record<string, unknown>; text: string } | null;
}

/** The tool's description: how the subagent gives its result. */
const toolDescription =
  'Give your final result: call this once, at the end of your work, with the result as its input. It must match the input schema; your run ends when it does.';

/**
 * Creates the {@link OutputCapture} of a run whose result must match `schema` (checked before:
 * `checkOutputSchema`). One mechanism on every provider: a final tool, which every provider cadre
 * speaks to supports (tool calls are all `openai-compatible:` models need), plus a final text
 * that is JSON alone, for models that answer that way.
 */
export function createOutputCapture(schema: OutputSchema): OutputCapture {
  const validate = outputValidator(schema);
  let calls: unknown[] = [];
  const { $schema: _dialect, ...toolSchema } = schema;
  const finalTool = tool({
    description: toolDescription,
    // Checked by cadre's validator (one validator): the SDK passes the input as the model sent it.
    inputSchema: jsonSchema(toolSchema as Parameters<typeof jsonSchema>[0]),
    execute: async (input: unknown) => {
      calls.push(input);
      const problems = validate(input);
      return problems.length === 0
        ? 'Accepted: your result is recorded and your run ends here.'
        : `Not accepted: ${problems.join('; ')}. A message follows with what to fix.`;
    },
  }) as Tool;
  return {
    tool: finalTool,
    called: () => calls.length > 0,
    judge(finalText, lastText) {
      if (calls.length > 0) {
        const input = calls[calls.length - 1];
        const problems = validate(input);
        if (problems.length === 0) return accepted(input as Record<string, unknown>);
        return {
          ok: false,
          problem: `The value you gave ${finalResultToolName} does not match the schema: ${problems.join('; ')}.`,
          lastText: jsonText(input),
        };
      }
      const read = readJsonAlone(finalText);
      if ('problem' in read) return { ok: false, problem: read.problem, lastText };
      const problems = validate(read.value);
      if (problems.length === 0) return accepted(read.value as Record<string, unknown>);
      return { ok: false, problem: `Your final JSON does not match the schema: ${problems.join('; ')}.`, lastText };
    },
    repairMessage(problem) {
      return [
        problem,
        `Give your result now: call ${finalResultToolName} with it as its input (or answer with the JSON value alone: no code fence, no other text). It must match this JSON Schema:`,
        JSON.stringify(toolSchema),
      ].join('\n');
    },
    nextAttempt() {
      calls = [];
    },
    givenIn(transcript) {
      // Only a step stored whole counts: the call and its result (a call cut off by the crash is answered by the loop).
      const answered = new Set<string>();
      for (let index = transcript.length - 1; index >= 0; index--) {
        const message = transcript[index];
        if (message.role === 'user' || !Array.isArray(message.content)) return null;
        const parts = message.content as Array<{ type?: string; toolName?: string; toolCallId?: string; input?: unknown }>;
        if (message.role === 'tool') {
          for (const part of parts) if (part.type === 'tool-result' && part.toolCallId) answered.add(part.toolCallId);
          continue;
        }
        const call = parts.findLast((part) => part.type === 'tool-call' && part.toolName === finalResultToolName);
        if (!call || !answered.has(call.toolCallId ?? '') || validate(call.input).length > 0) return null;
        return { value: call.input as Record<string, unknown>, text: jsonText(call.input) };
      }
      return null;
    },
  };
}

function accepted(value: Record<string, unknown>): OutputVerdict {
  return { ok: true, value, text: jsonText(value) };
}

/** A value as the parent reads it and `result.text` keeps it: JSON indented by 2 spaces. */
export function jsonText(value: unknown): string {
  return JSON.stringify(value, null, 2) ?? 'null';
}

/** The value of a final text that is a JSON object alone, or what keeps it from being one. */
function readJsonAlone(text: string): { value: unknown } | { problem: string } {
  const trimmed = text.trim();
  if (trimmed === '') return { problem: `You ended without giving your result: no call of ${finalResultToolName} and no final text.` };
  if (trimmed.startsWith('```')) {
    return { problem: 'Your final text is in a code fence: a final text counts as your result only when it is the JSON value alone.' };
  }
  if (!trimmed.startsWith('{'))
    return { problem: `You ended without giving your result: no call of ${finalResultToolName}, and your final text is not a JSON object.` };
  let value: unknown;
  try {
    value = JSON.parse(trimmed);
  } catch (error) {
    return { problem: `Your final text is not valid JSON alone (${(error as Error).message}).` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { problem: 'Your final JSON must be an object.' };
  return { value };
}
