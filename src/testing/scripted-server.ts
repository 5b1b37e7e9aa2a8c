import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { conversationFromRequest } from './conversation.ts';
import { completionBody, errorBody, parseChatRequest, streamChunks } from './openai-chat-format.ts';
import type { RespondFunction, Script, ScriptedFault, ScriptedRequest } from './script.ts';
import { createScriptedResponder, type ScriptedReply } from './scripted-responder.ts';

/** Options of {@link startScriptedServer}. */
export interface ScriptedServerOptions {
  /** The rules to answer with, or a function deciding each reply. */
  script: Script | RespondFunction;
  /** The port to listen on; 0 picks a free one. @default 0 */
  port?: number;
  /** Only the loopback address: a scripted model has no business on a network. @default '127.0.0.1' */
  host?: '127.0.0.1';
  /** Called with each chat request once its reply is chosen, e.g. to log it. */
  onRequest?: (request: ScriptedRequest, reply: { rule: number | undefined }) => void;
}

/** A running scripted Chat Completions server. */
export interface ScriptedServer {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** `url` + `/v1`, the base URL an OpenAI-compatible client wants. */
  baseURL: string;
  /** Every chat request received, in arrival order. */
  requests: ScriptedRequest[];
  /** Stops listening and drops open connections; pending delays end with them. Safe to call twice. */
  close(): Promise<void>;
}

/**
 * Starts an OpenAI-compatible Chat Completions server that answers from a script:
 * `POST /v1/chat/completions` (streaming and not) and `GET /v1/models`.
 * @throws {z.ZodError} when the script is invalid
 * @example
 * const server = await startScriptedServer({ script: [{ turns: [{ text: 'Hello.' }] }] });
 * const provider = createOpenAICompatible({ name: 'scripted', baseURL: server.baseURL, apiKey: 'test' });
 * // ... then: await server.close();
 */
export async function startScriptedServer(options: ScriptedServerOptions): Promise<ScriptedServer> {
  const { script, port = 0, host = '127.0.0.1', onRequest } = options;
  const respond = createScriptedResponder(script);
  const requests: ScriptedRequest[] = [];
  let responseCount = 0;

  async function handleChat(request: IncomingMessage, response: ServerResponse, signal: AbortSignal): Promise<void> {
    let parsed;
    try {
      parsed = parseChatRequest(JSON.parse(await readBody(request)));
    } catch (error) {
      const detail = error instanceof z.ZodError ? z.prettifyError(error) : (error as Error).message;
      sendJson(response, 400, errorBody(`Invalid chat completions request: ${detail}`, 'invalid_request_error'));
      return;
    }
    requests.push(parsed.request);
    let reply: ScriptedReply;
    try {
      reply = await respond(conversationFromRequest(parsed.request));
    } catch (error) {
      sendJson(response, 500, errorBody(`The respond function failed: ${(error as Error).message}`, 'server_error'));
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
      const message = reply.error.message.replaceAll('{{authorization}}', request.headers.authorization ?? '');
      const headers: Record<string, string> = {};
      if (retry_after !== undefined) headers['retry-after'] = String(retry_after);
      if (retry_after_ms !== undefined) headers['retry-after-ms'] = String(retry_after_ms);
      sendJson(response, status, errorBody(message, type), headers);
      return;
    }
    responseCount++;
    const id = `chatcmpl-scripted-${responseCount}`;
    const model = parsed.request.model;
    if (!parsed.request.stream) {
      sendJson(response, 200, completionBody(reply, id, model));
      return;
    }
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    let deltas = 0;
    let sentCharacters = 0;
    for (const [index, chunk] of streamChunks(reply, id, model, parsed.includeUsage).entries()) {
      if (fault !== undefined && index > 0 && sentCharacters >= (fault.after_chars ?? 0)) {
        await misbehave(fault, response, signal);
        return;
      }
      if (chunk.isDelta && deltas++ > 0 && reply.chunkDelayMs > 0) await sleep(reply.chunkDelayMs, undefined, { signal });
      sentCharacters += textLength(chunk.body);
      response.write(`data: ${JSON.stringify(chunk.body)}\n\n`);
    }
    response.end('data: [DONE]\n\n');
  }

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const disconnect = new AbortController();
    // 'close' before the response finished means the client went away: stop waiting on its behalf.
    response.on('close', () => {
      if (!response.writableFinished) disconnect.abort();
    });
    const path = new URL(request.url ?? '/', 'http://localhost').pathname.replace(/\/+$/, '');
    try {
      if (request.method === 'POST' && path === '/v1/chat/completions') {
        await handleChat(request, response, disconnect.signal);
      } else if (request.method === 'GET' && path === '/v1/models') {
        sendJson(response, 200, { object: 'list', data: [{ id: 'scripted', object: 'model', created: 0, owned_by: 'cadre' }] });
      } else {
        sendJson(response, 404, errorBody(`No route for ${request.method} ${path}`, 'invalid_request_error'));
      }
    } catch (error) {
      if (disconnect.signal.aborted) return;
      if (!response.headersSent) sendJson(response, 500, errorBody((error as Error).message, 'server_error'));
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

/** Characters of text content in a stream chunk. */
function textLength(body: object): number {
  const choices = (body as { choices?: Array<{ delta?: { content?: unknown } }> }).choices ?? [];
  const content = choices[0]?.delta?.content;
  return typeof content === 'string' ? content.length : 0;
}
