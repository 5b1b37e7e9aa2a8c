import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Cadre } from '../../runtime/create-cadre.ts';
import type { CadreEvent } from '../../runs/run-bus.ts';
import type { ApprovalRecord } from '../../store/records.ts';

/** Options of {@link createMcpHub}. */
export interface McpHubOptions {
  cadre: Cadre;
  /** The parent session `cadre mcp` serves. */
  sessionId: string;
  onError?: (error: unknown) => void;
}

/**
 * What the connections of one `cadre mcp` share: the notifications of the session's background
 * runs (an MCP log message to each connected client, marked delivered once sent; kept until a
 * client is there) and asks for approval, which go to a client that
 * can answer them (elicitation) while they also wait in cadre's queue (`cadre approvals`, the
 * dashboard, `cadre approve`): the first answer wins.
 */
export interface McpHub {
  /** Adds a connection; returns its removal. */
  add(server: Server): () => void;
  /** Connections open now. */
  readonly size: number;
  close(): void;
}

/** Creates the {@link McpHub} of one `cadre mcp` process. */
export function createMcpHub({ cadre, sessionId, onError = () => {} }: McpHubOptions): McpHub {
  const servers = new Set<Server>();
  /** Asks put to a client now; an answer from elsewhere withdraws the question. */
  const asking = new Map<string, AbortController>();

  // Background runs' notifications wait in the store until a client is connected to hear them;
  // they are marked delivered once sent, so a host that was away hears them when it comes back.
  const inbox = cadre.notifications(sessionId);
  const stop = new AbortController();
  let delivering = Promise.resolve();

  function deliver(): Promise<void> {
    delivering = delivering
      .then(async () => {
        const ready = [...servers].filter((server) => server.transport !== undefined && server.getClientVersion() !== undefined);
        if (ready.length === 0) return;
        const messages = await inbox.take();
        if (messages.length === 0) return;
        for (const message of messages) {
          const data = typeof message.content === 'string' ? message.content : JSON.stringify(message.content);
          await Promise.all(ready.map((server) => server.sendLoggingMessage({ level: 'notice', logger: 'cadre', data }).catch(onError)));
        }
        await inbox.ack();
      })
      .catch(onError);
    return delivering;
  }

  async function watch(): Promise<void> {
    while (!stop.signal.aborted) {
      await inbox.wait({ signal: stop.signal }).catch(() => {});
      if (stop.signal.aborted) return;
      await deliver();
      // Nobody to tell yet: look again when a client connects (or in a moment).
      if (servers.size === 0) await new Promise((resolve) => setTimeout(resolve, 1000).unref());
    }
  }
  void watch();

  async function elicit(approval: ApprovalRecord): Promise<void> {
    const server = [...servers].find((candidate) => candidate.getClientCapabilities()?.elicitation !== undefined);
    if (!server || asking.has(approval.id)) return;
    const controller = new AbortController();
    asking.set(approval.id, controller);
    const reply = await server
      .elicitInput(
        {
          message: `cadre: agent '${approval.agent}' asks to run ${approval.summary} (risk: ${approval.risk}). Allow it?`,
          requestedSchema: {
            type: 'object',
            properties: {
              decision: { type: 'string', title: 'Decision', enum: ['approve', 'deny'], description: 'approve runs the call; deny refuses it' },
              always: { type: 'boolean', title: 'Always', description: 'Apply this answer to the same call for the rest of the session', default: false },
            },
            required: ['decision'],
          },
        },
        { signal: controller.signal, timeout: 24 * 60 * 60 * 1000 },
      )
      .finally(() => asking.delete(approval.id));
    // Declined or dismissed: the ask stays in cadre's queue for someone else (or the timeout).
    if (reply.action !== 'accept' || !reply.content) return;
    const decision = reply.content.decision === 'approve' ? 'approve' : 'deny';
    await cadre.approve(approval.id, { decision, always: reply.content.always === true });
  }

  const listener = (event: CadreEvent) => {
    if (event.type === 'approval' && event.approval.session_id === sessionId) {
      if (event.approval.status === 'pending') elicit(event.approval).catch((error: unknown) => (isAbort(error) ? undefined : onError(error)));
      else asking.get(event.approval.id)?.abort();
    }
  };
  const unsubscribe = cadre.subscribe(listener);

  return {
    add(server) {
      servers.add(server);
      const initialized = server.oninitialized;
      server.oninitialized = () => {
        initialized?.();
        void deliver();
      };
      return () => servers.delete(server);
    },
    get size() {
      return servers.size;
    },
    close() {
      stop.abort();
      unsubscribe();
      for (const controller of asking.values()) controller.abort();
      servers.clear();
    },
  };
}

function isAbort(error: unknown): boolean {
  return error instanceof Error && (error.name === 'AbortError' || /abort/i.test(error.message));
}
