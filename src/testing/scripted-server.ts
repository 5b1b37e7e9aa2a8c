import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { anthropicMessagesWire, countTokensBody } from './anthropic-messages-format.ts';
import { conversationFromRequest } from './conversation.ts';
import { chatCompletionsWire, errorBody } from './openai-chat-format.ts';
import { createResponsesWire } from './openai-responses-format.ts';
import type { RespondFunction, Script, ScriptedFault, ScriptedRequest, ScriptedWire } from './script.ts';
import { createScriptedResponder, type ScriptedReply } from './scripted-responder.ts';
import { formatEvent, WireInputError, type WireFormat, type WireRequest } from './wire-format.ts';

/** Options of {@link startScriptedServer}. */
export interface ScriptedServerOptions {
  /** The rules to answer with, or a function deciding each reply. */
  script: Script | RespondFunction;
  /** The port to listen on; 0 picks a free one. @default 0 */
  port?: number;
  /** Only the loopback address: a scripted model has no business on a network. @default '127.0.0.1' */
  host?: '127.0.0.1';
  /** Called with each model request (of any wire) once its reply is chosen, e.g. to log it. */
  onRequest?: (request: ScriptedRequest, reply: { rule: number | undefined }) => void;
}

/** An HTTP request as the server received it, whatever its route; headers are not kept, so no key is. */
export interface ReceivedRequest {
  method: string;
  /** The path without the query string, e.g. `/v1/messages`. */
  path: string;
  /** The JSON body, or undefined when there was none or it was not JSON. */
  body: unknown;
}

/** A running scripted model server. */
export interface ScriptedServer {
  /** `http://127.0.0.1:<port>`: what Claude Code's `ANTHROPIC_BASE_URL` wants. */
  url: string;
  /** `url` + `/v1`: the base URL OpenAI clients, the AI SDK's providers and Codex's `base_url` want. */
  baseURL: string;
  /** Every model request received (on any wire), in arrival order. */
  requests: ScriptedRequest[];
  /** Every HTTP request received, model requests or not, in arrival order. */
  received: ReceivedRequest[];
  /** Stops listening and drops open connections; pending delays end with them. Safe to call twice. */
  close(): Promise<void>;
}

const modelList = {
  // Both OpenAI's list shape and Anthropic's, so that either client reads one model.
  object: 'list',
  data: [{ id: 'scripted', object: 'model', created: 0, owned_by: 'cadre', type: 'model', display_name: 'Scripted', created_at: '1970-01-01T00:00:00Z' }],
  has_more: false,
  first_id: 'scripted',
  last_id: 'scripted',
};

const wireNames: Record<ScriptedWire, string> = {
  'chat-completions': 'chat completions',
  messages: 'messages',
  responses: 'responses',
};

/**
 * Starts a model server that answers from a script on three wires at once:
 * OpenAI's Chat Completions (`POST /v1/chat/completions`), Anthropic's Messages
 * (`POST /v1/messages`, and `POST /v1/messages/count_tokens`) and OpenAI's Responses
 * (`POST /v1/responses`), each streaming and not, with `GET /v1/models` for all.
 * @throws {z.ZodError} when the script is invalid
 * @example
 * const server = await startScriptedServer({ script: [{ turns: [{ text: 'Hello.' }] }] });
 * const provider = createOpenAICompatible({ name: 'scripted', baseURL: server.baseURL, apiKey: 'test' });
 * // or createAnthropic({ baseURL: server.baseURL, apiKey: 'test' }), createOpenAI({ baseURL: server.baseURL, apiKey: 'test' })
 * // ... then: await server.close();
 */
export async function startScriptedServer(options: ScriptedServerOptions): Promise<ScriptedServer> {
  const { script, port = 0, host = '127.0.0.1', onRequest } = options;
  const respond = createScriptedResponder(script);
  const requests: ScriptedRequest[] = [];
  const received: ReceivedRequest[] = [];
  const wires: Record<string, WireFormat> = {
    '/v1/chat/completions': chatCompletionsWire,
    '/v1/messages': anthropicMessagesWire,
    '/v1/responses': createResponsesWire(),
  };
  let responseCount = 0;

  async function handleModelRequest(wire: WireFormat, body: unknown, request: IncomingMessage, response: ServerResponse, signal: AbortSignal): Promise<void> {
    let parsed: WireRequest;
    try {
      parsed = wire.parse(body);
    } catch (error) {
      const status = error instanceof WireInputError ? 404 : 400;
      sendJson(response, status, wire.errorBody(`Invalid ${wireNames[wire.wire]} request: ${errorDetail(error)}`, undefined, status));
      return;
    }
    requests.push(parsed.request);
    let reply: ScriptedReply;
    try {
      reply = await respond(conversationFromRequest(parsed.request));
    } catch (error) {
      sendJson(response, 500, wire.errorBody(`The respond function failed: ${(error as Error).message}`, undefined, 500));
      return;
    }
    onRequest?.(parsed.request, { rule: reply.rule });
    if (reply.delayMs > 0) await sleep(reply.delayMs, undefined, { signal });
    const { fault } = reply;
    if (fault !== undefined && (!parsed.request.stream || fault.after_chars === undefined)) {
      await misbehave(fault, response, signal);
      return;
    }
    if (reply.error !== undefined) {
      const { status, type, retry_after, retry_after_ms } = reply.error;
      // A provider that echoes the credential it was sent, as some do in their error messages.
      const credential = request.headers.authorization ?? request.headers['x-api-key'];
      const message = reply.error.message.replaceAll('{{authorization}}', String(credential ?? ''));
      const headers: Record<string, string> = {};
      if (retry_after !== undefined) headers['retry-after'] = String(retry_after);
      if (retry_after_ms !== undefined) headers['retry-after-ms'] = String(retry_after_ms);
      sendJson(response, status, wire.errorBody(message, type, status), headers);
      return;
    }
    responseCount++;
    if (!parsed.request.stream) {
      sendJson(response, 200, wire.responseBody(reply, responseCount, parsed));
      return;
    }
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    let deltas = 0;
    let sentCharacters = 0;
    for (const [index, event] of wire.streamEvents(reply, responseCount, parsed).entries()) {
      if (fault !== undefined && index > 0 && sentCharacters >= (fault.after_chars ?? 0)) {
        await misbehave(fault, response, signal);
        return;
      }
      if (event.isDelta && deltas++ > 0 && reply.chunkDelayMs > 0) await sleep(reply.chunkDelayMs, undefined, { signal });
      sentCharacters += event.characters;
      response.write(formatEvent(event));
    }
    response.end(wire.streamEnd);
  }

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const disconnect = new AbortController();
    // 'close' before the response finished means the client went away: stop waiting on its behalf.
    response.on('close', () => {
      if (!response.writableFinished) disconnect.abort();
    });
    const path = new URL(request.url ?? '/', 'http://localhost').pathname.replace(/\/+$/, '');
    const method = request.method ?? 'GET';
    try {
      const text = await readBody(request);
      const body = jsonOrUndefined(text);
      received.push({ method, path, body });
      const wire = wires[path];
      if (method === 'POST' && wire !== undefined) {
        if (body === undefined) sendJson(response, 400, wire.errorBody(`The request body is not JSON: ${JSON.stringify(text.slice(0, 80))}`, undefined, 400));
        else await handleModelRequest(wire, body, request, response, disconnect.signal);
      } else if (method === 'POST' && path === '/v1/messages/count_tokens') {
        countTokens(body, response);
      } else if ((method === 'GET' || method === 'HEAD') && (path === '/v1/models' || path.startsWith('/v1/models/'))) {
        const id = path.slice('/v1/models/'.length);
        sendJson(response, 200, id === '' ? modelList : { ...modelList.data[0], id });
      } else if (method === 'HEAD' && (path === '' || path === '/v1')) {
        // Clients probe the base URL to see that something answers.
        response.writeHead(200).end();
      } else {
        sendJson(response, 404, errorBody(`No route for ${method} ${path}`, undefined, 404));
      }
    } catch (error) {
      if (disconnect.signal.aborted) return;
      if (!response.headersSent) sendJson(response, 500, errorBody((error as Error).message, undefined, 500));
      else response.destroy(error as Error);
    }
  }

  const server = createServer((request, response) => void handle(request, response));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const url = `http://${host}:${(server.address() as AddressInfo).port}`;
  let closed: Promise<void> | undefined;
  return {
    url,
    baseURL: `${url}/v1`,
    requests,
    received,
    close() {
      closed ??= new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        // Keep-alive and streaming connections would otherwise hold close() open indefinitely.
        server.closeAllConnections();
      });
      return closed;
    },
  };
}

async function readBody(request: IncomingMessage): Promise<string> {
  let body = '';
  request.setEncoding('utf8');
  for await (const chunk of request) body += chunk;
  return body;
}

function sendJson(response: ServerResponse, status: number, body: object, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  response.writeHead(status, { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  response.end(text);
}

/** A fault: drop the connection at once, or keep it open and silent until the client gives up. */
async function misbehave(fault: ScriptedFault, response: ServerResponse, signal: AbortSignal): Promise<void> {
  if (fault.type === 'reset') {
    if (!response.headersSent) {
      response.socket?.resetAndDestroy();
      return;
    }
    // Mid-stream: let the client read what was sent, then close without ending the response.
    await new Promise<void>((resolve) => response.write('', () => resolve()));
    await sleep(20);
    response.socket?.destroy();
    return;
  }
  if (signal.aborted) return;
  await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}

function jsonOrUndefined(text: string): unknown {
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function errorDetail(error: unknown): string {
  return error instanceof z.ZodError ? z.prettifyError(error) : (error as Error).message;
}

function countTokens(body: unknown, response: ServerResponse): void {
  let counted: object;
  try {
    counted = countTokensBody(body);
  } catch (error) {
    sendJson(response, 400, anthropicMessagesWire.errorBody(`Invalid count_tokens request: ${errorDetail(error)}`, undefined, 400));
    return;
  }
  sendJson(response, 200, counted);
}
