import type { LanguageModel, ModelMessage, ToolSet } from 'ai';
import type { AgentDefinition } from '../agents/agent-definition.ts';
import type { ToolPolicy } from '../approvals/tool-policy.ts';
import type { ToolMiddleware } from '../loop/tool-pipeline.ts';
import type { AgentTools } from '../mcp/client/agent-tools.ts';
import type { ModelCatalog } from '../models/model-catalog.ts';
import type { RunActivity } from '../runs/activity.ts';
import type { MessageRecord, RunRecord, Usage } from '../store/records.ts';
import type { Store } from '../store/store.ts';

/** What a run's loop needs, looked up when it starts. */
export interface RunSetup {
  model: LanguageModel;
  instructions: string;
  tools: ToolSet;
  /** The tool pipeline's entries for these tools (input check, permission, redaction, stop). @default none */
  toolMiddleware?: readonly ToolMiddleware[];
  /** Messages that reached the child session while the run works (notifications of its own runs). */
  takeInjectedMessages?: () => ModelMessage[] | Promise<ModelMessage[]>;
  /**
   * The child session's stored messages, read once the setup opened its inbox (with the setup's
   * own reads, in one round trip on a database server). @default read after the setup
   */
  history?: Promise<MessageRecord[]>;
  /** Called once the loop is over, whatever the outcome. */
  finish?: () => Promise<void>;
  /**
   * Summarizes a final text too long for the parent (`summarize.enabled`); resolves null when the
   * text needs none. Its tokens count in the run's usage. @default no summaries
   */
  summarize?: (text: string, signal: AbortSignal) => Promise<RunSummary | null>;
}

/** A summary of a run's result for its parent, or why there is none. */
export interface RunSummary {
  summary: string | null;
  /** Why there is no summary (it failed or took too long). */
  error: string | null;
  usage: Usage;
}

/** What a run's setup can do to the run while it works. */
export interface RunLive {
  /** Shows what the run is doing as its activity (throttled like every activity line). */
  setActivity(activity: RunActivity): void;
  /**
   * Writes the step's events held for the end of the event-loop turn now, so that an event written
   * straight to the run next (an ask for approval) is stored after them, in the order they happened.
   */
  writePending(): void;
}

/** Looks up what a run's loop needs when it starts; throws a short error when it cannot. */
export type SetUpRun = (run: RunRecord, signal: AbortSignal, live: RunLive) => RunSetup | Promise<RunSetup>;

/** The inbox of a run's child session: notifications of its own runs wait there for its loop. */
export interface RunInbox {
  open(sessionId: string): void;
  /** Ends the loop's turn at the inbox; returns what it did not take (each stored by `onTaken`). */
  close(sessionId: string): Array<{ onTaken?: () => Promise<unknown> }>;
  /** Takes what waits, storing each message as it joins the conversation. */
  take(sessionId: string): ModelMessage[] | Promise<ModelMessage[]>;
}

/** Options of {@link createRunSetup}. */
export interface RunSetupOptions {
  store: Pick<Store, 'getSession' | 'listMessages'>;
  agent: (name: string) => AgentDefinition | undefined;
  models: Pick<ModelCatalog, 'modelFor' | 'agentModel'>;
  tools: AgentTools;
  policy: ToolPolicy;
  inbox: RunInbox;
  /** The primary session a session belongs to (asks and "always" rules are per primary session). */
  primarySessionOf: (sessionId: string) => Promise<string>;
  /**
   * The delegation tools of a run that may start runs of its own (below `maxDepth`), and of a fork of
   * its parent's own agent (`forksParent`), which keeps its parent's tools; none otherwise.
   */
  delegationTools: (run: RunRecord, fork: { forksParent: boolean }) => ToolSet | undefined;
  /** Summarizes a result too long for the parent. @default no summaries */
  summarize?: (run: RunRecord, text: string, model: LanguageModel, signal: AbortSignal, setActivity: RunLive['setActivity']) => Promise<RunSummary | null>;
  onError: (error: unknown) => void;
}

/**
 * The setup of every run of a runtime: its agent, model, tools (the workspace's, MCP servers' and,
 * below the depth cap, delegation), the tool pipeline, and its child session's inbox and history.
 */
export function createRunSetup(options: RunSetupOptions): SetUpRun {
  const { store, inbox, models } = options;
  return async function setUpRun(run, _signal, live) {
    const agent = options.agent(run.agent);
    if (!agent) throw new Error(`Agent '${run.agent}' is no longer defined.`);
    const childId = run.child_session_id;
    // The inbox opens before the history is read, so a notification from now on waits for the
    // loop; the history and the sessions are read together (on a database server each is a
    // round trip every run starting waits for).
    inbox.open(childId);
    const history = store.listMessages(childId);
    history.catch(() => {});
    try {
      // A fork reads its parent session too: a fork of the parent's own agent keeps its tools.
      const [session, sessionId, parent] = await Promise.all([
        store.getSession(childId),
        options.primarySessionOf(run.parent_session_id),
        run.forked_from ? store.getSession(run.parent_session_id) : undefined,
      ]);
      const workspace = options.tools.select(agent, await options.tools.available(agent));
      const tools: ToolSet = { ...workspace, ...options.delegationTools(run, { forksParent: parent?.agent === run.agent }) };
      const model = models.modelFor(models.agentModel(agent) ?? session?.model);
      const summarize = options.summarize;
      return {
        model,
        instructions: withNotices(agent.system, options.tools.notices(agent)),
        tools,
        toolMiddleware: options.policy.pipelineFor(agent, workspace, {
          sessionId,
          runId: run.id,
          setActivity: live.setActivity,
          writePending: live.writePending,
        }),
        takeInjectedMessages: () => inbox.take(childId),
        history,
        ...(summarize ? { summarize: (text: string, signal: AbortSignal) => summarize(run, text, model, signal, live.setActivity) } : {}),
        finish: async () => {
          for (const entry of inbox.close(childId)) await entry.onTaken?.();
        },
      };
    } catch (error) {
      // No loop runs: what reached the inbox meanwhile is stored now.
      for (const entry of inbox.close(childId)) await entry.onTaken?.().catch(options.onError);
      throw error;
    }
  };
}

/** The agent's prompt with what it should know about its tools (an MCP server that did not start). */
export function withNotices(system: string, notices: readonly string[]): string {
  return notices.length === 0 ? system : `${system}\n\n${notices.map((notice) => `Note: ${notice}`).join('\n')}`;
}
