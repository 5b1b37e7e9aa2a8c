import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Cadre } from '../../runtime/create-cadre.ts';
import type { CadreEvent } from '../../runs/run-bus.ts';
import type { ApprovalRecord, RunRecord } from '../../store/records.ts';

/** Options of {@link createMcpHub}. */
export interface McpHubOptions {
  cadre: Cadre;
  /** The parent session `cadre mcp` serves. */
  sessionId: string;
  onError?: (error: unknown) => void;
}

/**
 * What the connections of one `cadre mcp` share: announcements of finished runs of the session
 * (an MCP log message to each connected client) and asks for approval, which go to a client that
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

  function announce(run: RunRecord): void {
    const data = `Run ${run.id} (${run.agent}: ${run.description}) ended ${run.status}. Read it with agent_output, run_id: ${run.id}.`;
    for (const server of servers) {
      server.sendLoggingMessage({ level: 'notice', logger: 'cadre', data }).catch(onError);
    }
  }

  async function elicit(approval: ApprovalRecord): Promise<void> {
    const server = [...servers].find((candidate) => candidate.getClientCapabilities()?.elicitation !== undefined);
    if (!server || asking.has(approval.id)) return;
    const controller = new AbortController();
    asking.set(approval.id, controller);
    const reply = await server.elicitInput({
      message: `cadre: agent '${approval.agent}' asks to run ${approval.summary} (risk: ${approval.risk}). Allow it?`,
      requestedSchema: {
        type: 'object',
        properties: {
          decision: { type: 'string', title: 'Decision', enum: ['approve', 'deny'], description: 'approve runs the call; deny refuses it' },
          always: { type: 'boolean', title: 'Always', description: 'Apply this answer to the same call for the rest of the session', default: false },
        },
        required: ['decision'],
      },
    }, { signal: controller.signal, timeout: 24 * 60 * 60 * 1000 }).finally(() => asking.delete(approval.id));
    // Declined or dismissed: the ask stays in cadre's queue for someone else (or the timeout).
    if (reply.action !== 'accept' || !reply.content) return;
    const decision = reply.content.decision === 'approve' ? 'approve' : 'deny';
    await cadre.approve(approval.id, { decision, always: reply.content.always === true });
  }

  const listener = (event: CadreEvent) => {
    if (event.type === 'run-event' && event.event.type === 'run-end' && event.run.parent_session_id === sessionId) announce(event.run);
    if (event.type === 'approval' && event.approval.session_id === sessionId) {
      if (event.approval.status === 'pending') elicit(event.approval).catch((error: unknown) => (isAbort(error) ? undefined : onError(error)));
      else asking.get(event.approval.id)?.abort();
    }
  };
  const unsubscribe = cadre.subscribe(listener);

  return {
    add(server) {
      servers.add(server);
      return () => servers.delete(server);
    },
    get size() {
      return servers.size;
    },
    close() {
      unsubscribe();
      for (const controller of asking.values()) controller.abort();
      servers.clear();
    },
  };
}

function isAbort(error: unknown): boolean {
  return error instanceof Error && (error.name === 'AbortError' || /abort/i.test(error.message));
}
