import type { ScriptedRequest } from './script.ts';

/**
 * What answering a request reads from it. Implementations work out each part only when asked,
 * because the in-process model must stay cheap when a script needs little of the request.
 */
export interface Conversation {
  /** The number of assistant messages after the last user message. */
  readonly turn: number;
  system(): string;
  firstUserText(): string;
  lastUserText(): string;
  hasTool(name: string): boolean;
  /** How many user messages the conversation holds; makes default tool call ids unique. */
  userMessageCount(): number;
  /** Characters of the system message and all message contents, to estimate input tokens. */
  inputCharacters(): number;
  /** The whole request, for a respond function. */
  request(): ScriptedRequest;
}

/** The turn index of a conversation, given a way to read each message's role. */
export function countTurn(length: number, roleAt: (index: number) => string): number {
  let turn = 0;
  for (let index = length - 1; index >= 0; index--) {
    const role = roleAt(index);
    if (role === 'user') break;
    if (role === 'assistant') turn++;
  }
  return turn;
}

/** A conversation over a request already converted in full (the HTTP server records them anyway). */
export function conversationFromRequest(request: ScriptedRequest): Conversation {
  const { messages } = request;
  const firstUser = messages.find((message) => message.role === 'user');
  const lastUser = messages.findLast((message) => message.role === 'user');
  return {
    turn: request.turn,
    system: () => request.system,
    firstUserText: () => firstUser?.content ?? '',
    lastUserText: () => lastUser?.content ?? '',
    hasTool: (name) => request.tools.includes(name),
    userMessageCount: () => messages.filter((message) => message.role === 'user').length,
    inputCharacters: () => messages.reduce((total, message) => total + message.content.length, request.system.length),
    request: () => request,
  };
}
