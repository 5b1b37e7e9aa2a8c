/**
 * `cadre/testing`: a scripted model for deterministic tests of agents, as an HTTP server (OpenAI
 * Chat Completions, Anthropic Messages and OpenAI Responses at once) or as an in-process AI SDK
 * model, all driven by the same script.
 * @module
 */

// First, so that an unsupported Node gets one clear line rather than a failure deep inside.
import '../util/require-supported-node.ts';

export { loadScript } from './load-script.ts';
export {
  parseScript,
  scriptSchema,
  type RespondFunction,
  type Script,
  type ScriptMatch,
  type ScriptRule,
  type ScriptedError,
  type ScriptedFault,
  type ScriptedMessage,
  type ScriptedRequest,
  type ScriptedToolCall,
  type ScriptedTurn,
  type ScriptedUsage,
  type ScriptedWire,
} from './script.ts';
export { scriptedLanguageModel, type ScriptedLanguageModelOptions } from './scripted-language-model.ts';
export { startScriptedServer, type ReceivedRequest, type ScriptedServer, type ScriptedServerOptions } from './scripted-server.ts';
