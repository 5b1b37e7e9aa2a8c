import type { Conversation } from './conversation.ts';
import { parseScript, type RespondFunction, type Script, type ScriptedError, type ScriptedFault, type ScriptRule, type ScriptedTurn } from './script.ts';

/** A turn made concrete: every default filled in, text templated, tool arguments encoded. */
export interface ScriptedReply {
  /** Index of the rule that answered; undefined for a respond function or when no rule matched. */
  rule: number | undefined;
  text: string;
  toolCalls: Array<{ id: string; name: string; arguments: string }>;
  delayMs: number;
  chunkSize: number;
  chunkDelayMs: number;
  /** `type` stays as scripted: each wire has its own default for a status. */
  error: ScriptedError | undefined;
  fault: ScriptedFault | undefined;
  /** All input tokens, cached or not. */
  inputTokens: number;
  /** Of `inputTokens`, those read from the prompt cache. */
  cacheReadTokens: number;
  /** Of `inputTokens`, those written to the prompt cache. */
  cacheWriteTokens: number;
  outputTokens: number;
  finishReason: string;
}

/** Answers one conversation; synchronous for scripts so the in-process model stays cheap. */
export type ScriptedResponder = (conversation: Conversation) => ScriptedReply | Promise<ScriptedReply>;

const noMoreTurns: ScriptedTurn = { text: '(script has no more turns)' };

/**
 * Validates a script once and returns the function that answers each request with it.
 * @throws {z.ZodError} when the script is invalid
 */
export function createScriptedResponder(script: Script | RespondFunction): ScriptedResponder {
  if (typeof script === 'function') {
    return async function respondWithFunction(conversation) {
      // A function that runs out of cases (returns nothing) ends the script like a rule without `after`.
      return toReply((await script(conversation.request())) ?? noMoreTurns, conversation, undefined);
    };
  }
  const rules = parseScript(script);
  return function respondWithScript(conversation) {
    const index = rules.findIndex((rule) => matches(rule, conversation));
    if (index === -1) return toReply(noRuleMatches(conversation), conversation, undefined);
    const rule = rules[index];
    const turn = rule.turns[conversation.turn] ?? rule.after ?? noMoreTurns;
    return toReply(turn, conversation, index);
  };
}

function matches(rule: ScriptRule, conversation: Conversation): boolean {
  const { when } = rule;
  if (when === undefined) return true;
  return (
    (when.system_includes === undefined || conversation.system().includes(when.system_includes)) &&
    (when.user_includes === undefined || conversation.firstUserText().includes(when.user_includes)) &&
    (when.last_user_includes === undefined || conversation.lastUserText().includes(when.last_user_includes)) &&
    (when.has_tool === undefined || conversation.hasTool(when.has_tool))
  );
}

function noRuleMatches(conversation: Conversation): ScriptedTurn {
  const lastUser = conversation.lastUserText().slice(0, 80);
  return {
    error: {
      status: 400,
      message: `No script rule matches this request (turn ${conversation.turn}, last user message: ${JSON.stringify(lastUser)}). Add a rule without \`when\` as a fallback.`,
    },
  };
}

function toReply(turn: ScriptedTurn, conversation: Conversation, rule: number | undefined): ScriptedReply {
  let text = turn.text ?? '';
  if (text.includes('{{task}}')) text = text.replaceAll('{{task}}', conversation.firstUserText());
  let idPrefix: string | undefined;
  const toolCalls = (turn.tool_calls ?? []).map((call, index) => ({
    id: call.id ?? `${(idPrefix ??= `call_${conversation.userMessageCount()}_${conversation.turn}`)}_${index}`,
    name: call.name,
    arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments),
  }));
  const inputTokens = turn.usage?.input_tokens ?? Math.ceil(conversation.inputCharacters() / 4);
  const cacheReadTokens = Math.min(turn.usage?.cache_read_input_tokens ?? 0, inputTokens);
  let outputCharacters = text.length;
  for (const call of toolCalls) outputCharacters += call.name.length + call.arguments.length;
  return {
    rule,
    text,
    toolCalls,
    delayMs: turn.delay_ms ?? 0,
    // A respond function is not validated per call, so guard against a chunk size that never advances.
    chunkSize: Math.max(1, Math.floor(turn.chunk_size ?? 20)),
    chunkDelayMs: turn.chunk_delay_ms ?? 0,
    error: turn.error,
    fault: turn.fault,
    inputTokens,
    // A respond function is not validated, so keep the cache counts within the input tokens.
    cacheReadTokens,
    cacheWriteTokens: Math.min(turn.usage?.cache_creation_input_tokens ?? 0, inputTokens - cacheReadTokens),
    outputTokens: turn.usage?.output_tokens ?? Math.ceil(outputCharacters / 4),
    finishReason: turn.finish_reason ?? (toolCalls.length > 0 ? 'tool_calls' : 'stop'),
  };
}
